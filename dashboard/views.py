"""The dashboard's own pages: the overview (every app's state at a glance), the task runs and the
diagnostics (internal figures, off the overview).

Every other page belongs to its app (``<app>/views.py``, wired in ``dashboard/urls.py``); the
dashboard keeps the overview, the navigation (``dashboard/nav.py``) and the base templates. Figures
are Plotly dicts (``hami_sim.pages.figures``) rendered by our own ``plotly.min.js``.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Sum
from django.db.models.functions import TruncHour
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from decisions.models import AutoscalerStatus, CAEvent, Decision
from decisions.tables import DecisionTable
from hami_sim.pages import figures
from hami_sim.pages.access import dashboard_view
from hami_sim.pages.lists import choice, list_page, paginate
from hami_sim.runtime.models import RejectedObject, TaskRun
from profiles import hami_install
from profiles.filtersets import TaskRunFilterSet
from profiles.models import DriftFinding, NodeGroup, NodeInventory
from profiles.tables import NodeGroupTable, node_groups
from usage import blindspot, invisible
from usage import summary as usage_summary

from .tables import RejectedObjectTable, TaskRunTable

__all__ = ["overview", "task_run_list", "diagnostics"]

#: The overview's time ranges (the charts' window) and auto-refresh periods, as Grafana offers them.
RANGES = {"1h": 1, "6h": 6, "24h": 24, "7d": 168}
REFRESH = {"off": 0, "30s": 30, "1m": 60, "5m": 300}


def _sync_errors() -> list[dict]:
    """The latest run of each task when it failed, plus stale inventories (last good read kept)."""
    errors = []
    for task in TaskRun.objects.values_list("task", flat=True).distinct():
        last = TaskRun.objects.filter(task=task).exclude(outcome=TaskRun.Outcome.RUNNING).first()
        if last is not None and last.outcome == TaskRun.Outcome.FAILURE:
            errors.append({"task": task, "at": last.started_at, "error": last.error})
    stale = NodeInventory.objects.filter(stale=True, gone_at__isnull=True)
    count = stale.count()
    if count:
        first = stale.exclude(sync_error="").first()
        errors.append(
            {
                "task": "inventory",
                "at": None,
                "error": f"{count} node inventories are stale: {first.sync_error if first else ''}",
            }
        )
    return errors


def _group_usage() -> list[tuple[str, usage_summary.Totals]]:
    """Allocated vs registered per node group over its live nodes (cold groups: empty totals)."""
    members: dict[str, list] = {name: [] for name in NodeGroup.objects.values_list("name", flat=True)}
    live = NodeInventory.objects.filter(gone_at__isnull=True, node_group__isnull=False)
    for group, name, devices in live.values_list("node_group__name", "name", "devices").iterator(
        chunk_size=500
    ):
        members.setdefault(group, []).append((name, devices))
    return [(group, usage_summary.totals(nodes)) for group, nodes in sorted(members.items())]


def _blind_groups(result, limit: int = 10) -> dict:
    """The invisible pods, identical ones grouped, for the overview: the first ``limit`` rows and how
    many more the full list (``/blind-spot/``) has."""
    groups = invisible.grouped(invisible.invisible_rows(result))
    return {"blind_groups": groups[:limit], "blind_more": max(0, len(groups) - limit)}


def _charts(since, now) -> dict:
    """The decisions per hour by verdict and the top rejection reasons since ``since``, and the
    usage per node group."""
    decisions = Decision.objects.defer("nodes", "request", "policies", "pod_spec").filter(
        last_seen__gte=since
    )
    over_time = list(
        decisions.annotate(hour=TruncHour("last_seen"))
        .values_list("hour", "verdict")
        .annotate(n=Sum("count"))
        .order_by("hour")
    )
    reasons = list(
        decisions.exclude(verdict=Decision.Verdict.FIT)
        .exclude(top_reason="")
        .values_list("top_reason")
        .annotate(n=Sum("count"))
        .order_by("-n")[:8]
    )
    group_usage = _group_usage()
    return {
        "over_time": figures.decisions_over_time(over_time, window=(since, now)),
        "answered": any(over_time),
        "group_usage": figures.group_usage(group_usage) if group_usage else None,
        "reasons_fig": figures.top_reasons(reasons) if reasons else None,
    }


def _totals() -> dict:
    decisions = Decision.objects.defer("nodes", "request", "policies", "pod_spec")
    return {
        "decisions": decisions.count(),
        "asked": decisions.aggregate(n=Sum("count"))["n"] or 0,
        "events": CAEvent.objects.count(),
        "groups": NodeGroup.objects.count(),
        "open_drift": DriftFinding.objects.filter(resolved_at__isnull=True).count(),
    }


@dashboard_view
def overview(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    window = choice(request, "range", RANGES, "24h")
    refresh = choice(request, "refresh", REFRESH, "off")
    recent = Decision.objects.defer("nodes", "request", "policies", "pod_spec")
    blind = blindspot.report_or_none()
    context = {
        "totals": _totals(),
        "usage_totals": usage_summary.totals(
            NodeInventory.objects.filter(gone_at__isnull=True)
            .values_list("name", "devices")
            .iterator(chunk_size=500)
        ),
        **_charts(now - timedelta(hours=RANGES[window]), now),
        "recent": paginate(request, DecisionTable(recent), per_page=10, prefix="d-"),
        "groups": paginate(request, NodeGroupTable(node_groups()), per_page=20, prefix="g-"),
        "runs": TaskRunTable(list(TaskRun.objects.all()[:8]), orderable=False),
        "sync_errors": _sync_errors(),
        "hami_release": hami_install.status(),
        "blind": blind,
        **(_blind_groups(blind) if blind is not None else {}),
        "status": AutoscalerStatus.objects.first(),
        "range": window,
        "ranges": list(RANGES),
        "refresh": refresh,
        "refresh_seconds": REFRESH[refresh],
        "refreshes": list(REFRESH),
    }
    return render(request, "dashboard/overview.html", context)


@dashboard_view
def task_run_list(request: HttpRequest) -> HttpResponse:
    """The task runs, then the objects the syncs read but could not store as they were (newest
    first): the operator sees which pod or node, and why."""
    rejected = RejectedObjectTable(list(RejectedObject.objects.all()[:REJECTED_SHOWN]), orderable=False)
    return list_page(
        request,
        "Task runs",
        TaskRun.objects.all(),
        TaskRunFilterSet,
        TaskRunTable,
        "/api/v1/task-runs/",
        template="dashboard/task_runs.html",
        extra={"rejected": rejected},
    )


@dashboard_view
def diagnostics(request: HttpRequest) -> HttpResponse:
    """Internal figures (the extender caches of this process): for tuning, kept off the overview."""
    return render(request, "dashboard/diagnostics.html")


#: the newest rejected objects the task runs page lists
REJECTED_SHOWN = 50

"""Dashboard pages: overview, decisions (pod page), CA events, node groups, nodes, sessions, what-if.

Server-rendered; tables use the same FilterSets as the REST API (NetBox style); figures are Plotly
dicts rendered by our own ``plotly.min.js``. Pages read only; the what-if page computes an estimate
and records it as a ``ui`` decision, nothing else.
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Prefetch, Q, Sum
from django.db.models.functions import TruncHour
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.views.decorators.http import require_POST
from django_tables2 import RequestConfig

from decisions import recorder
from decisions.models import AutoscalerStatus, CAEvent, Decision
from hami_sim.conf import conf
from hami_sim.engine.ca_releases import ca_release
from hami_sim.engine.estimate import EstimateError, GroupTemplate, PendingPods, estimate, parse_expander
from hami_sim.permissions import Caller, caller_of
from hami_sim.runtime.models import TaskRun
from hami_sim.runtime.simulator import get_simulator
from profiles.catemplate import PROVIDERS as CA_TEMPLATE_PROVIDERS
from profiles.catemplate import ca_template
from profiles.models import DeviceProfile, DeviceRow, DriftFinding, NodeGroup, NodeInventory
from profiles.nodetemplates import group_template
from profiles.render import render_devices, render_registration
from simulations import sessions
from simulations.models import SimulationSession
from simulations.sessions import SessionError
from usage import summary as usage_summary
from usage.models import UsageFinding

from . import figures
from .access import dashboard_view
from .explain import (
    answer,
    describe_request,
    node_fit_label,
    node_miss_label,
    outcome,
    request_rows,
    score_note,
)
from .filtersets import (
    CAEventFilterSet,
    DecisionFilterSet,
    DriftFindingFilterSet,
    NodeGroupFilterSet,
    NodeInventoryFilterSet,
    SessionFilterSet,
    TaskRunFilterSet,
    for_people,
)
from .forms import EXAMPLE_POD, SessionCreateForm, WhatIfForm
from .profilediff import diff_versions
from .scores import with_score_bars
from .tables import (
    CAEventTable,
    DecisionTable,
    DriftFindingTable,
    NodeGroupTable,
    NodeInventoryTable,
    SessionPlacementTable,
    SessionTable,
    TaskRunTable,
)

__all__ = [
    "overview",
    "decision_list",
    "decision_detail",
    "pod",
    "event_list",
    "node_group_list",
    "node_group_detail",
    "profile_compare",
    "node_detail",
    "node_list",
    "drift_list",
    "task_run_list",
    "session_list",
    "session_detail",
    "session_action",
    "what_if",
]

PAGE = 25

log = logging.getLogger("hami_sim.dashboard")


def _paginate(request: HttpRequest, table, per_page: int = PAGE, prefix: str = ""):
    if prefix:
        table.prefix = prefix
    RequestConfig(request, paginate={"per_page": per_page}).configure(table)
    return table


def _node_groups():
    now_open = Q(findings__resolved_at__isnull=True, findings__isnull=False)
    return (
        NodeGroup.objects.annotate(
            members=Count("inventories", filter=Q(inventories__gone_at__isnull=True), distinct=True),
            open_drift=Count("findings", filter=now_open, distinct=True),
        )
        .prefetch_related(Prefetch("profiles__devices", queryset=DeviceRow.objects.order_by("position")))
        .order_by("name")
    )


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


#: The overview's time ranges (the charts' window) and auto-refresh periods, as Grafana offers them.
RANGES = {"1h": 1, "6h": 6, "24h": 24, "7d": 168}
REFRESH = {"off": 0, "30s": 30, "1m": 60, "5m": 300}


def _blind_spot():
    """The pods upstream CA cannot see (``usage.blindspot``), or None when it cannot be computed."""
    from usage import blindspot

    try:
        return blindspot.report()
    except Exception:  # the page must render without it (a pod the engine cannot judge, no data)
        log.exception("blind-spot report failed")
        return None


def _blind_rows(result, limit: int = 50) -> list[dict]:
    from usage.blindspot import banner

    return [
        {"view": v, "banner": banner(v), "age": int(result.ages.get(v.pod, 0))}
        for v in result.invisible[:limit]
    ]


def _choice(request: HttpRequest, name: str, choices: dict, default: str) -> str:
    """A query parameter from a fixed set; anything else is the default (never a 400 on a page)."""
    value = request.GET.get(name, default)
    return value if value in choices else default


@dashboard_view
def overview(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    window = _choice(request, "range", RANGES, "24h")
    refresh = _choice(request, "refresh", REFRESH, "off")
    since = now - timedelta(hours=RANGES[window])
    decisions = Decision.objects.defer("nodes", "request", "policies")
    over_time = list(
        decisions.filter(last_seen__gte=since)
        .annotate(hour=TruncHour("last_seen"))
        .values_list("hour", "verdict")
        .annotate(n=Sum("count"))
        .order_by("hour")
    )
    reasons = list(
        decisions.filter(last_seen__gte=since)
        .exclude(verdict=Decision.Verdict.FIT)
        .exclude(top_reason="")
        .values_list("top_reason")
        .annotate(n=Sum("count"))
        .order_by("-n")[:8]
    )
    group_usage = _group_usage()
    recent = _paginate(request, DecisionTable(decisions), per_page=10, prefix="d-")
    groups = _paginate(request, NodeGroupTable(_node_groups()), per_page=20, prefix="g-")
    runs = TaskRunTable(list(TaskRun.objects.all()[:8]), orderable=False)
    blind = _blind_spot()
    context = {
        "totals": {
            "decisions": decisions.count(),
            "asked": decisions.aggregate(n=Sum("count"))["n"] or 0,
            "events": CAEvent.objects.count(),
            "groups": NodeGroup.objects.count(),
            "open_drift": DriftFinding.objects.filter(resolved_at__isnull=True).count(),
        },
        "usage_totals": usage_summary.totals(
            NodeInventory.objects.filter(gone_at__isnull=True)
            .values_list("name", "devices")
            .iterator(chunk_size=500)
        ),
        "over_time": figures.decisions_over_time(over_time, window=(since, now)),
        "answered": any(over_time),
        "group_usage": figures.group_usage(group_usage) if group_usage else None,
        "reasons_fig": figures.top_reasons(reasons) if reasons else None,
        "recent": recent,
        "groups": groups,
        "runs": runs,
        "sync_errors": _sync_errors(),
        "blind": blind,
        "blind_rows": _blind_rows(blind) if blind is not None else [],
        "status": AutoscalerStatus.objects.first(),
        "range": window,
        "ranges": list(RANGES),
        "refresh": refresh,
        "refresh_seconds": REFRESH[refresh],
        "refreshes": list(REFRESH),
    }
    return render(request, "dashboard/overview.html", context)


def _list(
    request: HttpRequest,
    title: str,
    queryset,
    filterset_class,
    table_class,
    api: str = "",
    extra: dict | None = None,
) -> HttpResponse:
    """A filtered, paginated, sortable table; an invalid filter shows an empty table, never a 500."""
    filterset = for_people(filterset_class(request.GET, queryset=queryset))
    table = _paginate(request, table_class(filterset.qs if filterset.is_valid() else queryset.none()))
    if any(request.GET.get(name) not in (None, "") for name in filterset.filters):
        table.empty_text = f"No {title.lower()} match these filters."
    context = {"title": title, "filter": filterset, "table": table, "api": api, **(extra or {})}
    return render(request, "dashboard/list.html", context)


@dashboard_view
def decision_list(request: HttpRequest) -> HttpResponse:
    qs = Decision.objects.defer("nodes", "request", "policies")
    return _list(request, "Decisions", qs, DecisionFilterSet, DecisionTable, "/api/v1/decisions/")


@dashboard_view
def node_list(request: HttpRequest) -> HttpResponse:
    qs = NodeInventory.objects.select_related("node_group").order_by("gone_at", "name")
    return _list(
        request, "Nodes", qs, NodeInventoryFilterSet, NodeInventoryTable, "/api/v1/node-inventories/"
    )


@dashboard_view
def drift_list(request: HttpRequest) -> HttpResponse:
    """Drift findings, and beside them the open findings about pods' allocations (a pod on a device
    its node does not register, an annotation that does not decode), which come from usage."""
    qs = DriftFinding.objects.select_related("inventory")
    usage = UsageFinding.objects.filter(resolved_at__isnull=True)
    shown = list(usage[:_USAGE_FINDINGS_SHOWN])
    more = usage.count() - len(shown) if len(shown) == _USAGE_FINDINGS_SHOWN else 0
    extra = {"usage_findings": shown, "usage_findings_more": more}
    return _list(
        request,
        "Drift findings",
        qs,
        DriftFindingFilterSet,
        DriftFindingTable,
        "/api/v1/drift-findings/",
        extra,
    )


_USAGE_FINDINGS_SHOWN = 100


@dashboard_view
def task_run_list(request: HttpRequest) -> HttpResponse:
    return _list(
        request, "Task runs", TaskRun.objects.all(), TaskRunFilterSet, TaskRunTable, "/api/v1/task-runs/"
    )


def _events_for(decision: Decision):
    q = Q(pod_namespace=decision.pod_namespace, pod_name=decision.pod_name)
    if decision.pod_uid:
        q = Q(pod_uid=decision.pod_uid) | (q & Q(pod_uid=""))
    return CAEvent.objects.filter(q).order_by("-last_seen", "-id")


def _profile_device_ids(groups: set) -> dict[str, set[str]]:
    """Per node group, the device ids its profiles render into a template's registration."""
    out: dict[str, set[str]] = {}
    wanted = NodeGroup.objects.filter(name__in=[g for g in groups if isinstance(g, str)])
    for group in wanted.prefetch_related("profiles__devices"):
        for profile in group.profiles.all():
            rows = [row.as_dict() for row in profile.devices.all()]
            out.setdefault(group.name, set()).update(
                d.id for d in render_devices(group.name, profile.vendor, rows)
            )
    return out


def _source_label(node: dict, live: bool, profile_ids: set[str]) -> str:
    """Where the node's devices came from, as the group page says it: a template whose registration
    hami-sim rendered from the group's profile reads "profile", not "annotation"."""
    source = str(node.get("source") or "")
    ids = {d.get("uuid") for d in node.get("devices") or [] if isinstance(d, dict)}
    if not live and source == "annotation" and ids and ids <= profile_ids:
        return "template from its profile"
    return source


def _grid_context(nodes: list[dict], node_policy: str | None = None) -> dict:
    nodes = with_score_bars([n for n in nodes if isinstance(n, dict)])
    # a live node (one the inventory knows) links to its page; a template node has none
    names = {n.get("name") for n in nodes if isinstance(n.get("name"), str)}
    known = set(NodeInventory.objects.filter(name__in=names).values_list("name", flat=True))
    rendered = _profile_device_ids({n.get("group") for n in nodes if n.get("name") not in known})
    for node in nodes:
        node["fit_label"] = node_fit_label(node)
        node["miss_label"] = node_miss_label(node)
        live = node.get("name") in known
        node["node_url"] = reverse("dashboard:node", args=[node["name"]]) if live else ""
        node["source_label"] = _source_label(node, live, rendered.get(node.get("group"), set()))
    return {
        "grid": figures.device_grid(nodes) if nodes else None,
        "grid_nodes": nodes,
        "grid_truncated": max(0, len(nodes) - figures.GRID_MAX_NODES),
        "score_note": score_note(node_policy),
    }


@dashboard_view
def decision_detail(request: HttpRequest, pk: int) -> HttpResponse:
    decision = get_object_or_404(Decision, pk=pk)
    events = list(_events_for(decision)[:50])
    others = (
        Decision.objects.defer("nodes", "request", "policies")
        .filter(pod_namespace=decision.pod_namespace, pod_name=decision.pod_name)
        .exclude(pk=decision.pk)
    )
    session_url = ""
    if decision.session:
        try:
            session_url = reverse("dashboard:session", args=[uuid.UUID(decision.session)])
        except ValueError:  # a caller-supplied id that is not a session of ours
            session_url = ""
    context = {
        "d": decision,
        "session_url": session_url,
        "answer": answer(decision, events),
        "outcome": outcome(decision, events),
        "containers": [{"index": i, "rows": request_rows(c)} for i, c in enumerate(decision.request or [])],
        "events": events,
        "others": _paginate(request, DecisionTable(others), per_page=10, prefix="o-"),
        **_grid_context(decision.nodes or [], (decision.policies or {}).get("node")),
    }
    return render(request, "dashboard/decision.html", context)


@dashboard_view
def pod(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """A pending HAMi pod: both views (CA's and HAMi's) with the banner when CA cannot see it; else
    the pod's latest decision (what CA's events link to), its events when hami-sim was never asked."""
    from usage.models import PendingPod

    pending = PendingPod.objects.filter(namespace=namespace, name=name).first()
    if pending is not None:
        return _pending_pod(request, pending)
    latest = Decision.objects.filter(pod_namespace=namespace, pod_name=name).only("pk").first()
    if latest is not None:
        return redirect("dashboard:decision", pk=latest.pk)
    if not CAEvent.objects.filter(pod_namespace=namespace, pod_name=name).exists():
        raise Http404(f"no decision or event for pod {namespace}/{name}")
    query = urlencode({"pod_namespace": namespace, "pod_name": name})
    return redirect(f"{reverse('dashboard:events')}?{query}")


def _pending_pod(request: HttpRequest, pending) -> HttpResponse:
    from usage.blindspot import banner

    result = _blind_spot()
    view = result.of(pending.uid) if result is not None else None
    answer = result.groups.get(view.ca_node_group or "(no node group)") if result and view else None
    latest = (
        Decision.objects.filter(pod_namespace=pending.namespace, pod_name=pending.name).only("pk").first()
    )
    context = {
        "pending": pending,
        "result": result,
        "view": view,
        "banner": banner(view) if view is not None and view.invisible else "",
        "answer": answer if view is not None and view.invisible else None,
        "latest": latest,
    }
    return render(request, "dashboard/pending_pod.html", context)


@dashboard_view
def event_list(request: HttpRequest) -> HttpResponse:
    return _list(
        request,
        "Autoscaler events",
        CAEvent.objects.all(),
        CAEventFilterSet,
        CAEventTable,
        "/api/v1/ca-events/",
    )


@dashboard_view
def node_group_list(request: HttpRequest) -> HttpResponse:
    return _list(
        request, "Node groups", _node_groups(), NodeGroupFilterSet, NodeGroupTable, "/api/v1/node-groups/"
    )


@dashboard_view
def node_group_detail(request: HttpRequest, name: str) -> HttpResponse:
    group = get_object_or_404(_node_groups(), name=name)
    profiles = []
    for profile in group.profiles.all():
        rows = [row.as_dict() for row in profile.devices.all()]
        devices = render_devices(group.name, profile.vendor, rows)
        # the whole registration: annotations (JSON/legacy vendors), status.capacity/allocatable
        # (every vendor; the only part for MLU, Kunlun, AWS Neuron, ...) and labels (AWS Neuron)
        registration = render_registration(
            group.name, profile.vendor, rows, profile.pair_scores, instance_type=group.machine_type
        )
        capacity = [
            {"index": d.index, "devmem": d.devmem, "devcore": d.devcore, "count": d.count, "health": d.health}
            for d in devices
        ]
        profiles.append(
            {
                "profile": profile,
                "rows": rows,
                "registration": registration,
                "capacity": figures.capacity_bars(
                    capacity,
                    f"{profile.vendor} profile v{profile.version}: what one new node registers",
                    vendor=profile.vendor,
                )
                if capacity
                else None,
            }
        )
    members = NodeInventory.objects.filter(node_group=group).order_by("gone_at", "name")
    live_members = members.filter(gone_at__isnull=True).values_list("name", "devices")
    findings = DriftFinding.objects.filter(node_group=group).select_related("inventory")
    decisions = Decision.objects.defer("nodes", "request", "policies").filter(
        node_groups__icontains=f'"{name}"'
    )
    events = CAEvent.objects.filter(groups__icontains=f'"{name}"')
    live_cards = [
        {"name": node, "devices": usage_summary.cards(devices or [], node)}
        for node, devices in live_members[: figures.GRID_MAX_NODES]
    ]
    context = {
        "group": group,
        "profiles": profiles,
        "live_usage": figures.usage_bars(live_cards, "Live members: allocated vs free device memory (MiB)")
        if any(n["devices"] for n in live_cards)
        else None,
        "members": _paginate(request, NodeInventoryTable(members), prefix="m-"),
        "usage_totals": usage_summary.totals(live_members.iterator(chunk_size=500)),
        "findings": _paginate(request, _group_findings_table(group, findings), prefix="f-"),
        "decisions": _paginate(request, DecisionTable(decisions), per_page=10, prefix="d-"),
        "events": _paginate(request, _group_events_table(group, events), per_page=10, prefix="e-"),
        # what each provider's CA reads for a cold group's template (the ca-template API, to copy)
        "ca_templates": [
            {"provider": p, "text": json.dumps(ca_template(group, p), indent=2)}
            for p in CA_TEMPLATE_PROVIDERS
        ],
    }
    return render(request, "dashboard/node_group.html", context)


def _group_findings_table(group: NodeGroup, findings) -> DriftFindingTable:
    """The group's drift findings; when there are none, why (nothing compared is not "all match")."""
    table = DriftFindingTable(findings)
    if not group.profiles.exists():
        table.empty_text = "No drift findings: this group has no device profile, so drift is not checked."
    elif not group.members:
        table.empty_text = "No drift findings: no registered node of this group to compare with its profile."
    return table


def _group_events_table(group: NodeGroup, events) -> CAEventTable:
    """The CA events naming the group; when there are none, say whether any were synced at all."""
    table = CAEventTable(events)
    if CAEvent.objects.exists():
        table.empty_text = (
            f"No CA event names {group.name}: CA has neither scaled it up nor named it in a "
            "NotTriggerScaleUp since the events were synced."
        )
    return table


def _history_label(entry) -> str:
    kind = {"+": "created", "~": "changed", "-": "deleted"}.get(entry.history_type, entry.history_type)
    when = date_format(timezone.localtime(entry.history_date), "DATETIME_FORMAT")
    who = f" by {entry.history_user}" if entry.history_user else ""
    return f"v{entry.version} · {kind} {when}{who}"


@dashboard_view
def profile_compare(request: HttpRequest, name: str, pk: int) -> HttpResponse:
    """Two versions of one device profile (``?a=<history id>&b=<history id>``; default: the two newest)."""
    profile = get_object_or_404(
        DeviceProfile.objects.select_related("node_group"), pk=pk, node_group__name=name
    )
    entries = list(profile.history.select_related("history_user").order_by("-history_date", "-history_id"))
    by_id = {str(e.history_id): e for e in entries}
    older = entries[1] if len(entries) > 1 else (entries[0] if entries else None)
    a = by_id.get(request.GET.get("a", ""), older)
    b = by_id.get(request.GET.get("b", ""), entries[0] if entries else None)
    context = {
        "group": profile.node_group,
        "profile": profile,
        "entries": [(e, _history_label(e)) for e in entries],
        "a": a,
        "b": b,
        "a_label": _history_label(a) if a else "",
        "b_label": _history_label(b) if b else "",
        "diff": diff_versions(a, b) if a is not None and b is not None else None,
    }
    return render(request, "dashboard/profile_compare.html", context)


@dashboard_view
def node_detail(request: HttpRequest, name: str) -> HttpResponse:
    inventory = NodeInventory.objects.select_related("node_group").filter(name=name).first()
    if inventory is None:
        # a short host name (ip-10-0-1-11 for ip-10-0-1-11.ec2.internal) opens the one node it names
        matches = list(
            NodeInventory.objects.filter(name__startswith=f"{name}.").values_list("name", flat=True)[:2]
        )
        if len(matches) == 1:
            return redirect("dashboard:node", name=matches[0])
        raise Http404(f"No node named {name!r} in the inventory.")
    devices = inventory.devices if isinstance(inventory.devices, list) else []
    cards = usage_summary.cards(devices, inventory.name)  # registration + live usage and its pods
    # one vendor's devices get that vendor's panels and units; a mixed node keeps the generic ones
    vendors = {d.get("devicevendor") or "NVIDIA" for d in devices if isinstance(d, dict)}
    findings = DriftFinding.objects.filter(inventory=inventory).select_related("inventory")
    live = bool(cards and cards[0]["live"])
    context = {
        "node": inventory,
        "devices": cards,
        "live": live,
        "usage_age": usage_summary.node_age(inventory.name),
        "stale_after": settings.USAGE_STALE_SECONDS,
        "usage_findings": UsageFinding.objects.filter(node=inventory.name, resolved_at__isnull=True)[:50],
        "capacity": figures.capacity_bars(
            cards,
            "Allocated and free per device" if live else "Registered devices (no live usage)",
            vendor=next(iter(vendors)) if len(vendors) == 1 else None,
        )
        if cards
        else None,
        "findings": _paginate(request, DriftFindingTable(findings), prefix="f-"),
        "drain": _drain(inventory.name),
    }
    return render(request, "dashboard/node.html", context)


def _drain(name: str):
    result = _blind_spot()
    if result is None:
        return None
    return next((d for d in result.drains if d.node == name), None)


def _readable_sessions(caller: Caller):
    """The sessions a dashboard reader may see, expired ones included: by the API's owner rule
    (``simulations.sessions.visible_sessions``), every session for an operator, else its own."""
    sessions_ = SimulationSession.objects.all()
    return sessions_ if caller.operator else sessions_.filter(owner=caller.identity)


def _session_error(request: HttpRequest, exc: SessionError) -> None:
    messages.error(request, f"{exc.error} (HTTP {exc.status})")


@dashboard_view
def session_list(request: HttpRequest) -> HttpResponse:
    """The sessions, and (logged in) a form that creates one, as ``POST /api/v1/sessions`` does."""
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        if not request.user.has_perm("simulations.add_simulationsession"):
            raise PermissionDenied("creating a session needs the operators role")
        form = SessionCreateForm(request.POST)
        if form.is_valid():
            body = {"name": form.cleaned_data["name"], "ttlSeconds": form.cleaned_data["ttl_seconds"]}
            try:
                created = sessions.create_session(body)
            except SessionError as exc:
                _session_error(request, exc)
            else:
                messages.success(request, f"session {created['id']} created")
                return redirect("dashboard:session", pk=created["id"])
        else:
            messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("dashboard:sessions")
    return _list(
        request,
        "Simulation sessions",
        _readable_sessions(caller_of(request)),
        SessionFilterSet,
        SessionTable,
        "/api/v1/sessions/",
        {
            "create_form": SessionCreateForm()
            if request.user.has_perm("simulations.add_simulationsession")
            else None
        },
    )


#: What the session page's buttons do: the API's checkpoint verbs (CA's ClusterSnapshot semantics).
SESSION_ACTIONS = {"fork": sessions.fork, "revert": sessions.revert, "commit": sessions.commit}


@require_POST
def session_action(request: HttpRequest, pk, action: str) -> HttpResponse:
    """Fork / revert / commit a session from its page (logged in only; the pages are read-only)."""
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("dashboard:session", args=[pk]), settings.LOGIN_URL)
    if not request.user.has_perm("simulations.change_simulationsession"):
        raise PermissionDenied(f"{action} needs the operators role")
    verb = SESSION_ACTIONS.get(action)
    if verb is None:
        raise Http404(f"no session action {action!r}")
    try:
        result = verb(pk, sessions.parse_if_match(request.POST.get("revision") or None))
    except SessionError as exc:
        if exc.status == 404:
            raise Http404(exc.error) from None
        _session_error(request, exc)
    else:
        messages.success(
            request, f"{action}: checkpoint depth {result['depth']}, revision {result['revision']}"
        )
    return redirect("dashboard:session", pk=pk)


@dashboard_view
def session_detail(request: HttpRequest, pk) -> HttpResponse:
    session = get_object_or_404(SimulationSession, pk=pk)
    caller = caller_of(request)
    if not (caller.operator or session.owner == caller.identity):  # as _readable_sessions
        raise PermissionDenied(  # the API's answer to the same reader (simulations.sessions)
            f"session {session.pk} belongs to another identity; only its owner or an operator may read it "
            f"(this request is {caller.identity})"
        )
    nodes = list(session.nodes.all())
    node_dicts = [{"name": n.name, "group": n.node_group, "devices": n.devices} for n in nodes]
    context = {
        "session": session,
        "nodes": node_dicts,
        "expired": session.expires_at <= timezone.now(),
        "usage": figures.usage_bars(node_dicts) if any(n["devices"] for n in node_dicts) else None,
        "placements": _paginate(request, SessionPlacementTable(session.placements.all()), per_page=50),
        "session_actions": [
            ("fork", "push a checkpoint"),
            ("revert", "restore the last checkpoint exactly and pop it"),
            ("commit", "keep the changes, pop the last checkpoint"),
        ],
    }
    return render(request, "dashboard/session.html", context)


def _what_if(form: WhatIfForm) -> dict:
    """Estimate for the chosen groups, plus the one-pod device grid against each group's template."""
    pod_obj = form.cleaned_data["pod"]
    groups = list(form.cleaned_data["groups"])
    templates = {g.name: group_template(g) for g in groups}
    sim = get_simulator()
    result = estimate(
        sim,
        [PendingPods(pod_obj, form.cleaned_data["count"])],
        [GroupTemplate(name, template) for name, template in templates.items()],
        parse_expander(form.cleaned_data["expander"], grpc_mode=conf().expander_return),
        ca=ca_release(settings.CA_VERSION),
    )
    ctx = sim.pod_context(pod_obj)
    nodes = list(templates.values())
    verdicts = sim.filter_nodes(ctx, nodes)
    for verdict, name in zip(verdicts, templates, strict=True):
        verdict.node_group = verdict.node_group or name
    summary = recorder.summarize(ctx.pod, nodes, verdicts, caller="ui", seconds=0.0)
    recorder.record(ctx.pod, nodes, verdicts, caller="ui")
    return {
        "result": result,
        "waste_footnote": any(
            o.node_count and not (o.requested_cpu and o.requested_memory) for o in result.options
        ),
        "request_text": describe_request(summary["request"]),
        **_grid_context(summary["nodes"], ctx.node_policy),
    }


@dashboard_view
def what_if(request: HttpRequest) -> HttpResponse:
    form = WhatIfForm(request.POST or None)
    context: dict = {"form": form, "example_pod": EXAMPLE_POD}
    if request.method == "POST" and form.is_valid():
        try:
            context.update(_what_if(form))
        except EstimateError as exc:
            form.add_error("pod", str(exc))
    status = 400 if request.method == "POST" and form.errors else 200
    return render(request, "dashboard/what_if.html", context, status=status)

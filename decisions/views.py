"""The decisions app's pages: decisions (list, pod page), pending pods, CA events, the what-if page,
and the panels it adds to a node group's page (the decisions and CA events naming the group).

A decision's page reads the way its kind explains itself (``decisions.kinds``: a filter answer or a
gRPC expander call). The what-if page computes an estimate and records it as a ``ui`` decision,
nothing else; every other page reads only.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from rest_framework.exceptions import APIException

from hami_sim.engine.estimate import EstimateError, PendingPods, estimate, parse_expander
from hami_sim.pages import figures
from hami_sim.pages.access import dashboard_view
from hami_sim.pages.lists import list_page, paginate
from hami_sim.pages.scores import with_score_bars
from hami_sim.project.concurrency import ESTIMATES
from hami_sim.project.conf import conf, configured_ca_release, judging_releases
from hami_sim.project.permissions import caller_of
from hami_sim.runtime.simulator import get_simulator
from profiles.models import NodeGroup, NodeInventory
from profiles.nodetemplates import estimate_groups
from profiles.render import render_devices
from usage import blindspot
from usage.dra import dra_state
from usage.dra_verdicts import dra_answer
from usage.models import PendingPod

from . import kinds, recorder
from .explain import describe_request, request_rows, score_note
from .filtersets import CAEventFilterSet, DecisionFilterSet
from .forms import EXAMPLE_POD, WhatIfForm
from .models import CAEvent, Decision
from .tables import CAEventTable, DecisionTable

__all__ = ["decision_list", "decision_detail", "pod", "event_list", "what_if", "upgrade_page"]

#: the columns a list of decisions never reads (each may be tens of KB)
_HEAVY = ("nodes", "request", "policies", "pod_spec")


@dashboard_view
def decision_list(request: HttpRequest) -> HttpResponse:
    qs = Decision.objects.defer(*_HEAVY)
    return list_page(request, "Decisions", qs, DecisionFilterSet, DecisionTable, "/api/v1/decisions/")


@dashboard_view
def event_list(request: HttpRequest) -> HttpResponse:
    return list_page(
        request,
        "Autoscaler events",
        CAEvent.objects.all(),
        CAEventFilterSet,
        CAEventTable,
        "/api/v1/ca-events/",
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


def _grid_context(nodes: list, node_policy: str | None, explanation: kinds.Explanation) -> dict:
    """The node group x device grid and its table, each row as the decision's kind reads it."""
    nodes = with_score_bars([n for n in nodes if isinstance(n, dict)])
    # a live node (one the inventory knows) links to its page; a template node has none
    names = {n.get("name") for n in nodes if isinstance(n.get("name"), str)}
    known = set(NodeInventory.objects.filter(name__in=names).values_list("name", flat=True))
    rendered = _profile_device_ids({n.get("group") for n in nodes if n.get("name") not in known})
    for node in nodes:
        node.update(explanation.row(node))
        live = node.get("name") in known
        node["node_url"] = reverse("dashboard:node", args=[node["name"]]) if live else ""
        node["source_label"] = _source_label(node, live, rendered.get(node.get("group"), set()))
    return {
        "grid": figures.device_grid(nodes) if nodes else None,
        "grid_nodes": nodes,
        "grid_truncated": max(0, len(nodes) - figures.GRID_MAX_NODES),
        "score_note": score_note(node_policy),
    }


def _session_url(decision: Decision) -> str:
    """The page of the session a ``session:<id>`` decision was asked in ("" for an id not ours)."""
    if not decision.session:
        return ""
    try:
        return reverse("dashboard:session", args=[uuid.UUID(decision.session)])
    except ValueError:  # a caller-supplied id that is not a session of ours
        return ""


@dashboard_view
def decision_detail(request: HttpRequest, pk: int) -> HttpResponse:
    decision = get_object_or_404(Decision, pk=pk)
    events = list(_events_for(decision)[:50])
    others = (
        Decision.objects.defer(*_HEAVY)
        .filter(pod_namespace=decision.pod_namespace, pod_name=decision.pod_name)
        .exclude(pk=decision.pk)
    )
    explanation = kinds.explanation_of(decision)
    context = {
        "d": decision,
        "session_url": _session_url(decision),
        "answer": explanation.answer(decision, events),
        "outcome": explanation.outcome(decision, events),
        "containers": [{"index": i, "rows": request_rows(c)} for i, c in enumerate(decision.request or [])],
        "events": events,
        "others": paginate(request, DecisionTable(others), per_page=10, prefix="o-"),
        **_grid_context(decision.nodes or [], (decision.policies or {}).get("node"), explanation),
        "devices": explanation.devices,
    }
    if not explanation.devices:
        context["grid"] = None  # no per-GPU heatmap for scale-up options: the options table says it all
    return render(request, "decisions/decision.html", context)


@dashboard_view
def pod(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """A pending HAMi pod: both views (CA's and HAMi's) with the banner when CA cannot see it; else
    the pod's latest decision (what CA's events link to), its events when hami-sim was never asked."""
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
    result = blindspot.report_or_none()
    view = result.of(pending.uid) if result is not None else None
    invisible = view is not None and view.invisible
    latest = (
        Decision.objects.filter(pod_namespace=pending.namespace, pod_name=pending.name).only("pk").first()
    )
    context = {
        "pending": pending,
        "result": result,
        "view": view,
        "banner": blindspot.banner(view) if invisible else "",
        "answer": result.groups.get(view.ca_node_group or "(no node group)") if invisible else None,
        "latest": latest,
        # CA's events on the pod (a TriggeredScaleUp names the group CA grew while it was pending)
        "events": CAEvent.objects.filter(pod_namespace=pending.namespace, pod_name=pending.name)[:10],
        "events_query": urlencode({"pod_namespace": pending.namespace, "pod_name": pending.name}),
        "dra": dra_answer(pending.pod, dra_state()),
        "releases": judging_releases(),
    }
    return render(request, "decisions/pending_pod.html", context)


def _what_if(form: WhatIfForm) -> dict:
    """Estimate for the chosen groups, plus the one-pod device grid against each group's template."""
    pod_obj = form.cleaned_data["pod"]
    # the groups with their max and current sizes, as the estimate API and the blind spot take them
    groups = estimate_groups(g.name for g in form.cleaned_data["groups"])
    templates = {g.name: g.template for g in groups}
    sim = get_simulator()
    result = estimate(
        sim,
        [PendingPods(pod_obj, form.cleaned_data["count"])],
        groups,
        parse_expander(form.cleaned_data["expander"], grpc_mode=conf().expander_return),
        ca=configured_ca_release(),
    )
    ctx = sim.pod_context(pod_obj)
    nodes = list(templates.values())
    verdicts = sim.filter_nodes(ctx, nodes)
    for verdict, name in zip(verdicts, templates, strict=True):
        verdict.node_group = verdict.node_group or name
    summary = recorder.summarize(ctx.pod, nodes, verdicts, caller="ui", seconds=0.0)
    recorder.record(ctx.pod, nodes, verdicts, caller="ui", spec=pod_obj)
    grid = _grid_context(summary["nodes"], ctx.node_policy, kinds.FILTER)
    _with_estimate_notes(grid["grid_nodes"], result.options)
    return {
        "result": result,
        "hami_release": sim.rules.release,
        "waste_footnote": any(
            o.node_count and not (o.requested_cpu and o.requested_memory) for o in result.options
        ),
        "request_text": describe_request(summary["request"]),
        **grid,
    }


def _with_estimate_notes(nodes: list[dict], options: list) -> None:
    """Each template row of the grid says what the estimate above made of its group, so the one-pod
    verdict and the table never tell two stories (a template that fits an empty node, of a group
    whose max size allows no new node, reads "fits" and "no new node: max node group size ...")."""
    by_group = {o.node_group: o for o in options}
    for node in nodes:
        option = by_group.get(node.get("group"))
        if option is None:
            continue
        scheduled, left = len(option.scheduled), len(option.unschedulable)
        if option.node_count:
            note = f"the estimate: {option.node_count} new node(s) for {scheduled} pod(s)"
        else:
            note = "the estimate: no new node"
        reasons = sorted(set(option.unschedulable.values()))
        if left:
            note += f", {left} pod(s) left: {reasons[0]}" + (
                f" (and {len(reasons) - 1} other reason(s))" if len(reasons) > 1 else ""
            )
        node["estimate_note"] = note


@dashboard_view
def what_if(request: HttpRequest) -> HttpResponse:
    form = WhatIfForm(request.POST or None)
    context: dict = {"form": form, "example_pod": EXAMPLE_POD}
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            with ESTIMATES.slot(caller_of(request).identity):  # as POST /api/v1/estimate
                context.update(_what_if(form))
        except EstimateError as exc:
            form.add_error("pod", str(exc))
        except APIException as busy:  # another estimate of yours, or the process's limit
            form.add_error(None, str(busy.detail))
            status = busy.status_code
    if status == 200 and request.method == "POST" and form.errors:
        status = 400
    return render(request, "decisions/what_if.html", context, status=status)


# -- panels on a node group's page (``profiles.views.node_group_detail``) --------------------------------
def group_decisions(request: HttpRequest, group: NodeGroup) -> dict:
    """The decisions naming the group, newest first."""
    decisions = Decision.objects.defer(*_HEAVY).filter(node_groups__icontains=f'"{group.name}"')
    return {"decisions": paginate(request, DecisionTable(decisions), per_page=10, prefix="d-")}


def group_events(request: HttpRequest, group: NodeGroup) -> dict:
    """The CA events naming the group; when there are none, whether any were synced at all."""
    table = CAEventTable(CAEvent.objects.filter(groups__icontains=f'"{group.name}"'))
    if CAEvent.objects.exists():
        table.empty_text = (
            f"No CA event names {group.name}: CA has neither scaled it up nor named it in a "
            "NotTriggerScaleUp since the events were synced."
        )
    return {"events": paginate(request, table, per_page=10, prefix="e-")}


@dashboard_view
def upgrade_page(request: HttpRequest) -> HttpResponse:
    """What another HAMi release would change (``decisions.upgrade``): the release is a query
    parameter (``?release=2.9``), checked as the API checks it; a bad one is said on the page."""
    from hami_sim.engine.hami_releases import SUPPORTED_RELEASES, HamiReleaseError, parse_release

    from .upgrade import compare

    current = get_simulator().rules.release
    others = [r for r in SUPPORTED_RELEASES if r != current]
    asked = request.GET.get("release", "")
    context: dict = {"current": current, "others": others, "asked": asked, "result": None, "error": ""}
    if asked:
        try:
            context["result"] = compare(parse_release(asked))
        except HamiReleaseError as exc:
            context["error"] = str(exc)
    status = 400 if context["error"] else 200
    return render(request, "decisions/upgrade.html", context, status=status)

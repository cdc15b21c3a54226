"""The profiles app's pages: node groups (list, page, profile versions) and drift findings.

What upper apps know about a group (its live usage, the decisions and CA events naming it) comes in
as panels they register (``hami_sim.pages.panels``): a page imports only its app and the layers below.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.formats import date_format

from hami_sim.pages import figures, panels
from hami_sim.pages.access import dashboard_view
from hami_sim.pages.lists import list_page, paginate

from .ca_template_tags import PROVIDERS as CA_TEMPLATE_PROVIDERS
from .ca_template_tags import ca_template
from .filtersets import DriftFindingFilterSet, NodeGroupFilterSet
from .models import DeviceProfile, DriftFinding, NodeGroup
from .profilediff import diff_versions
from .render import render_devices, render_registration
from .tables import DriftFindingTable, NodeGroupTable, node_groups

__all__ = ["node_group_list", "node_group_detail", "profile_compare", "drift_list"]


@dashboard_view
def node_group_list(request: HttpRequest) -> HttpResponse:
    return list_page(
        request, "Node groups", node_groups(), NodeGroupFilterSet, NodeGroupTable, "/api/v1/node-groups/"
    )


@dashboard_view
def drift_list(request: HttpRequest) -> HttpResponse:
    """Drift findings; beside them the panels other apps add (usage: open findings about pods'
    allocations, such as a pod on a device its node does not register)."""
    qs = DriftFinding.objects.select_related("inventory")
    return list_page(
        request,
        "Drift findings",
        qs,
        DriftFindingFilterSet,
        DriftFindingTable,
        "/api/v1/drift-findings/",
        page="drift",
    )


def _profile_card(group: NodeGroup, profile: DeviceProfile) -> dict:
    """One device profile as the group page shows it: rows, the whole registration a new node makes
    (annotations for JSON/legacy vendors, status.capacity/allocatable for every vendor, labels for
    AWS Neuron) and its capacity chart."""
    rows = [row.as_dict() for row in profile.devices.all()]
    devices = render_devices(group.name, profile.vendor, rows)
    registration = render_registration(
        group.name, profile.vendor, rows, profile.pair_scores, instance_type=group.machine_type
    )
    capacity = [
        {"index": d.index, "devmem": d.devmem, "devcore": d.devcore, "count": d.count, "health": d.health}
        for d in devices
    ]
    title = f"{profile.vendor} profile v{profile.version}: what one new node registers"
    return {
        "profile": profile,
        "rows": rows,
        "registration": registration,
        "capacity": figures.capacity_bars(capacity, title, vendor=profile.vendor) if capacity else None,
    }


@dashboard_view
def node_group_detail(request: HttpRequest, name: str) -> HttpResponse:
    group = get_object_or_404(node_groups(), name=name)
    findings = DriftFinding.objects.filter(node_group=group).select_related("inventory")
    context = {
        "group": group,
        "profiles": [_profile_card(group, profile) for profile in group.profiles.all()],
        "findings": paginate(request, _group_findings_table(group, findings), prefix="f-"),
        # what each provider's CA reads for a cold group's template (the ca-template API, to copy)
        "ca_templates": [
            {"provider": p, "text": json.dumps(ca_template(group, p), indent=2)}
            for p in CA_TEMPLATE_PROVIDERS
        ],
        "dra_slices": _dra_slices(group),
        "panels": panels.render(request, "node-group", group),
    }
    return render(request, "profiles/node_group.html", context)


def _dra_slices(group: NodeGroup) -> list[dict]:
    """The group's DRA template slices, as JSON to copy (none without an NVIDIA profile)."""
    from .dra_templates import dra_template_slices

    slices = dra_template_slices(group)
    labels = {"hami": "HAMi's DRA driver (hami-sim's template)", "clusterapi": "CA's clusterapi provider"}
    return [
        {"key": key, "label": label, "text": json.dumps(slices[key], indent=2)}
        for key, label in labels.items()
        if slices[key] is not None
    ]


def _group_findings_table(group: NodeGroup, findings) -> DriftFindingTable:
    """The group's drift findings; when there are none, why (nothing compared is not "all match")."""
    table = DriftFindingTable(findings)
    if not group.profiles.exists():
        table.empty_text = "No drift findings: this group has no device profile, so drift is not checked."
    elif not group.members:
        table.empty_text = "No drift findings: no registered node of this group to compare with its profile."
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
    newest = entries[0] if entries else None
    a = by_id.get(request.GET.get("a", ""), entries[1] if len(entries) > 1 else newest)
    b = by_id.get(request.GET.get("b", ""), newest)
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
    return render(request, "profiles/profile_compare.html", context)

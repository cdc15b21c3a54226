"""The usage app's pages: live nodes (list and page) and the panels it adds to other apps' pages
(a node group's member nodes with their usage, the drift list's pod allocation findings)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from hami_sim.engine.vendors import default_word
from hami_sim.pages import figures
from hami_sim.pages.access import dashboard_view
from hami_sim.pages.lists import list_page, paginate
from hami_sim.project.conf import conf
from profiles.filtersets import NodeInventoryFilterSet
from profiles.models import DriftFinding, NodeGroup, NodeInventory
from profiles.tables import DriftFindingTable

from . import blindspot, summary
from .api.serializers import BlindSpotFilterSerializer
from .invisible import grouped, invisible_rows
from .models import UsageFinding
from .tables import NodeUsageTable

__all__ = ["node_list", "node_detail", "dra_page", "blind_spot_list"]

#: open pod allocation findings the drift list shows (the newest; the count of the rest is said)
USAGE_FINDINGS_SHOWN = 100
#: rows of identical pods the full blind-spot page shows (the REST list pages through every pod)
BLIND_SPOT_ROWS = 200


@dashboard_view
def node_list(request: HttpRequest) -> HttpResponse:
    qs = NodeInventory.objects.select_related("node_group").order_by("gone_at", "name")
    return list_page(
        request, "Nodes", qs, NodeInventoryFilterSet, NodeUsageTable, "/api/v1/node-inventories/"
    )


@dashboard_view
def blind_spot_list(request: HttpRequest) -> HttpResponse:
    """Every pod upstream CA cannot see (the overview shows the first groups), with the REST list's
    filters and pages (``/api/v1/blind-spot``)."""
    filters = BlindSpotFilterSerializer(data=request.GET)
    valid = filters.is_valid()
    report = blindspot.report_or_none()
    rows = invisible_rows(report, **filters.validated_data) if report is not None and valid else []
    context = {
        "report": report,
        "filters": filters.validated_data if valid else {},
        "errors": [f"{k}: {v[0]}" for k, v in filters.errors.items()],
        "count": len(rows),
    }
    groups = grouped(rows)
    context["groups"], context["more_groups"] = (
        groups[:BLIND_SPOT_ROWS],
        max(0, len(groups) - BLIND_SPOT_ROWS),
    )
    return render(request, "usage/blind_spot.html", context, status=200 if valid else 400)


def _inventory_or_redirect(name: str) -> NodeInventory | HttpResponse:
    """The node of that name; a short host name (ip-10-0-1-11 for ip-10-0-1-11.ec2.internal) opens
    the one node it names."""
    inventory = NodeInventory.objects.select_related("node_group").filter(name=name).first()
    if inventory is not None:
        return inventory
    matches = list(
        NodeInventory.objects.filter(name__startswith=f"{name}.").values_list("name", flat=True)[:2]
    )
    if len(matches) == 1:
        return redirect("dashboard:node", name=matches[0])
    raise Http404(f"No node named {name!r} in the inventory.")


def _capacity(cards: list[dict], devices: list, live: bool) -> dict | None:
    """The node's capacity chart: one vendor's devices get that vendor's panels and units, a mixed
    node keeps the generic ones."""
    if not cards:
        return None
    vendors = {d.get("devicevendor") or default_word() for d in devices if isinstance(d, dict)}
    title = "Allocated and free per device" if live else "Registered devices (no live usage)"
    return figures.capacity_bars(cards, title, vendor=next(iter(vendors)) if len(vendors) == 1 else None)


@dashboard_view
def node_detail(request: HttpRequest, name: str) -> HttpResponse:
    inventory = _inventory_or_redirect(name)
    if isinstance(inventory, HttpResponse):
        return inventory
    devices = inventory.devices if isinstance(inventory.devices, list) else []
    cards = summary.cards(devices, inventory.name)  # registration + live usage and its pods
    findings = DriftFinding.objects.filter(inventory=inventory).select_related("inventory")
    live = bool(cards and cards[0]["live"])
    context = {
        "node": inventory,
        "devices": cards,
        "live": live,
        "usage_age": summary.node_age(inventory.name),
        "stale_after": settings.USAGE_STALE_SECONDS,
        "usage_findings": UsageFinding.objects.filter(node=inventory.name, resolved_at__isnull=True)[:50],
        "capacity": _capacity(cards, devices, live),
        "findings": paginate(request, DriftFindingTable(findings), prefix="f-"),
        "drain": _drain(inventory.name),
    }
    return render(request, "usage/node.html", context)


def _drain(name: str):
    """What CA and HAMi think of draining the node (the blind-spot report's scale-down view)."""
    result = blindspot.report_or_none()
    if result is None:
        return None
    return next((d for d in result.drains if d.node == name), None)


def group_members(request: HttpRequest, group: NodeGroup) -> dict:
    """The node group page's member nodes: their usage totals and chart, and the table."""
    members = NodeInventory.objects.filter(node_group=group).order_by("gone_at", "name")
    live_members = members.filter(gone_at__isnull=True).values_list("name", "devices")
    live_cards = [
        {"name": node, "devices": summary.cards(devices or [], node)}
        for node, devices in live_members[: figures.GRID_MAX_NODES]
    ]
    has_usage = any(n["devices"] for n in live_cards)
    return {
        "usage_totals": summary.totals(live_members.iterator(chunk_size=500)),
        "live_usage": figures.usage_bars(live_cards, "Live members: allocated vs free device memory (MiB)")
        if has_usage
        else None,
        "members": paginate(request, NodeUsageTable(members), prefix="m-"),
    }


def drift_usage_findings(request: HttpRequest, _obj) -> dict:
    """Beside the drift findings, the open findings about pods' allocations (a pod on a device its
    node does not register, an annotation that does not decode)."""
    usage = UsageFinding.objects.filter(resolved_at__isnull=True)
    shown = list(usage[:USAGE_FINDINGS_SHOWN])
    more = usage.count() - len(shown) if len(shown) == USAGE_FINDINGS_SHOWN else 0
    return {"usage_findings": shown, "usage_findings_more": more, "show_node": True}


@dashboard_view
def dra_page(request: HttpRequest) -> HttpResponse:
    """DRA at a glance: the nodes that publish slices, the pending pods with claims (each links to
    its pod page, where it is judged device by device), and the DRA blind spot."""
    from .dra import dra_state
    from .dra_blindspot import MAX_PODS, dra_blind_spot, dra_pending

    state = dra_state()
    pending = dra_pending()
    context = {
        "state": state,
        "nodes": [
            (node, sum(len(s.devices) for s in state.slices if s.node_name == node)) for node in state.nodes()
        ],
        "pending": pending,
        "capped": len(pending) >= MAX_PODS,
        "blind": dra_blind_spot(state),
        "synced": conf().dra_sync,
    }
    return render(request, "usage/dra.html", context)

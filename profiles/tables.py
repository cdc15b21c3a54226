"""django-tables2 tables of node groups, nodes and drift; every name links to its page.

``usage.tables.NodeUsageTable`` adds the live usage column to ``NodeInventoryTable``.
"""

from __future__ import annotations

import django_tables2 as tables
from django.db.models import Count, Prefetch, Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from .models import DeviceRow, DriftFinding, NodeGroup, NodeInventory

__all__ = ["ATTRS", "group_links", "node_groups", "NodeGroupTable", "NodeInventoryTable", "DriftFindingTable"]

ATTRS = {"class": "table"}


def group_links(names) -> str:
    """Each node group name as a link to its page (``—`` for none)."""
    return (
        format_html(
            " ".join(['<a href="{}">{}</a>'] * len(names)),
            *[x for name in names for x in (reverse("dashboard:node-group", args=[name]), name)],
        )
        if names
        else "—"
    )


def node_groups():
    """The node groups as their table shows them: live members and open drift counted, profiles'
    devices prefetched in order."""
    now_open = Q(findings__resolved_at__isnull=True, findings__isnull=False)
    return (
        NodeGroup.objects.annotate(
            members=Count("inventories", filter=Q(inventories__gone_at__isnull=True), distinct=True),
            open_drift=Count("findings", filter=now_open, distinct=True),
        )
        .prefetch_related(Prefetch("profiles__devices", queryset=DeviceRow.objects.order_by("position")))
        .order_by("name")
    )


class NodeGroupTable(tables.Table):
    name = tables.Column(linkify=("dashboard:node-group", [tables.A("name")]))
    state = tables.Column(empty_values=(), orderable=False, verbose_name="State")
    profile = tables.Column(empty_values=(), orderable=False, verbose_name="Profile")
    open_drift = tables.Column(verbose_name="Open drift")
    inventory_source = tables.Column(verbose_name="Inventory")

    class Meta:
        model = NodeGroup
        empty_text = "No node groups yet: import them (manage.py import_profiles) or add one in the admin."
        fields = (
            "name",
            "state",
            "profile",
            "open_drift",
            "provider",
            "machine_type",
            "min_size",
            "max_size",
            "inventory_source",
        )
        attrs = ATTRS

    def render_state(self, record):
        members = getattr(record, "members", 0)
        label = f"warm ({members} node{'s' if members != 1 else ''})" if members else "cold"
        return format_html('<span class="badge s-{}">{}</span>', "warm" if members else "cold", label)

    def render_profile(self, record):
        profiles = list(record.profiles.all())
        if not profiles:
            return mark_safe('<span class="badge v-no_fit">no profile</span>')
        parts = []
        for p in profiles:
            rows = list(p.devices.all())
            parts.append(
                ", ".join(f"{r.quantity}× {r.type} {r.devmem} MiB (NUMA {r.numa})" for r in rows) or p.vendor
            )
        return "; ".join(parts)

    def render_open_drift(self, value):
        return format_html('<span class="badge {}">{}</span>', "v-no_fit" if value else "s-ok", value)


class NodeInventoryTable(tables.Table):
    name = tables.Column(linkify=("dashboard:node", [tables.A("name")]))
    node_group = tables.Column(
        accessor="node_group__name",
        verbose_name="Node group",
        linkify=("dashboard:node-group", [tables.A("node_group__name")]),
    )
    devices = tables.Column(orderable=False)
    stale = tables.Column(verbose_name="Stale")
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = NodeInventory
        empty_text = "No nodes seen: the inventory sync has not found a node of these groups in the cluster."
        fields = (
            "name",
            "node_group",
            "devices",
            "registered_at",
            "last_seen",
            "gone_at",
            "stale",
            "parse_error",
        )
        attrs = ATTRS

    def render_devices(self, value):
        return f"{len(value)} device(s)" if isinstance(value, list) else "—"

    def render_stale(self, value):
        """Says "stale" or nothing: a ✘ under "Stale" read as "stale: no"."""
        return format_html('<span class="badge unhealthy">stale</span>') if value else "—"


class DriftFindingTable(tables.Table):
    node = tables.Column(
        accessor="inventory__name",
        verbose_name="Node",
        linkify=("dashboard:node", [tables.A("inventory__name")]),
    )

    class Meta:
        model = DriftFinding
        empty_text = "No drift findings: every registered node matches its group's device profile."
        fields = (
            "node",
            "kind",
            "field",
            "device",
            "expected",
            "actual",
            "severity",
            "opened_at",
            "resolved_at",
        )
        attrs = ATTRS

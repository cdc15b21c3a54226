"""django-tables2 tables for the dashboard; every name links to its page."""

from __future__ import annotations

import itertools

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from decisions.models import CAEvent, Decision
from hami_sim.runtime.models import TaskRun
from profiles.models import DriftFinding, NodeGroup, NodeInventory
from simulations.models import SessionPlacement, SimulationSession
from usage import summary as usage_summary

__all__ = [
    "DecisionTable",
    "CAEventTable",
    "NodeGroupTable",
    "NodeInventoryTable",
    "DriftFindingTable",
    "TaskRunTable",
    "SessionTable",
    "SessionPlacementTable",
]

ATTRS = {"class": "table"}


def _group_links(names) -> str:
    return (
        format_html(
            " ".join(['<a href="{}">{}</a>'] * len(names)),
            *[x for name in names for x in (reverse("dashboard:node-group", args=[name]), name)],
        )
        if names
        else "—"
    )


class DecisionTable(tables.Table):
    pod = tables.Column(accessor="pod_name", verbose_name="Pod", order_by=("pod_namespace", "pod_name"))
    verdict = tables.Column()
    node_groups = tables.Column(verbose_name="Node groups", orderable=False)
    fit_groups = tables.Column(verbose_name="Fits", orderable=False)
    top_reason = tables.Column(verbose_name="Top reason")
    caller = tables.Column()
    count = tables.Column(verbose_name="Asked")
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = Decision
        empty_text = (
            "No decisions yet: one is recorded each time CA (or the what-if page) asks hami-sim about a pod."
        )
        fields = ("pod", "verdict", "node_groups", "fit_groups", "top_reason", "caller", "count", "last_seen")
        attrs = ATTRS
        order_by = "-last_seen"

    def render_pod(self, record):
        return format_html(
            '<a class="pod-link" href="{}">{}/{}</a>',
            record.get_absolute_url(),
            record.pod_namespace,
            record.pod_name,
        )

    def render_verdict(self, record):
        return format_html('<span class="badge v-{}">{}</span>', record.verdict, record.get_verdict_display())

    def render_top_reason(self, record, value):
        """A pod that fits has no failure reason to headline (some nodes' rejections are detail)."""
        return "—" if record.verdict == Decision.Verdict.FIT else value

    def render_node_groups(self, value):
        return _group_links(value)

    def render_fit_groups(self, value):
        return _group_links(value)


class CAEventTable(tables.Table):
    reason = tables.Column()
    pod = tables.Column(accessor="pod_name", verbose_name="Pod")
    message = tables.Column(orderable=False)
    count = tables.Column()
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = CAEvent
        empty_text = (
            "No Cluster Autoscaler events synced yet (CA's TriggeredScaleUp / NotTriggerScaleUp pod events)."
        )
        fields = ("reason", "pod", "message", "count", "last_seen")
        attrs = ATTRS

    def render_pod(self, record):
        return format_html(
            '<a href="{}">{}/{}</a>',
            reverse("dashboard:pod", args=[record.pod_namespace, record.pod_name]),
            record.pod_namespace,
            record.pod_name,
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
    usage = tables.Column(
        empty_values=(),
        orderable=False,
        verbose_name="Device memory allocated / registered",
        attrs={"td": {"class": "usage"}},
    )
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = NodeInventory
        empty_text = "No nodes seen: the inventory sync has not found a node of these groups in the cluster."
        fields = (
            "name",
            "node_group",
            "devices",
            "usage",
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

    def render_usage(self, record):
        """Live usage over the node's healthy cards (the node page has the per-card detail)."""
        if record.gone_at is not None or not isinstance(record.devices, list) or not record.devices:
            return "—"
        t = usage_summary.totals([(record.name, record.devices)])
        text = f"{t.usedmem} / {t.devmem} MiB ({t.mem_percent}%)" if t.live_nodes else "no live usage"
        if t.unhealthy:
            return format_html("{} · <span class='badge unhealthy'>{} unhealthy</span>", text, t.unhealthy)
        return text


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


class TaskRunTable(tables.Table):
    started_at = tables.DateTimeColumn()
    counts = tables.Column(orderable=False)

    class Meta:
        model = TaskRun
        empty_text = "No task runs recorded yet (the Celery worker records each sync, drift check and prune)."
        fields = ("task", "outcome", "started_at", "duration_ms", "counts", "error")
        attrs = ATTRS

    def render_outcome(self, record):
        css = {"success": "v-fit", "failure": "v-no_fit"}.get(record.outcome, "v-unresolvable")
        return format_html('<span class="badge {}">{}</span>', css, record.outcome)

    def render_counts(self, value):
        if not isinstance(value, dict):
            return str(value)
        return " · ".join(f"{k} {v}" for k, v in value.items() if v not in (0, "", None)) or "—"


class SessionTable(tables.Table):
    id = tables.Column(linkify=("dashboard:session", [tables.A("pk")]))

    class Meta:
        model = SimulationSession
        empty_text = "No simulation sessions: create one with POST /api/v1/sessions/ or the button above."
        fields = ("id", "name", "revision", "depth", "created_at", "expires_at")
        attrs = ATTRS


class SessionPlacementTable(tables.Table):
    number = tables.Column(empty_values=(), orderable=False, verbose_name="#")
    seq = tables.Column(verbose_name="Revision")
    pod = tables.Column(accessor="pod_uid", verbose_name="Pod")
    containers = tables.Column(orderable=False, verbose_name="Devices")

    class Meta:
        model = SessionPlacement
        empty_text = "No pod placed in this session yet."
        fields = ("number", "seq", "pod", "namespace", "name", "node_name", "containers")
        attrs = ATTRS

    def render_number(self):
        """1, 2, 3 ... down the page (the revision beside it has gaps where checkpoints were reverted)."""
        if not hasattr(self, "_numbers"):
            page = getattr(self, "page", None)
            self._numbers = itertools.count(page.start_index() if page is not None else 1)
        return next(self._numbers)

    def render_containers(self, value):
        cells = []
        for ci, devices in enumerate(value or []):
            for d in devices:
                cells.append(f"c{ci}: {d.get('uuid', '')} {d.get('usedmem', 0)} MiB {d.get('usedcores', 0)}%")
        return "; ".join(cells) or "—"

"""The node table with live usage: ``profiles.tables.NodeInventoryTable`` plus what the pods hold."""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import format_html

from profiles.tables import NodeInventoryTable

from . import summary

__all__ = ["NodeUsageTable"]


class NodeUsageTable(NodeInventoryTable):
    usage = tables.Column(
        empty_values=(),
        orderable=False,
        verbose_name="Device memory allocated / registered",
        attrs={"td": {"class": "usage"}},
    )

    class Meta(NodeInventoryTable.Meta):
        sequence = ("name", "node_group", "devices", "usage", "...")

    def render_usage(self, record):
        """Live usage over the node's healthy cards (the node page has the per-card detail)."""
        if record.gone_at is not None or not isinstance(record.devices, list) or not record.devices:
            return "—"
        t = summary.totals([(record.name, record.devices)])
        text = f"{t.usedmem} / {t.devmem} MiB ({t.mem_percent}%)" if t.live_nodes else "no live usage"
        if t.unhealthy:
            return format_html("{} · <span class='badge unhealthy'>{} unhealthy</span>", text, t.unhealthy)
        return text

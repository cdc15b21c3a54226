"""django-tables2 tables of simulation sessions and their placements."""

from __future__ import annotations

import itertools

import django_tables2 as tables

from .models import SessionPlacement, SimulationSession

__all__ = ["SessionTable", "SessionPlacementTable"]

ATTRS = {"class": "table"}


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

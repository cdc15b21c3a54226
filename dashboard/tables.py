"""The dashboard's own tables: the Celery tasks' runs (the overview and the task runs page) and the
objects the cluster syncs stored repaired or skipped (the task runs page)."""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import format_html

from hami_sim.runtime.models import RejectedObject, TaskRun
from profiles.tables import ATTRS

__all__ = ["TaskRunTable", "RejectedObjectTable"]


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


class RejectedObjectTable(tables.Table):
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = RejectedObject
        empty_text = "Every object the syncs read was stored as read."
        fields = ("kind", "name", "reason", "action", "source", "count", "last_seen", "detail")
        attrs = ATTRS

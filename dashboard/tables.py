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
    progress = tables.Column(orderable=False, empty_values=())
    counts = tables.Column(orderable=False)

    class Meta:
        model = TaskRun
        empty_text = "No task runs recorded yet (the Celery worker records each sync, drift check and prune)."
        fields = ("task", "outcome", "started_at", "duration_ms", "progress", "counts", "error")
        attrs = ATTRS

    def render_progress(self, record):
        """A running task's stage and how far it is (the task writes it into its row as it goes)."""
        progress = record.progress or {}
        if record.outcome != TaskRun.Outcome.RUNNING or not progress.get("stage"):
            return "—"
        done, total = int(progress.get("done") or 0), progress.get("total")
        if not total:
            return format_html('<span class="task-progress">{} {}</span>', progress["stage"], f"{done:,}")
        return format_html(
            '<span class="task-progress">{} {} / {} ({}%) <progress value="{}" max="{}"></progress></span>',
            progress["stage"],
            f"{done:,}",
            f"{int(total):,}",
            done * 100 // int(total),
            done,
            int(total),
        )

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

"""Models of the runtime layer: ``TaskRun``, one row per background task run (every app's tasks).

It lived in ``profiles`` although ``simulations`` and ``decisions`` record runs too; it moved here
with its table (``profiles_taskrun``) unchanged, so no data moved.
"""

from __future__ import annotations

from django.db import models

__all__ = ["TaskRun"]


class TaskRun(models.Model):
    """One run of a Celery task: when, how long, outcome and counts (Sentry/Zulip style visibility)."""

    class Outcome(models.TextChoices):
        RUNNING = "running"
        SUCCESS = "success"
        FAILURE = "failure"
        RETRY = "retry"

    task = models.CharField(max_length=100, db_index=True)
    task_id = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.RUNNING, db_index=True)
    counts = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        db_table = "profiles_taskrun"  # created by profiles' first migration; kept when it moved here
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["task", "-started_at"], name="profiles_ta_task_ceb160_idx")]

    def __str__(self) -> str:
        return f"{self.task} {self.started_at:%Y-%m-%d %H:%M:%S} {self.outcome}"

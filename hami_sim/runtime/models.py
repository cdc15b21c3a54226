"""Models of the runtime layer: ``TaskRun``, one row per background task run (every app's tasks), and
the objects the cluster syncs rejected (``RejectedObject``, ``RejectionTotal``).

It lived in ``profiles`` although ``simulations`` and ``decisions`` record runs too; it moved here
with its table (``profiles_taskrun``) unchanged, so no data moved.
"""

from __future__ import annotations

from django.db import models

__all__ = ["TaskRun", "RejectedObject", "RejectionTotal"]


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
    # How far a running task is: {"stage": ..., "done": n, "total": n or null}, written as it goes
    # (``hami_sim.runtime.taskruns``) so the Task runs page can show a long sync moving.
    progress = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "profiles_taskrun"  # created by profiles' first migration; kept when it moved here
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["task", "-started_at"], name="profiles_ta_task_ceb160_idx")]

    def __str__(self) -> str:
        return f"{self.task} {self.started_at:%Y-%m-%d %H:%M:%S} {self.outcome}"


class RejectedObject(models.Model):
    """An object read from the cluster that a sync stored repaired or skipped, with how often.

    One row per object and reason (the latest sighting wins); ``RejectionTotal`` keeps the
    never-decreasing totals that ``hami_sim_sync_rejected_objects_total`` exports, so pruning these
    rows never makes the counter go back."""

    class Action(models.TextChoices):
        SANITISED = "sanitised"
        SKIPPED = "skipped"

    kind = models.CharField(max_length=20, help_text="pod, node, registration, event, configmap")
    name = models.CharField(max_length=300, help_text="namespace/name (or name) as read, made storable")
    reason = models.CharField(max_length=40)
    action = models.CharField(max_length=10, choices=Action.choices)
    source = models.CharField(max_length=100, help_text="the task or process that read it")
    detail = models.TextField(blank=True)
    count = models.PositiveBigIntegerField(default=1)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-last_seen"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "name", "reason"], name="runtime_rejected_once")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.reason} ({self.action})"


class RejectionTotal(models.Model):
    """How many times objects of a kind were rejected for a reason, ever (a Prometheus counter)."""

    kind = models.CharField(max_length=20)
    reason = models.CharField(max_length=40)
    total = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "reason"], name="runtime_rejection_total")]

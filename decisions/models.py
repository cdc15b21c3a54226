"""Decision records of every answer, and what the cluster said about the same pods (docs/dashboard.md).

- ``Decision``: one folded filter question: same pod, same caller, same node-group set, same verdicts.
  CA asks the same question every loop, so a row carries ``count``/``first_seen``/``last_seen``
  instead of one row per call. Per-node and per-device detail is a JSON list: it is written once,
  read whole by the pod page, and never queried inside.
- ``CAEvent``: a Kubernetes Event about a pod (``TriggeredScaleUp``, ``NotTriggerScaleUp``,
  ``FailedScheduling``), parsed into structure, raw text kept; joined to decisions by pod uid.
- ``AutoscalerStatus``: snapshots of CA's ``cluster-autoscaler-status`` ConfigMap.
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse

__all__ = ["Decision", "CAEvent", "AutoscalerStatus"]


class Decision(models.Model):
    """What hami-sim answered for one pod over a set of candidate nodes (folded repeats)."""

    class Verdict(models.TextChoices):
        FIT = "fit", "fit"
        NO_FIT = "no_fit", "no fit"
        UNRESOLVABLE = "unresolvable", "unresolvable"

    class Caller(models.TextChoices):
        EXTENDER = "extender"
        SESSION = "session"
        ESTIMATE = "estimate"
        UI = "ui", "UI"  # the derived label would be "Ui"
        EXPANDER = "expander"  # CA's gRPC expander (``simulations.grpcexpander``)

    digest = models.CharField(max_length=64, unique=True, help_text="pod + caller + node groups + verdicts")
    pod_uid = models.CharField(max_length=128, db_index=True, blank=True)
    pod_namespace = models.CharField(max_length=253, db_index=True)
    pod_name = models.CharField(max_length=253, db_index=True)
    pod_owner = models.CharField(max_length=300, blank=True)
    caller = models.CharField(max_length=16, choices=Caller.choices, default=Caller.EXTENDER, db_index=True)
    session = models.CharField(max_length=64, blank=True, help_text="session id for session-scoped calls")
    verdict = models.CharField(max_length=16, choices=Verdict.choices, db_index=True)
    node_groups = models.JSONField(default=list, help_text="sorted node-group names (node name when none)")
    fit_groups = models.JSONField(default=list, help_text="node groups with at least one fitting node")
    node_count = models.PositiveIntegerField(default=0)
    fit_count = models.PositiveIntegerField(default=0)
    top_reason = models.CharField(
        max_length=300, blank=True, db_index=True, help_text="most common rejection"
    )
    request = models.JSONField(default=list, help_text="per container (init first): {vendor: request}")
    nodes = models.JSONField(default=list, help_text="per node: verdict, reason, score and per-device detail")
    policies = models.JSONField(default=dict)
    hami_release = models.CharField(
        max_length=16,
        blank=True,
        db_index=True,
        help_text="the HAMi release whose rules judged it (HAMI_VERSION)",
    )
    ca_release = models.CharField(
        max_length=16, blank=True, help_text="the Cluster Autoscaler release it followed (CA_VERSION)"
    )
    pod_spec = models.JSONField(
        default=dict,
        blank=True,
        help_text="the pod as HAMi reads it (annotations, containers' resources), to judge it again under "
        "another release; {} when not kept",
    )
    latency_ms = models.FloatField(default=0.0, help_text="answer latency of the last call")
    count = models.PositiveIntegerField(default=1)
    first_seen = models.DateTimeField(db_index=True)
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-last_seen"]
        indexes = [
            models.Index(fields=["pod_namespace", "pod_name"]),
            models.Index(fields=["verdict", "-last_seen"]),
        ]

    def __str__(self) -> str:
        return f"{self.pod_namespace}/{self.pod_name} {self.verdict} x{self.count}"

    def get_absolute_url(self) -> str:
        return reverse("dashboard:decision", args=[self.pk])


class CAEvent(models.Model):
    """A Kubernetes Event about a pending pod, from CA or the scheduler, with its parsed message."""

    class Reason(models.TextChoices):
        # labelled with the reason as Kubernetes writes it, the one spelling every page shows
        TRIGGERED_SCALE_UP = "TriggeredScaleUp", "TriggeredScaleUp"
        NOT_TRIGGER_SCALE_UP = "NotTriggerScaleUp", "NotTriggerScaleUp"
        FAILED_SCHEDULING = "FailedScheduling", "FailedScheduling"

    event_uid = models.CharField(max_length=128, unique=True, help_text="Event metadata.uid")
    reason = models.CharField(max_length=32, choices=Reason.choices, db_index=True)
    source = models.CharField(max_length=128, blank=True, help_text="reporting component")
    pod_uid = models.CharField(max_length=128, db_index=True, blank=True)
    pod_namespace = models.CharField(max_length=253, db_index=True)
    pod_name = models.CharField(max_length=253, db_index=True)
    message = models.TextField(help_text="raw event message")
    parsed = models.JSONField(default=dict, help_text="structure parsed from the message")
    groups = models.JSONField(default=list, help_text="node groups named by the event")
    count = models.PositiveIntegerField(default=1)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True, db_index=True)
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-last_seen", "-id"]
        verbose_name = "CA event"
        verbose_name_plural = "CA events"
        indexes = [models.Index(fields=["pod_namespace", "pod_name"])]

    def __str__(self) -> str:
        return f"{self.reason} {self.pod_namespace}/{self.pod_name}"


class AutoscalerStatus(models.Model):
    """One read of CA's ``cluster-autoscaler-status`` ConfigMap (key ``status``); changes only are kept."""

    fetched_at = models.DateTimeField(db_index=True)
    raw = models.TextField()
    parsed = models.JSONField(default=dict, help_text="YAML status, or {} when it is not YAML")
    error = models.TextField(blank=True, help_text="why the text did not parse")
    digest = models.CharField(max_length=64, db_index=True)

    class Meta:
        ordering = ["-fetched_at"]
        verbose_name = "autoscaler status"
        verbose_name_plural = "autoscaler statuses"

    def __str__(self) -> str:
        return f"cluster-autoscaler-status {self.fetched_at:%Y-%m-%d %H:%M:%S}"

    @property
    def node_groups(self) -> list[dict]:
        """Per-group health/scale-up lines, from the YAML (v1.30+) layout when present."""
        groups = self.parsed.get("nodeGroups") if isinstance(self.parsed, dict) else None
        return groups if isinstance(groups, list) else []

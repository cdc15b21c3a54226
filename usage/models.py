"""The usage store: one row per live node (what HAMi's live filter would count) and per counted pod.

The database is the source of truth every web replica reads (``usage.store`` puts a small process
cache in front of it). Every write bumps ``UsageState.generation`` in the same transaction and stamps
the rows it wrote with it, so a reader refreshes only what changed since the generation it holds.
"""

from __future__ import annotations

from django.db import models

__all__ = [
    "UsageState",
    "NodeUsage",
    "PodAllocation",
    "UsageFinding",
    "PendingPod",
    "NodeFacts",
    "DraObject",
    "BlindSpotSnapshot",
]


class UsageState(models.Model):
    """Singleton (pk=1): the store's generation and how recently the source confirmed all of it."""

    generation = models.BigIntegerField(default=0)
    confirmed_at = models.DateTimeField(
        null=True, blank=True, help_text="last time the watcher or a relist confirmed every node's usage"
    )
    relisted_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=300, blank=True)
    error = models.TextField(blank=True, help_text="the last pod read's error, empty once a read succeeds")


class NodeUsage(models.Model):
    """A live node's per-device usage: ``{uuid: {used, usedmem, usedcores, mig, unhealthy, pods}}``."""

    name = models.CharField(max_length=253, unique=True)
    devices = models.JSONField(default=dict, blank=True)
    pod_count = models.IntegerField(default=0)
    observed_at = models.DateTimeField(db_index=True, help_text="when the source last confirmed this usage")
    changed_at = models.DateTimeField()
    version = models.BigIntegerField(db_index=True, help_text="UsageState.generation of the last write")
    content_hash = models.CharField(max_length=64, blank=True)
    gone = models.BooleanField(default=False, help_text="the node was deleted: never a live node again")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class PodAllocation(models.Model):
    """A pod HAMi counts: assigned by ``hami.io/vgpu-node``, not Succeeded/Failed, not deleted.

    ``devices`` holds the collapsed allocation as ``[vendor, uuid, type, usedmem, usedcores, slots]``
    rows; a pod whose annotation did not decode holds nothing and carries the ``error``.
    """

    uid = models.CharField(max_length=100, unique=True)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    node = models.CharField(max_length=253, db_index=True)
    devices = models.JSONField(default=list, blank=True)
    mig = models.JSONField(default=list, blank=True, help_text="[gpuUUID, profile, start, size] reservations")
    terminating = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    pod_info = models.JSONField(
        default=dict,
        blank=True,
        help_text="the pod annotations vendor rules read from a card's pods (MetaX app class)",
    )
    content_hash = models.CharField(max_length=64, blank=True)
    resource_version = models.CharField(
        max_length=40, blank=True, help_text="the Pod's resourceVersion: a relist skips pods that kept it"
    )
    observed_at = models.DateTimeField()

    class Meta:
        ordering = ["namespace", "name"]
        indexes = [models.Index(fields=["namespace", "name"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class UsageFinding(models.Model):
    """Something about a pod's allocation an operator must see; resolved when it goes away."""

    class Kind(models.TextChoices):
        MALFORMED = "malformed-annotation", "malformed allocation annotation"
        UNKNOWN_DEVICE = "unknown-device", "pod holds a device its node does not register"
        MIG = "mig", "MIG reservation inconsistent with the device"

    kind = models.CharField(max_length=30, choices=Kind.choices, db_index=True)
    pod_uid = models.CharField(max_length=100, db_index=True)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    node = models.CharField(max_length=253, db_index=True)
    device = models.CharField(max_length=200, blank=True)
    detail = models.TextField()
    opened_at = models.DateTimeField(db_index=True)
    resolved_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-opened_at"]
        indexes = [models.Index(fields=["pod_uid", "kind", "device"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


class PendingPod(models.Model):
    """A pod waiting for a node that asks for HAMi resources: what CA's filter and HAMi's scheduler
    both judge (``pod``: the fields they read), with HAMi's ``FailedScheduling`` message when its
    events carry one. Kept by the same relists and watch as the allocations, so it ages with them."""

    uid = models.CharField(max_length=100, unique=True)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    pod = models.JSONField(default=dict, help_text="metadata (labels, annotations) and the scheduling spec")
    created_at = models.DateTimeField(null=True, blank=True, help_text="the Pod's creationTimestamp")
    unschedulable = models.BooleanField(
        default=False, help_text="PodScheduled=False with reason Unschedulable: CA considers it"
    )
    reasons = models.TextField(blank=True, help_text="HAMi's last FailedScheduling message")
    content_hash = models.CharField(max_length=64, blank=True)
    observed_at = models.DateTimeField()

    class Meta:
        ordering = ["namespace", "name"]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class NodeFacts(models.Model):
    """What CA's simulation reads of a live node besides its devices: ``node`` (labels, taints,
    ``unschedulable``, ``status.allocatable``) and ``requested``, what the pods bound to it request as
    kube-scheduler sums them (``cpu`` millicores, ``memory`` bytes, ``pods``, extended ``scalars``)."""

    name = models.CharField(max_length=253, unique=True)
    node = models.JSONField(default=dict)
    requested = models.JSONField(default=dict, blank=True)
    observed_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "node facts"

    def __str__(self) -> str:
        return self.name


class DraObject(models.Model):
    """One DRA object of the cluster (``resource.k8s.io/v1``): a ResourceSlice, ResourceClaim,
    ResourceClaimTemplate or DeviceClass, as the API served it (``usage.dra`` keeps them in step)."""

    kind = models.CharField(max_length=40, db_index=True)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    resource_version = models.CharField(max_length=64, blank=True)
    body = models.JSONField(help_text="the object as the API served it (managedFields dropped)")
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "namespace", "name"], name="dra_object_key")]
        ordering = ["kind", "namespace", "name"]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}".replace(" /", " ")


class BlindSpotSnapshot(models.Model):
    """Singleton (pk=1): the blind spot's Prometheus series as the worker last computed them
    (``usage.tasks.refresh_blind_spot``), so a ``/metrics`` scrape reads one row instead of judging
    every pending pod (10,000 of them took a web worker 11-20 s and up to 484 MiB)."""

    series = models.JSONField(default=dict, help_text="{metric name: [[labels, value], ...]}")
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(default=0.0, help_text="how long the computation took")
    error = models.TextField(blank=True, help_text="why the last computation failed, empty once one succeeds")

"""Simulation sessions: hypothetical device allocations held across requests (docs/sessions.md).

State lives in the database so any web replica can serve any request. A mutation locks the
``SimulationSession`` row (``select_for_update``), so concurrent writers to one session serialise
while different sessions proceed in parallel.

- ``SessionNode``: a node the session knows, with the device inventory frozen when it entered and
  the current device usage (HAMi ``DeviceUsage`` fields, MIG placements included).
- ``SessionPlacement``: a placed pod, the devices each container holds, and the exact usage delta the
  placement added to each device (so removing it subtracts exactly what it added).
- ``SessionCheckpoint``: a fork; a full snapshot of nodes and placements to revert to.
"""

from __future__ import annotations

import uuid

from django.db import models

__all__ = ["SimulationSession", "SessionNode", "SessionPlacement", "SessionCheckpoint"]


class SimulationSession(models.Model):
    """One CA-like simulation: a revisioned set of placements with a checkpoint stack and a TTL."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200, blank=True)
    owner = models.CharField(
        max_length=300,
        blank=True,
        help_text="the identity that made it (cert:<CN or SAN>, user:<username>, anonymous); "
        "empty: made by the server itself (dashboard form, demo)",
    )
    revision = models.PositiveBigIntegerField(default=0, help_text="bumped by every successful mutation")
    depth = models.PositiveIntegerField(default=0, help_text="number of open checkpoints (forks)")
    stored_bytes = models.PositiveBigIntegerField(
        default=0, help_text="JSON its nodes, placements and checkpoints store (SESSION_MAX_BYTES bounds it)"
    )
    ttl_seconds = models.PositiveIntegerField(default=900)
    hami_release = models.CharField(
        max_length=16,
        blank=True,
        help_text="the HAMi release whose rules judged its last change (HAMI_VERSION)",
    )
    ca_release = models.CharField(
        max_length=16, blank=True, help_text="the Cluster Autoscaler release it followed then (CA_VERSION)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "expires_at"], name="session_owner_live")]

    def __str__(self) -> str:
        return f"{self.name or self.id} (rev {self.revision})"


class SessionNode(models.Model):
    """A node in a session: frozen inventory plus current usage (``devices``, in inventory order)."""

    session = models.ForeignKey(SimulationSession, on_delete=models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=253)
    position = models.PositiveIntegerField(default=0, help_text="order in which the node entered")
    node_group = models.CharField(max_length=253, blank=True)
    digest = models.CharField(max_length=64, help_text="digest of the Node object first seen")
    devices = models.JSONField(default=list)
    pair_scores = models.JSONField(default=dict, blank=True)
    cordoned = models.JSONField(default=list, blank=True)
    inventory_error = models.CharField(
        max_length=500,
        blank=True,
        help_text="why the node has no usable devices (entered with a device-less pod)",
    )

    class Meta:
        ordering = ["session", "position"]
        constraints = [models.UniqueConstraint(fields=["session", "name"], name="session_node_unique_name")]

    def __str__(self) -> str:
        return self.name


class SessionPlacement(models.Model):
    """A pod placed in a session: its chosen devices and the usage delta it applied."""

    session = models.ForeignKey(SimulationSession, on_delete=models.CASCADE, related_name="placements")
    pod_uid = models.CharField(max_length=300)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253, blank=True)
    node_name = models.CharField(max_length=253)
    seq = models.PositiveBigIntegerField(default=0, help_text="placement order")
    containers = models.JSONField(default=list)
    delta = models.JSONField(default=dict)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "pod_uid"], name="session_placement_unique_pod")
        ]

    def __str__(self) -> str:
        return f"{self.pod_uid} -> {self.node_name}"


class SessionCheckpoint(models.Model):
    """A fork: the session's nodes and placements when it was pushed (``depth`` 1 = bottom)."""

    session = models.ForeignKey(SimulationSession, on_delete=models.CASCADE, related_name="checkpoints")
    depth = models.PositiveIntegerField()
    snapshot = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "depth"]
        constraints = [
            models.UniqueConstraint(fields=["session", "depth"], name="session_checkpoint_unique_depth")
        ]

    def __str__(self) -> str:
        return f"{self.session_id} @ {self.depth}"

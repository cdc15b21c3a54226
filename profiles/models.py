"""Models of the profiles app.

- ``NodeGroup``: a Cluster Autoscaler node group and how to recognise its nodes.
- ``DeviceProfile`` + ``DeviceRow``: what a fresh node of the group registers (for scale-from-zero).
- ``NodeInventory``: one row per real node seen by the cluster sync.
- ``DriftFinding``: one problem of a registered node against its group's profile.
- ``CatalogVersion``: a one-row generation counter so every process notices profile edits.
- ``HamiInstall``: the HAMi release the cluster runs, as the last sync read it (one row).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from hami_sim.engine.quantity import QuantityError, parse_quantity

from .choices import DriftKind, InventorySource, Severity, Vendor, vendor_choices
from .constants import DEFAULT_CAPACITY

_INT64_MAX = 2**63 - 1

__all__ = [
    "NodeGroup",
    "DeviceProfile",
    "DeviceRow",
    "NodeInventory",
    "DriftFinding",
    "CatalogVersion",
    "HamiInstall",
]


def _default_capacity() -> dict:
    return dict(DEFAULT_CAPACITY)


def _check_str_map(value: object, field: str) -> None:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValidationError({field: f"{field} must be an object of string keys to string values"})


def _check_quantities(value: dict, field: str) -> None:
    """Every value a non-negative Kubernetes quantity within int64, as the API server would demand.

    Without this ``"1e309"`` or ``"-1Gi"`` was stored and rendered into every template node;
    the engine then refused those nodes at request time, far from the edit.
    """
    problems = []
    for key, text in value.items():
        try:
            number = parse_quantity(text)
        except QuantityError as exc:
            problems.append(f"{key}: {text[:40]!r} is not a Kubernetes quantity ({exc})")
            continue
        if number < 0:
            problems.append(f"{key}: {text!r} is negative; capacities are zero or more")
        elif number > _INT64_MAX:
            problems.append(f"{key}: {text!r} is larger than a node can report (int64)")
    if problems:
        raise ValidationError({field: problems})


class NodeGroup(models.Model):
    """A CA node group (``name`` = CA's node group id) and the rule for its template inventories."""

    name = models.CharField(max_length=253, unique=True, help_text="CA's node group id")
    ca_node_group_id = models.CharField(
        max_length=300,
        null=True,
        blank=True,
        unique=True,
        help_text="CA's node group id when it differs from the name (e.g. the ASG name); the gRPC expander maps by it first",
    )
    match_labels = models.JSONField(
        default=dict,
        blank=True,
        help_text='labels every node of the group carries, e.g. {"eks.amazonaws.com/nodegroup": "gpu"}',
    )
    provider = models.CharField(max_length=50, blank=True, db_index=True)
    # "instance_type" is reserved by django-simple-history's historical models; the API and YAML
    # still call this field instance_type.
    machine_type = models.CharField("instance type", max_length=100, blank=True, db_index=True)
    min_size = models.PositiveIntegerField(default=0)
    max_size = models.PositiveIntegerField(default=0)
    inventory_source = models.CharField(
        max_length=20,
        choices=InventorySource.choices,
        default=InventorySource.ANNOTATION_FIRST,
        db_index=True,
    )
    labels = models.JSONField(default=dict, blank=True, help_text="extra labels for the template node")
    taints = models.JSONField(
        default=list, blank=True, help_text="taints for the template node (Kubernetes JSON)"
    )
    capacity = models.JSONField(
        default=_default_capacity,
        blank=True,
        help_text="template node capacity besides devices (cpu, memory, pods)",
    )
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        _check_str_map(self.match_labels, "match_labels")
        _check_str_map(self.labels, "labels")
        _check_str_map(self.capacity, "capacity")
        _check_quantities(self.capacity, "capacity")
        if not isinstance(self.taints, list) or not all(
            isinstance(t, dict) and t.get("key") for t in self.taints
        ):
            raise ValidationError({"taints": "taints must be a list of objects with at least a key"})
        if self.max_size and self.min_size > self.max_size:
            raise ValidationError(
                {"min_size": f"min_size {self.min_size} is larger than max_size {self.max_size}"}
            )
        if self.match_labels:
            # JSON equality in SQL differs per backend; compare in Python to be exact everywhere.
            for other in NodeGroup.objects.exclude(pk=self.pk).only("name", "match_labels"):
                if other.match_labels == self.match_labels:
                    raise ValidationError(
                        {
                            "match_labels": f"match_labels are the same as node group {other.name!r}'s; nodes would be ambiguous"
                        }
                    )


class DeviceProfile(models.Model):
    """The devices a fresh node of a group registers (one per group and vendor)."""

    #: what a version covers besides the rows (``devices_snapshot``)
    VERSIONED_FIELDS = ("node_group_id", "vendor", "pair_scores", "notes", "devices_snapshot")

    node_group = models.ForeignKey(NodeGroup, on_delete=models.CASCADE, related_name="profiles")
    vendor = models.CharField(max_length=20, choices=vendor_choices, default=Vendor.default)
    pair_scores = models.JSONField(
        default=dict, blank=True, help_text='optional topology scores by device index: {"0": {"1": 100}}'
    )
    # set by profiles.services.stamp_version (the one place versions are decided)
    version = models.PositiveIntegerField(default=1, editable=False, help_text="bumped on every change")
    # The device rows as of this save, so a history record can restore them (revert in the admin).
    devices_snapshot = models.JSONField(default=list, blank=True, editable=False)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["node_group__name", "vendor"]
        constraints = [
            models.UniqueConstraint(fields=["node_group", "vendor"], name="profile_unique_group_vendor")
        ]

    def __str__(self) -> str:
        return f"{self.node_group.name} / {self.vendor}"

    def clean(self) -> None:
        scores = self.pair_scores
        if not isinstance(scores, dict):
            raise ValidationError({"pair_scores": "pair_scores must be an object {index: {index: score}}"})
        for a, row in scores.items():
            if not str(a).isdigit() or not isinstance(row, dict):
                raise ValidationError(
                    {"pair_scores": f"pair_scores key {a!r} must be a device index with an object value"}
                )
            for b, score in row.items():
                if not str(b).isdigit() or isinstance(score, bool) or not isinstance(score, int):
                    raise ValidationError(
                        {"pair_scores": f"pair_scores[{a}][{b}] must be an integer score by device index"}
                    )

    def rows_data(self) -> list[dict]:
        return [row.as_dict() for row in self.devices.order_by("position", "id")]


class DeviceRow(models.Model):
    """``quantity`` identical devices of a profile: one row per kind of card."""

    profile = models.ForeignKey(DeviceProfile, on_delete=models.CASCADE, related_name="devices")
    position = models.PositiveIntegerField(
        default=0, help_text="order of this row in the rendered annotation"
    )
    type = models.CharField(max_length=100, help_text="device model as registered, e.g. NVIDIA A10")
    devmem = models.IntegerField(help_text="device memory in MiB")
    devcore = models.IntegerField(default=100)
    count = models.IntegerField(default=10, help_text="split count: how many tasks may share the device")
    numa = models.IntegerField(default=0)
    mode = models.CharField(max_length=20, default="hami-core", help_text="hami-core, mig or mps")
    mig_profiles = models.JSONField(
        default=list, blank=True, help_text="v2.10 migProfiles, as in the annotation"
    )
    health = models.BooleanField(
        default=True, help_text="registered health (a fresh node's devices are healthy)"
    )
    extra = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "vendor extras: custominfo (Ascend NetworkID, AMD pciBDF, any JSON-annotation vendor); "
            'qosPolicy (MetaX sGPU); profiles (Enflame DRS, e.g. {"1g.6gb": "0"}); '
            "instance_type (AWS Neuron). See docs/profiles.md"
        ),
    )
    quantity = models.PositiveIntegerField(default=1, help_text="how many such devices a node has")
    history = HistoricalRecords()

    class Meta:
        ordering = ["profile", "position", "id"]

    def __str__(self) -> str:
        return f"{self.quantity} x {self.type} {self.devmem} MiB"

    def as_dict(self) -> dict:
        """The row as the renderer reads it; ``health``/``extra`` only when not the default, so
        NVIDIA rows (and the history snapshots of existing profiles) keep their shape."""
        out = {
            "type": self.type,
            "devmem": self.devmem,
            "devcore": self.devcore,
            "count": self.count,
            "numa": self.numa,
            "mode": self.mode,
            "mig_profiles": self.mig_profiles or [],
            "quantity": self.quantity,
        }
        if self.health is False:
            out["health"] = False
        if self.extra:
            out["extra"] = self.extra
        return out

    def clean(self) -> None:
        from .render import row_errors

        # the inline admin sets an unsaved parent profile: its vendor decides the rules
        vendor = (
            self.profile.vendor if (self.profile_id or DeviceRow.profile.is_cached(self)) else Vendor.default
        )
        errors = row_errors(self.as_dict(), vendor)
        if errors:
            raise ValidationError(errors)


class NodeInventory(models.Model):
    """A real node as last seen by the cluster sync: labels, raw registration, parsed devices."""

    name = models.CharField(max_length=253, unique=True)
    uid = models.CharField(max_length=64, blank=True, db_index=True)
    node_group = models.ForeignKey(
        NodeGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="inventories"
    )
    labels = models.JSONField(default=dict, blank=True)
    annotations = models.JSONField(
        default=dict,
        blank=True,
        help_text="raw registration annotations (hami.io/* and every vendor's register key)",
    )
    capacity = models.JSONField(
        default=dict,
        blank=True,
        help_text="status.capacity values capacity-based vendors register from (MLU, XPU, Neuron, ...)",
    )
    devices = models.JSONField(default=list, blank=True, help_text="parsed devices (annotation JSON form)")
    parse_error = models.TextField(blank=True)
    content_hash = models.CharField(max_length=64, blank=True, help_text="digest of labels + annotations")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)
    registered_at = models.DateTimeField(
        null=True, blank=True, help_text="first time a registration was seen"
    )
    gone_at = models.DateTimeField(null=True, blank=True, db_index=True)
    stale = models.BooleanField(default=False, help_text="the last sync failed; this is the last good read")
    sync_error = models.TextField(blank=True)
    drift_checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "node inventories"

    def __str__(self) -> str:
        return self.name


class DriftFinding(models.Model):
    """One difference between a node's registration and its group's profile; resolved when gone."""

    inventory = models.ForeignKey(NodeInventory, on_delete=models.CASCADE, related_name="findings")
    node_group = models.ForeignKey(
        NodeGroup, null=True, blank=True, on_delete=models.CASCADE, related_name="findings"
    )
    kind = models.CharField(max_length=20, choices=DriftKind.choices, db_index=True)
    field = models.CharField(
        max_length=50, blank=True, help_text="what differs, e.g. devmem, health, device count"
    )
    device = models.CharField(
        max_length=100, blank=True, help_text="device index (and UUID) the finding is about"
    )
    expected = models.TextField(blank=True)
    actual = models.TextField(blank=True)
    severity = models.CharField(
        max_length=10, choices=Severity.choices, default=Severity.WARNING, db_index=True
    )
    opened_at = models.DateTimeField(db_index=True)
    resolved_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-opened_at"]
        indexes = [models.Index(fields=["inventory", "kind", "field", "device"])]

    def __str__(self) -> str:
        return f"{self.inventory.name}: {self.kind} {self.field} {self.device}".strip()

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class CatalogVersion(models.Model):
    """A single row whose ``generation`` grows with every group/profile edit (cross-process invalidation)."""

    generation = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "catalog version"


class HamiInstall(models.Model):
    """The HAMi release the cluster runs, as the cluster sync last read it (one row, ``pk=1``).

    Read from the images of the HAMi scheduler's Deployment and the device plugin's DaemonSet
    (``profiles.hami_install``); ``release`` is the minor (``"2.9"``) the rules follow, empty when
    nothing in the cluster named one. A failed read keeps the last release and says why in ``error``.
    """

    release = models.CharField(max_length=16, blank=True, help_text='e.g. "2.9"; empty: not known')
    version = models.CharField(max_length=64, blank=True, help_text='as the image tag says it, e.g. "v2.9.0"')
    basis = models.CharField(max_length=300, blank=True, help_text="where the release was read")
    workloads = models.JSONField(
        default=list,
        blank=True,
        help_text="per HAMi container: kind, name, container, image, version, release",
    )
    error = models.TextField(blank=True, help_text="why the last read failed (the release is the last known)")
    checked_at = models.DateTimeField(null=True, blank=True)
    changed_at = models.DateTimeField(null=True, blank=True, help_text="when the release last changed")

    class Meta:
        verbose_name = "HAMi install"

    def __str__(self) -> str:
        return f"HAMi {self.version or self.release or 'unknown'}"

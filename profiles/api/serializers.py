"""REST serializers. The YAML import/export uses the same shapes (see ``profiles/yamlio.py``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from drf_spectacular.utils import OpenApiExample, extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from hami_sim.engine.vendors import default_word
from hami_sim.runtime.models import TaskRun

from ..models import DeviceProfile, DeviceRow, DriftFinding, NodeGroup, NodeInventory
from ..render import render_registration, row_errors
from ..services import save_profile
from ..vendors import SPECS, profile_errors, row_defaults

__all__ = [
    "DeviceRowSerializer",
    "DeviceProfileSerializer",
    "NestedDeviceProfileSerializer",
    "NodeGroupSerializer",
    "NodeInventorySerializer",
    "DriftFindingSerializer",
    "TaskRunSerializer",
]

ROW_DEFAULTS = row_defaults(default_word())


def _django_errors(exc: DjangoValidationError) -> serializers.ValidationError:
    return serializers.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)


class DeviceRowSerializer(serializers.ModelSerializer):
    """One row; checked against its profile's vendor by the profile serializer (which knows it).

    ``type`` and ``devmem`` may be omitted where the vendor fixes them (capacity-based vendors).
    """

    class Meta:
        model = DeviceRow
        fields = [
            "type",
            "devmem",
            "devcore",
            "count",
            "numa",
            "mode",
            "mig_profiles",
            "health",
            "extra",
            "quantity",
        ]
        extra_kwargs = {"type": {"required": False}, "devmem": {"required": False}}


def _rows_errors(vendor: str, rows: list[dict]) -> dict | None:
    """DRF-shaped errors ({"devices": [...]}) of ``rows`` for ``vendor``, None when all are valid."""
    full = [{**row_defaults(vendor), **row} for row in rows]
    per_row = [row_errors(row, vendor) for row in full]
    if any(per_row):
        return {"devices": [{k: [v] for k, v in e.items()} for e in per_row]}
    problem = profile_errors(vendor, full)
    return {"devices": [problem]} if problem else None


class ListingChoiceField(serializers.ChoiceField):
    """A choice field whose error lists the valid values, so a typo (``vendor: Nvidia``) names its fix."""

    default_error_messages = {"invalid_choice": '"{input}" is not a valid choice; valid: {valid}'}

    def to_internal_value(self, data):
        if data == "" and self.allow_blank:
            return ""
        try:
            return self.choice_strings_to_values[str(data)]
        except KeyError:
            self.fail("invalid_choice", input=data, valid=", ".join(self.choice_strings_to_values))


class NestedDeviceProfileSerializer(serializers.ModelSerializer):
    """A profile inside a node group (YAML and the group's detail): no group field."""

    serializer_choice_field = ListingChoiceField
    devices = DeviceRowSerializer(many=True)
    register_annotation = serializers.SerializerMethodField(
        help_text="the rendered registration annotation (e.g. hami.io/node-nvidia-register); empty for capacity-based vendors"
    )
    registration = serializers.SerializerMethodField(
        help_text="what a fresh node carries for this profile: annotations, status.capacity (and allocatable) values, labels"
    )

    class Meta:
        model = DeviceProfile
        fields = [
            "id",
            "vendor",
            "version",
            "pair_scores",
            "notes",
            "devices",
            "register_annotation",
            "registration",
        ]
        validators: list = []  # (group, vendor) uniqueness is checked where the group is known
        read_only_fields = ["id", "version", "register_annotation", "registration"]

    def _registration(self, obj: DeviceProfile):
        cache = self.context.setdefault("_registrations", {}) if isinstance(self.context, dict) else {}
        key = (obj.pk, obj.version)
        if key not in cache:
            rows = [row.as_dict() for row in obj.devices.all()]
            group = obj.node_group
            cache[key] = (
                render_registration(
                    group.name, obj.vendor, rows, obj.pair_scores, instance_type=group.machine_type
                )
                if rows
                else None
            )
        return cache[key]

    def get_register_annotation(self, obj: DeviceProfile) -> str:
        reg = self._registration(obj)
        return next(iter(reg.annotations.values()), "") if reg is not None else ""

    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                "capacity": {"type": "object", "additionalProperties": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        }
    )
    def get_registration(self, obj: DeviceProfile) -> dict:
        reg = self._registration(obj)
        if reg is None:
            return {"annotations": {}, "capacity": {}, "labels": {}}
        return {"annotations": reg.annotations, "capacity": reg.capacity, "labels": reg.labels}

    def validate_devices(self, value: list) -> list:
        if not value:
            raise serializers.ValidationError("a profile needs at least one device row")
        return value

    def validate(self, attrs: dict) -> dict:
        probe = DeviceProfile(pair_scores=attrs.get("pair_scores", {}))
        try:
            probe.clean()
        except DjangoValidationError as exc:
            raise _django_errors(exc) from None
        instance = getattr(self, "instance", None)
        instance = instance if isinstance(instance, DeviceProfile) else None
        vendor = attrs.get("vendor", getattr(instance, "vendor", default_word()))
        if vendor not in SPECS:
            raise serializers.ValidationError({"vendor": f"unknown vendor {vendor!r}"})
        if attrs.get("pair_scores") and not SPECS[vendor].pair_scores:
            raise serializers.ValidationError(
                {
                    "pair_scores": f"pair_scores are NVIDIA topology scores (hami.io/node-nvidia-score); {vendor} has none"
                }
            )
        rows = attrs.get("devices")
        if rows is None and instance is not None:
            rows = instance.rows_data()
        errors = _rows_errors(vendor, rows or [])
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


def complete_rows(vendor: str, rows: list[dict]) -> list[dict]:
    """``rows`` as given, missing fields taking the vendor's defaults."""
    defaults = row_defaults(vendor)
    return [{**defaults, **row} for row in rows]


class DeviceProfileSerializer(NestedDeviceProfileSerializer):
    node_group = serializers.SlugRelatedField(slug_field="name", queryset=NodeGroup.objects.all())

    class Meta(NestedDeviceProfileSerializer.Meta):
        fields = [
            "id",
            "node_group",
            *NestedDeviceProfileSerializer.Meta.fields[1:],
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "version", "register_annotation", "created_at", "updated_at"]

    def validate(self, attrs: dict) -> dict:
        attrs = super().validate(attrs)
        group = attrs.get("node_group", getattr(self.instance, "node_group", None))
        vendor = attrs.get("vendor", getattr(self.instance, "vendor", default_word()))
        twins = DeviceProfile.objects.filter(node_group=group, vendor=vendor)
        if self.instance is not None:
            twins = twins.exclude(pk=self.instance.pk)
        if group is not None and twins.exists():
            raise serializers.ValidationError(
                {"vendor": f"node group {group.name} already has a {vendor} profile"}
            )
        return attrs

    @transaction.atomic
    def create(self, validated_data: dict) -> DeviceProfile:
        rows = validated_data.pop("devices")
        profile = DeviceProfile(**validated_data)
        return save_profile(profile, rows=complete_rows(profile.vendor, rows))

    @transaction.atomic
    def update(self, instance: DeviceProfile, validated_data: dict) -> DeviceProfile:
        rows = validated_data.pop("devices", None)
        vendor = validated_data.get("vendor", instance.vendor)
        # header and rows in one request are one version
        save_profile(instance, rows=None if rows is None else complete_rows(vendor, rows), **validated_data)
        instance.refresh_from_db()
        return instance


@extend_schema_serializer(
    examples=[
        OpenApiExample(
            "A cold L40S group that may grow to 4 nodes",
            # Swagger UI's "Try it out" body: without it the generated one fails (match_labels
            # "string", min_size 9223372036854776000)
            value={
                "name": "gpu-l40s",
                "match_labels": {"eks.amazonaws.com/nodegroup": "gpu-l40s"},
                "provider": "aws",
                "instance_type": "g6e.12xlarge",
                "min_size": 0,
                "max_size": 4,
                "inventory_source": "annotation-first",
                "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                "description": "4 x L40S (48 GB) per node",
            },
            request_only=True,
        )
    ]
)
class NodeGroupSerializer(serializers.ModelSerializer):
    serializer_choice_field = ListingChoiceField
    profiles = NestedDeviceProfileSerializer(many=True, read_only=True)
    open_findings = serializers.IntegerField(read_only=True, required=False)
    template_url = serializers.SerializerMethodField()
    instance_type = serializers.CharField(
        source="machine_type", required=False, allow_blank=True, max_length=100
    )

    class Meta:
        model = NodeGroup
        fields = [
            "id",
            "name",
            "ca_node_group_id",
            "match_labels",
            "provider",
            "instance_type",
            "min_size",
            "max_size",
            "inventory_source",
            "labels",
            "taints",
            "capacity",
            "description",
            "profiles",
            "open_findings",
            "template_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]

    def get_template_url(self, obj: NodeGroup) -> str:
        return f"/api/v1/node-groups/{obj.name}/template"

    def to_representation(self, instance: NodeGroup) -> dict:
        data = super().to_representation(instance)
        if (
            "open_findings" not in data
        ):  # a just created/updated group is not annotated; the schema requires it
            data["open_findings"] = instance.findings.filter(resolved_at__isnull=True).count()
        return data

    def validate_name(self, value: str) -> str:
        if "/" in value or not value.strip() or value != value.strip():
            raise serializers.ValidationError(
                "name must be CA's node group id: no slashes or surrounding spaces"
            )
        return value

    def validate(self, attrs: dict) -> dict:
        probe = NodeGroup(pk=getattr(self.instance, "pk", None))
        if self.instance is not None:  # partial updates validate against the stored values
            for f in (
                "name",
                "match_labels",
                "machine_type",
                "min_size",
                "max_size",
                "labels",
                "taints",
                "capacity",
            ):
                setattr(probe, f, getattr(self.instance, f))
        for key, value in attrs.items():
            setattr(probe, key, value)
        try:
            probe.clean()
        except DjangoValidationError as exc:
            raise _django_errors(exc) from None
        return attrs


class NodeInventorySerializer(serializers.ModelSerializer):
    node_group = serializers.SlugRelatedField(slug_field="name", read_only=True)
    open_findings = serializers.IntegerField(read_only=True, required=False)

    class Meta:
        model = NodeInventory
        fields = [
            "id",
            "name",
            "uid",
            "node_group",
            "labels",
            "annotations",
            "capacity",
            "devices",
            "parse_error",
            "first_seen",
            "last_seen",
            "registered_at",
            "gone_at",
            "stale",
            "sync_error",
            "drift_checked_at",
            "open_findings",
        ]


class DriftFindingSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="inventory.name", read_only=True)
    node_group = serializers.SlugRelatedField(slug_field="name", read_only=True)
    open = serializers.BooleanField(source="is_open", read_only=True)

    class Meta:
        model = DriftFinding
        fields = [
            "id",
            "node",
            "node_group",
            "kind",
            "field",
            "device",
            "expected",
            "actual",
            "severity",
            "opened_at",
            "resolved_at",
            "open",
        ]


class TaskRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = TaskRun
        fields = [
            "id",
            "task",
            "task_id",
            "started_at",
            "finished_at",
            "duration_ms",
            "outcome",
            "counts",
            "error",
            "progress",
        ]

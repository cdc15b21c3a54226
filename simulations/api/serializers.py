"""Request and response shapes of the sessions API (the estimate's are in ``estimate_serializers``).

Request serializers validate the ``/api/v1`` bodies before anything runs (a failure is a 400 in the
one error shape: ``detail`` plus the field errors). Kubernetes objects (Pods, Nodes) are checked to
be objects and then pass through untouched: the engine parses them with HAMi's rules, and its
errors (``malformed pod: ...``) are 400s too. Response serializers document the contract.
"""

from __future__ import annotations

from rest_framework import serializers

from ..sessions import MAX_TTL
from .estimate_input import MAX_GROUPS, MAX_PODS, resolve_node_group
from .estimate_serializers import EstimateOptionSerializer, EstimateRequestSerializer, EstimateSerializer
from .fields import JSONObjectField, StrictCharField, StrictIntegerField

__all__ = [
    "ErrorSerializer",
    "DeviceUsageSerializer",
    "ContainerDeviceSerializer",
    "SessionCreateSerializer",
    "SessionSummarySerializer",
    "SessionNodeSerializer",
    "PlacementSerializer",
    "PlacementRequestSerializer",
    "SessionSerializer",
    "RevisionSerializer",
    "EstimateRequestSerializer",
    "EstimateOptionSerializer",
    "EstimateSerializer",
    "resolve_node_group",
    "MAX_PODS",
    "MAX_GROUPS",
]


class ErrorSerializer(serializers.Serializer):
    """The one error shape of every ``/api/v1`` endpoint (``hami_sim.project.rest.exception_handler``)."""

    detail = serializers.CharField()
    reason = serializers.CharField(required=False, help_text="HAMi's reason string (422)")
    revision = serializers.IntegerField(required=False, help_text="the session's revision (412)")


class DeviceUsageSerializer(serializers.Serializer):
    uuid = serializers.CharField()
    index = serializers.IntegerField()
    type = serializers.CharField()
    count = serializers.IntegerField()
    used = serializers.IntegerField()
    devmem = serializers.IntegerField()
    usedmem = serializers.IntegerField()
    devcore = serializers.IntegerField()
    usedcores = serializers.IntegerField()
    numa = serializers.IntegerField()
    mode = serializers.CharField()
    health = serializers.BooleanField()
    migInUse = serializers.ListField(child=serializers.DictField(), required=False)  # noqa: N815


class ContainerDeviceSerializer(serializers.Serializer):
    uuid = serializers.CharField()
    type = serializers.CharField()
    usedmem = serializers.IntegerField()
    usedcores = serializers.IntegerField()


class SessionCreateSerializer(serializers.Serializer):
    name = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=200,
        error_messages={"invalid": "name must be a string of at most 200 characters"},
    )
    ttlSeconds = StrictIntegerField(  # noqa: N815
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_TTL,
        error_messages={
            "invalid": "ttlSeconds must be an integer number of seconds",
            "min_value": f"ttlSeconds must be between 1 and {MAX_TTL}",
            "max_value": f"ttlSeconds must be between 1 and {MAX_TTL}",
        },
    )


class SessionSummarySerializer(serializers.Serializer):
    """One live session in ``GET /api/v1/sessions`` (its nodes and placements: ``GET .../<id>``)."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    owner = serializers.CharField(help_text="the identity that created it (cert:..., user:..., anonymous)")
    revision = serializers.IntegerField()
    depth = serializers.IntegerField()
    expiresAt = serializers.DateTimeField(source="expires_at")  # noqa: N815
    hamiVersion = serializers.CharField(  # noqa: N815
        source="hami_release", help_text="the HAMi release whose rules judged its last change (HAMI_VERSION)"
    )
    caVersion = serializers.CharField(  # noqa: N815
        source="ca_release", help_text="the Cluster Autoscaler release it followed then (CA_VERSION)"
    )


class SessionNodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    nodeGroup = serializers.CharField(allow_null=True)  # noqa: N815
    devices = DeviceUsageSerializer(many=True)


class PlacementSerializer(serializers.Serializer):
    podUID = serializers.CharField()  # noqa: N815
    namespace = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    nodeName = serializers.CharField()  # noqa: N815
    containers = serializers.ListField(child=ContainerDeviceSerializer(many=True))
    revision = serializers.IntegerField(required=False)


class PlacementRequestSerializer(serializers.Serializer):
    pod = JSONObjectField(
        help_text="a Kubernetes Pod", error_messages={"invalid": "pod must be a Pod object"}
    )
    node = JSONObjectField(
        required=False,
        help_text="a Kubernetes Node (first placement on it)",
        error_messages={"invalid": "node must be a Node object"},
    )
    nodeName = StrictCharField(  # noqa: N815
        required=False,
        help_text="a node the session already knows",
        error_messages={"invalid": "nodeName must be a string"},
    )


class SessionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    owner = serializers.CharField(help_text="the identity that created it (cert:..., user:..., anonymous)")
    revision = serializers.IntegerField()
    depth = serializers.IntegerField()
    expiresAt = serializers.DateTimeField()  # noqa: N815
    hamiVersion = serializers.CharField(  # noqa: N815
        help_text="the HAMi release whose rules judged its last change (HAMI_VERSION)"
    )
    caVersion = serializers.CharField(  # noqa: N815
        help_text="the Cluster Autoscaler release it followed then (CA_VERSION)"
    )
    nodes = SessionNodeSerializer(many=True)
    placements = PlacementSerializer(many=True)


class RevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    depth = serializers.IntegerField(required=False)

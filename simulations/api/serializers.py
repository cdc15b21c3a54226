"""Request/response shapes of the sessions and estimate APIs, for the OpenAPI schema.

The views parse bodies with orjson and validate in ``simulations.sessions`` / the engine, so that
Kubernetes objects pass through untouched; these serializers document the contract.
"""

from __future__ import annotations

from rest_framework import serializers

__all__ = [
    "ErrorSerializer",
    "DeviceUsageSerializer",
    "ContainerDeviceSerializer",
    "SessionCreateSerializer",
    "SessionNodeSerializer",
    "PlacementSerializer",
    "PlacementRequestSerializer",
    "SessionSerializer",
    "RevisionSerializer",
    "EstimateRequestSerializer",
    "EstimateOptionSerializer",
    "EstimateSerializer",
]


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    reason = serializers.CharField(required=False, help_text="HAMi's reason string (422)")


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
    name = serializers.CharField(required=False, max_length=200)
    ttlSeconds = serializers.IntegerField(required=False, min_value=1, max_value=86400, default=900)  # noqa: N815


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
    pod = serializers.JSONField(help_text="a Kubernetes Pod")
    node = serializers.JSONField(required=False, help_text="a Kubernetes Node (first placement on it)")
    nodeName = serializers.CharField(required=False, help_text="a node the session already knows")  # noqa: N815


class SessionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    revision = serializers.IntegerField()
    depth = serializers.IntegerField()
    expiresAt = serializers.DateTimeField()  # noqa: N815
    nodes = SessionNodeSerializer(many=True)
    placements = PlacementSerializer(many=True)


class RevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    depth = serializers.IntegerField(required=False)


class EstimateRequestSerializer(serializers.Serializer):
    pods = serializers.ListField(
        child=serializers.JSONField(), help_text='Pod objects or {"pod": Pod, "count": n}'
    )
    nodeGroups = serializers.ListField(  # noqa: N815
        child=serializers.JSONField(), help_text='group names or {"name", "template": Node, "maxNewNodes"}'
    )
    expander = serializers.JSONField(
        required=False,
        help_text='least-waste (default), most-pods, least-nodes, priority, or a chain "priority,least-waste"',
    )
    priorities = serializers.DictField(
        required=False, help_text='{"<priority>": ["<regex>", ...]} (CA priority expander)'
    )
    maxNodesPerScaleUp = serializers.IntegerField(required=False, min_value=0, default=1000)  # noqa: N815
    existingNodes = serializers.BooleanField(  # noqa: N815
        required=False,
        default=False,
        help_text="place pods on live nodes' free device capacity first, as CA does (docs/usage.md)",
    )


class EstimateOptionSerializer(serializers.Serializer):
    nodeGroup = serializers.CharField()  # noqa: N815
    nodeCount = serializers.IntegerField()  # noqa: N815
    scheduledPods = serializers.ListField(child=serializers.CharField())  # noqa: N815
    unschedulablePods = serializers.DictField(child=serializers.CharField())  # noqa: N815
    nodes = serializers.ListField(child=serializers.DictField())
    waste = serializers.DictField(child=serializers.FloatField())


class ExistingNodesSerializer(serializers.Serializer):
    liveNodes = serializers.IntegerField()  # noqa: N815
    scheduledPods = serializers.ListField(child=serializers.CharField())  # noqa: N815
    placements = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))


class EstimateSerializer(serializers.Serializer):
    options = EstimateOptionSerializer(many=True)
    existingNodes = ExistingNodesSerializer(required=False)  # noqa: N815
    chosen = serializers.CharField(allow_null=True)
    explanation = serializers.CharField()

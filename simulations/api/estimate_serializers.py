"""Request and response shapes of ``POST /api/v1/estimate``.

The request serializer hands each part to ``estimate_input`` (the engine's types, its errors as
field errors: a 400 in the one error shape) so ``validated_data`` is what ``estimate()`` takes; the
response serializers document the contract in the OpenAPI schema.
"""

from __future__ import annotations

from dataclasses import replace

from drf_spectacular.utils import OpenApiExample, extend_schema_serializer
from rest_framework import serializers

from hami_sim.engine.estimate import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    EstimateError,
    GroupTemplate,
    PendingPods,
    parse_expander,
)
from hami_sim.engine.scaleup import DEFAULT_GROUP_BUDGET, DEFAULT_TOTAL_BUDGET
from hami_sim.project.conf import conf

from .estimate_input import (
    MAX_PODS,
    check_snapshot_work,
    parse_daemon_sets,
    parse_groups,
    parse_pods,
    parse_snapshot_nodes,
    parse_total,
    parse_upcoming,
)
from .fields import JSONListField, StrictBooleanField, StrictCharField, StrictIntegerField

__all__ = [
    "ESTIMATE_EXAMPLE",
    "EstimateRequestSerializer",
    "EstimateOptionSerializer",
    "EstimateSerializer",
]


def _engine_checked(parse, value: object):
    try:
        return parse(value)
    except EstimateError as exc:
        raise serializers.ValidationError(str(exc)) from None


#: Swagger UI's "Try it out" body for the estimate: runs as it is against the demo's node groups.
ESTIMATE_EXAMPLE = {
    "pods": [
        {
            "pod": {
                "metadata": {"name": "llm-serving-0", "namespace": "ml"},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "resources": {
                                "limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "30000"},
                                "requests": {"cpu": "4", "memory": "16Gi"},
                            },
                        }
                    ]
                },
            },
            "count": 4,
        }
    ],
    "nodeGroups": ["gpu-a10", "gpu-h100"],
    "expander": "least-waste",
}


@extend_schema_serializer(
    examples=[
        OpenApiExample("Four 30000 MiB pods on the demo's groups", value=ESTIMATE_EXAMPLE, request_only=True)
    ]
)
class EstimateRequestSerializer(serializers.Serializer):
    """``POST /api/v1/estimate`` (docs/sessions.md); ``validated_data`` holds what ``estimate()`` takes."""

    pods = JSONListField(help_text='Pod objects or {"pod": Pod, "count": n}')
    nodeGroups = JSONListField(  # noqa: N815
        help_text='group names or {"name", "template": Node, "maxNewNodes"}'
    )
    expander = serializers.JSONField(
        required=False,
        help_text="least-waste (default), most-pods, least-nodes, priority, random, grpc (hami-sim's gRPC "
        'expander step), or a chain "grpc,least-waste"; price needs node prices and is refused',
    )
    priorities = serializers.JSONField(
        required=False, help_text='{"<priority>": ["<regex>", ...]} (CA priority expander)'
    )
    maxNodesPerScaleUp = StrictIntegerField(  # noqa: N815
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_PODS,
        error_messages={
            "invalid": f"maxNodesPerScaleUp must be an integer between 0 and {MAX_PODS}",
            "min_value": f"maxNodesPerScaleUp must be an integer between 0 and {MAX_PODS}",
            "max_value": f"maxNodesPerScaleUp must be an integer between 0 and {MAX_PODS}",
        },
    )
    maxNodesTotal = StrictIntegerField(  # noqa: N815
        required=False, default=0, min_value=0, help_text="CA's --max-nodes-total (0 = no limit)"
    )
    coresTotal = serializers.JSONField(  # noqa: N815
        required=False, help_text="CA's --cores-total: the cluster's max cores, n or \"min:max\""
    )
    memoryTotal = serializers.JSONField(  # noqa: N815
        required=False, help_text='CA\'s --memory-total in GiB, n or "min:max"'
    )
    gpuTotal = serializers.JSONField(  # noqa: N815
        required=False, help_text="CA's --gpu-total: the cluster's max GPU devices, n or \"min:max\""
    )
    balanceSimilarNodeGroups = StrictBooleanField(  # noqa: N815
        required=False, default=False, help_text="CA's --balance-similar-node-groups"
    )
    balancingIgnoredLabels = serializers.ListField(  # noqa: N815
        child=StrictCharField(), required=False, default=list, help_text="CA's --balancing-ignore-label"
    )
    randomSeed = StrictIntegerField(  # noqa: N815
        required=False, allow_null=True, help_text="random expander: a seeded pick (else the first candidate)"
    )
    maxNodeGroupBinpackingDuration = serializers.FloatField(  # noqa: N815
        required=False,
        default=DEFAULT_GROUP_BUDGET,
        min_value=0,
        help_text="CA's --max-nodegroup-binpacking-duration in seconds (0 = none)",
    )
    maxBinpackingTime = serializers.FloatField(  # noqa: N815
        required=False,
        default=DEFAULT_TOTAL_BUDGET,
        min_value=0,
        help_text="CA's --max-binpacking-time in seconds (reported, as CA 1.32 only logs it)",
    )
    daemonSets = JSONListField(  # noqa: N815
        required=False,
        help_text="DaemonSet objects: their pods are placed on every fresh node they would run on",
    )
    upcomingNodes = JSONListField(  # noqa: N815
        required=False,
        help_text='[{"nodeGroup": name, "count": n}]: nodes those groups are already adding (CA\'s upcoming '
        "nodes); pending pods that fit them need no new node",
    )
    snapshotNodes = JSONListField(  # noqa: N815
        required=False,
        help_text='[{"node": Node, "pods": [Pod, ...]}]: the nodes in CA\'s cluster snapshot as CA holds '
        "them; the affinity and spread filters count them, and CA 1.33.1+'s hostname-spread retry may "
        "place pending pods on them (each option's onExistingNodes)",
    )
    existingNodes = StrictBooleanField(  # noqa: N815
        required=False,
        default=False,
        help_text="place pods on live nodes' free device capacity first, as CA does (docs/usage.md)",
        error_messages={"invalid": "existingNodes must be true or false"},
    )

    def validate_pods(self, value: object) -> list[PendingPods]:
        return _engine_checked(parse_pods, value)

    def validate_nodeGroups(self, value: object) -> list[GroupTemplate]:  # noqa: N802
        return _engine_checked(parse_groups, value)

    def validate(self, attrs: dict) -> dict:
        attrs["expander"] = _engine_checked(
            lambda _: parse_expander(
                attrs.get("expander"),
                attrs.get("priorities"),
                attrs.get("randomSeed"),
                conf().expander_return,
            ),
            None,
        )
        if attrs.get("maxNodesPerScaleUp") is None:
            attrs["maxNodesPerScaleUp"] = DEFAULT_MAX_NODES_PER_SCALE_UP
        attrs["upcomingNodes"] = _engine_checked(
            lambda raw: parse_upcoming(raw, attrs.get("nodeGroups")), attrs.get("upcomingNodes")
        )
        attrs["snapshotNodes"] = _engine_checked(parse_snapshot_nodes, attrs.get("snapshotNodes"))
        if attrs["snapshotNodes"] and "pods" in attrs:
            _engine_checked(lambda nodes: check_snapshot_work(attrs["pods"], nodes), attrs["snapshotNodes"])
        daemons = _engine_checked(parse_daemon_sets, attrs.get("daemonSets"))
        if daemons and "nodeGroups" in attrs:
            attrs["nodeGroups"] = [replace(g, daemon_pods=daemons) for g in attrs["nodeGroups"]]
        for key in ("coresTotal", "memoryTotal", "gpuTotal"):
            attrs[key] = _engine_checked(lambda value, key=key: parse_total(value, key), attrs.get(key))
        if attrs["memoryTotal"] is not None:
            attrs["memoryTotal"] *= 1024**3  # CA's flag is in GiB
        return attrs


RUNS_HELP = "runs [first, count] of the answer's pods (request positions), in placement order"


def _runs(help_text: str = RUNS_HELP, **kwargs) -> serializers.ListField:
    """A pod list as runs ``[first, count]`` of positions in the answer's ``pods``."""
    run = serializers.ListField(child=serializers.IntegerField(min_value=0), min_length=2, max_length=2)
    return serializers.ListField(child=run, help_text=help_text, **kwargs)


class UnschedulableSerializer(serializers.Serializer):
    reason = serializers.CharField()
    pods = _runs("the pods that reason stops, as runs of the answer's pods")


class EstimatedDeviceSerializer(serializers.Serializer):
    used = serializers.IntegerField()
    usedmem = serializers.IntegerField()
    usedcores = serializers.IntegerField()
    migInUse = serializers.ListField(child=serializers.DictField(), required=False)  # noqa: N815


class EstimatedNodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    pods = _runs("the node's pods as runs of the answer's pods, in placement order")
    devices = EstimatedDeviceSerializer(
        many=True,
        help_text="each device's usage, in the order of the option's devices (any other field only "
        "where it differs from the option's device)",
    )
    requested = serializers.DictField()


class EstimateOptionSerializer(serializers.Serializer):
    nodeGroup = serializers.CharField()  # noqa: N815
    nodeCount = serializers.IntegerField()  # noqa: N815
    scheduledPods = _runs()  # noqa: N815
    unschedulablePods = UnschedulableSerializer(  # noqa: N815
        many=True, help_text="one entry per reason, with the pods it stops"
    )
    devices = serializers.ListField(
        child=serializers.DictField(),
        help_text="the new nodes' devices as the template has them (uuid, index, type, count, devmem, "
        "devcore, numa, mode, health); each node lists only their usage",
    )
    nodes = EstimatedNodeSerializer(many=True)
    waste = serializers.DictField(child=serializers.FloatField())
    nodeLimit = serializers.IntegerField(allow_null=True, required=False)  # noqa: N815
    skipped = serializers.CharField(required=False, help_text="why CA would not consider the group")
    timedOut = serializers.BooleanField(required=False)  # noqa: N815
    onExistingNodes = serializers.DictField(  # noqa: N815
        child=_runs(),
        required=False,
        help_text="snapshot node -> the pending pods (runs of the answer's pods) CA 1.33.1+'s "
        "hostname-spread retry put there (CA counts each such node in nodeCount)",
    )


class ScaleUpGroupSerializer(serializers.Serializer):
    nodeGroup = serializers.CharField()  # noqa: N815
    currentSize = serializers.IntegerField()  # noqa: N815
    newSize = serializers.IntegerField()  # noqa: N815


class ScaleUpSerializer(serializers.Serializer):
    nodeGroup = serializers.CharField()  # noqa: N815
    estimatedNodes = serializers.IntegerField()  # noqa: N815
    nodeCount = serializers.IntegerField()  # noqa: N815
    cappedBy = serializers.ListField(child=serializers.CharField())  # noqa: N815
    groups = ScaleUpGroupSerializer(many=True)


class BinpackingSerializer(serializers.Serializer):
    seconds = serializers.FloatField()
    maxBinpackingTimeExceeded = serializers.BooleanField()  # noqa: N815
    timedOutGroups = serializers.ListField(child=serializers.CharField())  # noqa: N815
    # the groups the estimate's time limit left unpacked (ESTIMATE_TIME_LIMIT_SECONDS), as CA's
    # max-binpacking-time: each is skipped with the reason; the choice is among the others
    cutShortGroups = serializers.ListField(child=serializers.CharField())  # noqa: N815


class ExistingNodesSerializer(serializers.Serializer):
    liveNodes = serializers.IntegerField()  # noqa: N815
    scheduledPods = _runs()  # noqa: N815
    placements = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))


class UpcomingNodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    nodeGroup = serializers.CharField()  # noqa: N815
    pods = _runs("the pods the node absorbed, as runs of the answer's pods")
    devices = serializers.ListField(child=serializers.DictField())


class UpcomingNodesSerializer(serializers.Serializer):
    scheduledPods = _runs()  # noqa: N815
    nodes = UpcomingNodeSerializer(many=True)


class EstimateSerializer(serializers.Serializer):
    pods = serializers.ListField(
        child=serializers.CharField(),
        help_text="the request's pod ids in request order (``<id>#i`` for count replicas); every pod "
        "list of the answer is runs [first, count] of positions in this list",
    )
    options = EstimateOptionSerializer(many=True)
    existingNodes = ExistingNodesSerializer(required=False)  # noqa: N815
    upcomingNodes = UpcomingNodesSerializer(
        required=False, help_text="only when the request names upcoming nodes"
    )  # noqa: N815
    chosen = serializers.CharField(allow_null=True)
    explanation = serializers.CharField()
    candidates = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="the tie CA's random fallback picks from"
    )
    scaleUp = ScaleUpSerializer(allow_null=True, required=False)  # noqa: N815
    binpacking = BinpackingSerializer(required=False)
    differencesFromCA = serializers.ListField(child=serializers.CharField(), required=False)  # noqa: N815
    caVersion = serializers.CharField(  # noqa: N815
        required=False,
        help_text="the Cluster Autoscaler release whose binpacking the estimate follows (CA_VERSION)",
    )
    hamiVersion = serializers.CharField(  # noqa: N815
        required=False,
        help_text='the HAMi release whose device rules judged every fit (HAMI_VERSION: "2.8", "2.9" or "2.10")',
    )

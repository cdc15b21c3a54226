"""Request and response shapes of the sessions and estimate APIs.

Request serializers validate the ``/api/v1`` bodies before anything runs (a failure is a 400 in the
one error shape: ``detail`` plus the field errors). Kubernetes objects (Pods, Nodes) are checked to
be objects and then pass through untouched: the engine parses them with HAMi's rules, and its
errors (``malformed pod: ...``) are 400s too. Response serializers document the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from drf_spectacular.utils import OpenApiExample, extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from hami_sim.conf import conf
from hami_sim.engine.estimate import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    EstimateError,
    GroupTemplate,
    PendingPods,
    UpcomingNodes,
    parse_expander,
)
from hami_sim.engine.scaleup import DEFAULT_GROUP_BUDGET, DEFAULT_TOTAL_BUDGET, daemon_set_pod

from ..sessions import MAX_TTL

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

MAX_PODS = 100_000
MAX_GROUPS = 500
MAX_UPCOMING_NODES = 10_000  # upcoming nodes per estimate, over all groups


# -- strict JSON fields: a JSON client sends numbers and strings, not things that look like them ------


class StrictCharField(serializers.CharField):
    """A JSON string; DRF's ``CharField`` would turn ``7`` into ``"7"``."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer; DRF's ``IntegerField`` would accept ``"60"``, ``true`` and ``60.0``."""

    def to_internal_value(self, data: object) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true``/``false``; DRF's ``BooleanField`` would accept ``"yes"``, ``1`` and ``"on"``."""

    def to_internal_value(self, data: object) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.JSONField):
    """A JSON object (a Kubernetes Pod or Node) passed through untouched."""

    default_error_messages = {"invalid": "must be a JSON object"}

    def to_internal_value(self, data: object) -> dict:
        if not isinstance(data, dict):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "array", "items": {}})
class JSONListField(serializers.JSONField):
    """A JSON value (a list, when valid) that the serializer's ``validate_<field>`` checks.

    Unlike ``JSONField`` it does not re-encode the value to prove it is JSON: it came from the JSON
    parser, and an estimate may carry 100,000 pods.
    """

    def to_internal_value(self, data: object) -> object:
        return data


# -- errors ---------------------------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    """The one error shape of every ``/api/v1`` endpoint (``hami_sim.rest.exception_handler``)."""

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
    nodes = SessionNodeSerializer(many=True)
    placements = PlacementSerializer(many=True)


class RevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    depth = serializers.IntegerField(required=False)


def resolve_node_group(name: str) -> GroupTemplate | None:
    """A known node group (profiles app) as a template Node; None when there is no such group.

    The template is the one ``GET /api/v1/node-groups/<name>/template`` serves: labels, taints,
    capacity and the registration annotation rendered from the group's device profiles. As in CA, the
    group may add ``max_size`` minus its current size (its live nodes in the inventory) new nodes,
    and a ``max_size`` of 0 never grows.
    """
    from profiles.models import NodeGroup
    from profiles.nodetemplates import group_template

    group = NodeGroup.objects.filter(name=name).prefetch_related("profiles__devices").first()
    if group is None:
        return None
    node = group_template(group)
    current = group.inventories.filter(gone_at__isnull=True).count()
    return GroupTemplate(group.name, node, None, group.max_size, current)


def _int(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EstimateError(f"{name} must be an integer between {low} and {high}")
    return value


def _pending(entry: Mapping, i: int) -> PendingPods:
    if "pod" in entry and "spec" not in entry:
        pod = entry["pod"]
        if not isinstance(pod, Mapping):
            raise EstimateError(f"pods[{i}].pod must be a Pod object")
        count = entry.get("count")
        if count is not None:
            count = _int(count, f"pods[{i}].count", 0, MAX_PODS)
        return PendingPods(pod, count)
    return PendingPods(entry)


def parse_pods(raw: object) -> list[PendingPods]:
    """``pods``: Pod objects or ``{"pod": Pod, "count": n}``, at most ``MAX_PODS`` in all."""
    if not isinstance(raw, list):
        raise EstimateError('pods must be a list of Pod objects or {"pod": Pod, "count": n}')
    out: list[PendingPods] = []
    total = 0
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise EstimateError(f"pods[{i}] must be an object")
        pending = _pending(entry, i)
        out.append(pending)
        total += 1 if pending.count is None else pending.count
        if total > MAX_PODS:
            raise EstimateError(f"at most {MAX_PODS} pods per estimate")
    return out


def _group(entry: object, i: int) -> GroupTemplate:
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, Mapping):
        raise EstimateError(f"nodeGroups[{i}] must be a group name or an object")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise EstimateError(f"nodeGroups[{i}] has no name")
    max_new = entry.get("maxNewNodes")
    if max_new is not None:
        max_new = _int(max_new, f"nodeGroups[{i}].maxNewNodes", 0, MAX_PODS)
    allocatable = entry.get("allocatable")
    if allocatable is not None and not isinstance(allocatable, Mapping):
        raise EstimateError(f"nodeGroups[{i}].allocatable must be an object of quantities")
    max_size = entry.get("maxSize")
    if max_size is not None:
        max_size = _int(max_size, f"nodeGroups[{i}].maxSize", 0, MAX_PODS)
    template = entry.get("template")
    if template is None:
        known = resolve_node_group(name)
        if known is None:
            raise EstimateError(f"unknown node group {name!r}: give its template inline or create it first")
        if max_new is not None and max_size is None:  # an explicit room replaces the stored max size
            return GroupTemplate(name, known.template, max_new, None, known.current_size)
        size = known.max_size if max_size is None else max_size
        current = _int(
            entry.get("currentSize", known.current_size), f"nodeGroups[{i}].currentSize", 0, MAX_PODS
        )
        return GroupTemplate(name, known.template, max_new, size, current)
    if not isinstance(template, Mapping) or not isinstance(template.get("metadata", {}), Mapping):
        raise EstimateError(f"nodeGroups[{i}].template must be a Node object")
    current = _int(entry.get("currentSize", 0), f"nodeGroups[{i}].currentSize", 0, MAX_PODS)
    return GroupTemplate(name, template, max_new, max_size, current)


def _with_allocatable(group: GroupTemplate, allocatable: object) -> GroupTemplate:
    """The template with ``status.allocatable`` replaced (capacity minus what the kubelet reserves)."""
    if not isinstance(allocatable, Mapping):
        return group
    status = group.template.get("status")
    status = dict(status) if isinstance(status, Mapping) else {}
    status["allocatable"] = dict(allocatable)
    return replace(group, template={**group.template, "status": status})


def parse_daemon_sets(raw: object) -> tuple[dict, ...]:
    """``daemonSets``: DaemonSet objects whose pods CA places on every fresh node they would run on."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(ds, Mapping) for ds in raw):
        raise EstimateError("daemonSets must be a list of DaemonSet objects")
    return tuple(daemon_set_pod(ds) for ds in raw)


def _check_known_groups(raw: list) -> None:
    """Every group named without a template must exist; the error names all missing ones and the known ones."""
    from profiles.models import NodeGroup

    asked = [
        e if isinstance(e, str) else e.get("name")
        for e in raw
        if isinstance(e, str) or (isinstance(e, Mapping) and e.get("template") is None)
    ]
    asked = [name for name in asked if isinstance(name, str) and name]
    if not asked:
        return
    known = sorted(NodeGroup.objects.values_list("name", flat=True))
    unknown = sorted(set(asked) - set(known), key=asked.index)
    if not unknown:
        return
    names = ", ".join(repr(name) for name in unknown)
    listed = ", ".join(known) or "none yet"
    if len(unknown) == 1:
        raise EstimateError(
            f"unknown node group {names}: give its template inline or create it first; known: {listed}"
        )
    raise EstimateError(
        f"unknown node groups {names}: give their templates inline or create them first; known: {listed}"
    )


def parse_groups(raw: object) -> list[GroupTemplate]:
    """``nodeGroups``: names of known groups and/or ``{"name", "template": Node, "maxNewNodes"}``."""
    if not isinstance(raw, list) or not raw:
        raise EstimateError(
            'nodeGroups must be a non-empty list of names or {"name", "template", "maxNewNodes"}'
        )
    if len(raw) > MAX_GROUPS:
        raise EstimateError(f"at most {MAX_GROUPS} node groups per estimate")
    _check_known_groups(raw)
    return [
        _with_allocatable(_group(entry, i), entry.get("allocatable") if isinstance(entry, Mapping) else None)
        for i, entry in enumerate(raw)
    ]


def parse_upcoming(raw: object, groups: list[GroupTemplate] | None) -> list[UpcomingNodes]:
    """``upcomingNodes``: ``[{"nodeGroup": name, "count": n}]``, each naming one of ``nodeGroups``."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise EstimateError('upcomingNodes must be a list of {"nodeGroup": name, "count": n}')
    names = {g.name for g in groups or ()}
    out: list[UpcomingNodes] = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise EstimateError(f'upcomingNodes[{i}] must be {{"nodeGroup": name, "count": n}}')
        name = entry.get("nodeGroup")
        if not isinstance(name, str) or name not in names:
            raise EstimateError(f"upcomingNodes[{i}].nodeGroup must name one of nodeGroups, not {name!r}")
        out.append(
            UpcomingNodes(name, _int(entry.get("count"), f"upcomingNodes[{i}].count", 0, MAX_UPCOMING_NODES))
        )
    if sum(u.count for u in out) > MAX_UPCOMING_NODES:
        raise EstimateError(f"at most {MAX_UPCOMING_NODES} upcoming nodes per estimate")
    return out


def _total(value: object, name: str) -> int | None:
    """CA's ``--cores-total``/``--memory-total``/``--gpu-total`` maximum: ``n`` or ``"min:max"``."""
    if value is None:
        return None
    if isinstance(value, str) and value.count(":") == 1 and value.split(":")[1].strip().isdigit():
        return int(value.split(":")[1])
    return _int(value, name, 0, 10**12)


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
    """``POST /api/v1/estimate`` (design.md 7); ``validated_data`` holds what ``estimate()`` takes."""

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
        daemons = _engine_checked(parse_daemon_sets, attrs.get("daemonSets"))
        if daemons and "nodeGroups" in attrs:
            attrs["nodeGroups"] = [replace(g, daemon_pods=daemons) for g in attrs["nodeGroups"]]
        for key in ("coresTotal", "memoryTotal", "gpuTotal"):
            attrs[key] = _engine_checked(lambda value, key=key: _total(value, key), attrs.get(key))
        if attrs["memoryTotal"] is not None:
            attrs["memoryTotal"] *= 1024**3  # CA's flag is in GiB
        return attrs


class EstimateOptionSerializer(serializers.Serializer):
    nodeGroup = serializers.CharField()  # noqa: N815
    nodeCount = serializers.IntegerField()  # noqa: N815
    scheduledPods = serializers.ListField(child=serializers.CharField())  # noqa: N815
    unschedulablePods = serializers.DictField(child=serializers.CharField())  # noqa: N815
    nodes = serializers.ListField(child=serializers.DictField())
    waste = serializers.DictField(child=serializers.FloatField())
    nodeLimit = serializers.IntegerField(allow_null=True, required=False)  # noqa: N815
    skipped = serializers.CharField(required=False, help_text="why CA would not consider the group")
    timedOut = serializers.BooleanField(required=False)  # noqa: N815


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


class ExistingNodesSerializer(serializers.Serializer):
    liveNodes = serializers.IntegerField()  # noqa: N815
    scheduledPods = serializers.ListField(child=serializers.CharField())  # noqa: N815
    placements = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))


class UpcomingNodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    nodeGroup = serializers.CharField()  # noqa: N815
    pods = serializers.ListField(child=serializers.CharField())
    devices = serializers.ListField(child=serializers.DictField())


class UpcomingNodesSerializer(serializers.Serializer):
    scheduledPods = serializers.ListField(child=serializers.CharField())  # noqa: N815
    nodes = UpcomingNodeSerializer(many=True)


class EstimateSerializer(serializers.Serializer):
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

"""The estimate request's parts as the engine's types: pending pods, node groups, upcoming nodes.

Each part is checked before anything runs, with an ``EstimateError`` naming the entry at fault
(``nodeGroups[2].maxSize must be ...``), and bounded (``MAX_PODS``, ``MAX_GROUPS``,
``MAX_UPCOMING_NODES``) so one request cannot ask for unbounded work. A group named without a
template is the profiles app's (``resolve_node_group``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from hami_sim.engine.estimate import (
    MAX_WORK,
    ClusterNode,
    EstimateError,
    GroupTemplate,
    PendingPods,
    UpcomingNodes,
)
from hami_sim.engine.scaleup import daemon_set_pod

__all__ = [
    "MAX_PODS",
    "MAX_GROUPS",
    "MAX_UPCOMING_NODES",
    "MAX_SNAPSHOT_NODES",
    "resolve_node_group",
    "parse_pods",
    "parse_groups",
    "parse_upcoming",
    "parse_snapshot_nodes",
    "check_snapshot_work",
    "parse_daemon_sets",
    "parse_total",
]

MAX_PODS = 100_000
MAX_GROUPS = 500
MAX_UPCOMING_NODES = 10_000  # upcoming nodes per estimate, over all groups
MAX_SNAPSHOT_NODES = 10_000  # CA's snapshot nodes per estimate
MAX_SNAPSHOT_PODS = 100_000  # the pods on them, over all nodes


def resolve_node_group(name: str) -> GroupTemplate | None:
    """A known node group (profiles app) as a template Node; None when there is no such group.

    The template is the one ``GET /api/v1/node-groups/<name>/template`` serves: labels, taints,
    capacity and the registration annotation rendered from the group's device profiles. As in CA, the
    group may add ``max_size`` minus its current size (its live nodes in the inventory) new nodes,
    and a ``max_size`` of 0 never grows.
    """
    from profiles.nodetemplates import estimate_groups

    found = estimate_groups([name])
    return found[0] if found else None


def _int(value: object, name: str, low: int, high: int) -> int:
    """``value`` when it is an integer (not a boolean) in ``low..high``, else an error naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EstimateError(f"{name} must be an integer between {low} and {high}")
    return value


def _pending(entry: Mapping, i: int) -> PendingPods:
    """A ``pods`` entry: a Pod, or ``{"pod": Pod, "count": n}`` (n identical pending pods)."""
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
    """One ``nodeGroups`` entry: a known group's name, or an object with an inline ``template``."""
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, Mapping):
        raise EstimateError(f"nodeGroups[{i}] must be a group name or an object")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise EstimateError(f"nodeGroups[{i}] has no name")
    max_new = _optional_int(entry, "maxNewNodes", i)
    allocatable = entry.get("allocatable")
    if allocatable is not None and not isinstance(allocatable, Mapping):
        raise EstimateError(f"nodeGroups[{i}].allocatable must be an object of quantities")
    max_size = _optional_int(entry, "maxSize", i)
    template = entry.get("template")
    if template is None:
        return _known_group(name, entry, i, max_new, max_size)
    if not isinstance(template, Mapping) or not isinstance(template.get("metadata", {}), Mapping):
        raise EstimateError(f"nodeGroups[{i}].template must be a Node object")
    current = _int(entry.get("currentSize", 0), f"nodeGroups[{i}].currentSize", 0, MAX_PODS)
    return GroupTemplate(name, template, max_new, max_size, current)


def _optional_int(entry: Mapping, key: str, i: int) -> int | None:
    """``nodeGroups[i].<key>``: absent, or an integer between 0 and ``MAX_PODS``."""
    value = entry.get(key)
    return None if value is None else _int(value, f"nodeGroups[{i}].{key}", 0, MAX_PODS)


def _known_group(
    name: str, entry: Mapping, i: int, max_new: int | None, max_size: int | None
) -> GroupTemplate:
    """A group named without a template: the profiles app's, its sizes overridden by the entry's."""
    known = resolve_node_group(name)
    if known is None:
        raise EstimateError(f"unknown node group {name!r}: give its template inline or create it first")
    if max_new is not None and max_size is None:  # an explicit room replaces the stored max size
        return GroupTemplate(name, known.template, max_new, None, known.current_size)
    size = known.max_size if max_size is None else max_size
    current = _int(entry.get("currentSize", known.current_size), f"nodeGroups[{i}].currentSize", 0, MAX_PODS)
    return GroupTemplate(name, known.template, max_new, size, current)


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


def parse_total(value: object, name: str) -> int | None:
    """CA's ``--cores-total``/``--memory-total``/``--gpu-total`` maximum: ``n`` or ``"min:max"``."""
    if value is None:
        return None
    if isinstance(value, str) and value.count(":") == 1 and value.split(":")[1].strip().isdigit():
        return int(value.split(":")[1])
    return _int(value, name, 0, 10**12)


def _snapshot_node(entry: object, i: int) -> ClusterNode:
    """One ``snapshotNodes`` entry: ``{"node": Node, "pods": [Pod, ...]}``."""
    if not isinstance(entry, Mapping):
        raise EstimateError(f'snapshotNodes[{i}] must be {{"node": Node, "pods": [Pod, ...]}}')
    node = entry.get("node")
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise EstimateError(f"snapshotNodes[{i}].node must be a Node object with metadata.name")
    pods = entry.get("pods", [])
    if not isinstance(pods, list) or not all(isinstance(p, Mapping) for p in pods):
        raise EstimateError(f"snapshotNodes[{i}].pods must be a list of Pod objects")
    return ClusterNode(node, tuple(pods))


def parse_snapshot_nodes(raw: object) -> list[ClusterNode]:
    """``snapshotNodes``: the nodes already in CA's cluster snapshot, as CA holds them (the Node with
    its labels, taints and allocatable, and the pods on it). The affinity and topology-spread filters
    count them, and CA 1.33.1's hostname-spread retry may place a pending pod on one (the answer's
    ``onExistingNodes``). At most ``MAX_SNAPSHOT_NODES`` nodes with ``MAX_SNAPSHOT_PODS`` pods."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise EstimateError('snapshotNodes must be a list of {"node": Node, "pods": [Pod, ...]}')
    if len(raw) > MAX_SNAPSHOT_NODES:
        raise EstimateError(f"at most {MAX_SNAPSHOT_NODES} snapshot nodes per estimate")
    out = [_snapshot_node(entry, i) for i, entry in enumerate(raw)]
    if sum(len(n.pods) for n in out) > MAX_SNAPSHOT_PODS:
        raise EstimateError(f"at most {MAX_SNAPSHOT_PODS} pods on the snapshot nodes per estimate")
    names = [n.node["metadata"]["name"] for n in out]
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise EstimateError(f"snapshotNodes names node {twice!r} twice")
    return out


def check_snapshot_work(pods: list[PendingPods], nodes: list[ClusterNode]) -> None:
    """Refuse more pending pods x snapshot nodes than the engine's work budget (``MAX_WORK``): the
    hostname-spread retry may try every snapshot node for every pod."""
    count = sum(1 if p.count is None else p.count for p in pods)
    if count * len(nodes) > MAX_WORK:
        raise EstimateError(
            f"{count} pods x {len(nodes)} snapshot nodes exceed the work budget of {MAX_WORK}; "
            "ask for fewer pods or snapshot nodes per request"
        )

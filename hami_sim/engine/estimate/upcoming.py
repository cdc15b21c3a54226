"""Upcoming nodes (nodes a group is already adding): CA's FilterOutSchedulable places pending pods on
them before the estimate, and CA counts them in its sizes and resource totals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..interpod import PodTerms
from ..model import DeviceUsage
from ..scaleup import ScaleUpLimits
from ..scheduler_filters import node_capacity
from ..simulate import Simulator
from ..topology import TopologyIndex
from .ca_filters import SnapshotNode, static_reason, topology_index
from .fitter import Fitter, PackedNode
from .inputs import EstimateError, GroupTemplate, UpcomingNodes
from .parsed_groups import Equivalence
from .results import UpcomingNode
from .template_node import TemplateNode

__all__ = ["absorb_upcoming", "count_upcoming", "upcoming_result"]


@dataclass(slots=True)
class _Upcoming:
    nodes: list[tuple[PackedNode, TemplateNode]] = field(default_factory=list)
    placed: dict[str, str] = field(default_factory=dict)  # pod id -> upcoming node name
    rr: int = 0  # CA's round-robin position over the snapshot's nodes


def _upcoming_nodes(
    sim: Simulator, groups: Sequence[GroupTemplate], upcoming: Sequence[UpcomingNodes]
) -> _Upcoming:
    by_name = {g.name: g for g in groups}
    state = _Upcoming()
    for entry in upcoming:
        group = by_name.get(entry.node_group)
        if group is None:
            raise EstimateError(
                f"upcoming nodes of {entry.node_group!r}: not one of the requested node groups"
            )
        template = TemplateNode(sim, group, None)
        for i in range(entry.count):
            state.nodes.append((template.new_node(i, f"{template.name}-upcoming-{i}"), template))
    return state


def absorb_upcoming(
    sim: Simulator,
    equivalences: list[Equivalence],
    groups: Sequence[GroupTemplate],
    upcoming: Sequence[UpcomingNodes],
    cluster: Sequence[SnapshotNode],
) -> tuple[_Upcoming, list[Equivalence], list[SnapshotNode]]:
    """CA's FilterOutSchedulable over the upcoming nodes: the pending pods, most important (highest
    ``spec.priority``) first, each on the first node that passes every filter and HAMi's Fit,
    round-robin from the node after the last match. Returns the placements, the equivalence groups
    left for the estimate and the upcoming nodes as snapshot nodes (with their pods) for it."""
    state = _upcoming_nodes(sim, groups, upcoming)
    templates = {id(t): t for _, t in state.nodes}
    daemon_terms = [terms for t in templates.values() for terms in t.daemon_terms]
    index = topology_index(equivalences, daemon_terms, cluster)
    terms_on: list[list[PodTerms]] = []
    objects = []
    for node, template in state.nodes:
        obj, labels = template.node_object(node.name)
        objects.append((obj, labels))
        if index is not None:
            node.topo = index.add_node(obj, labels)
            for terms in template.daemon_terms:
                index.add_pod(node.topo, terms)
        terms_on.append(list(template.daemon_terms))
    left: list[Equivalence] = []
    for eq in sorted(equivalences, key=lambda eq: (-_priority_of(eq.pod), eq.order)):
        rest = _absorb_group(sim, state, eq, index, terms_on)
        if rest:
            left.append(eq if len(rest) == len(eq.ids) else replace(eq, ids=rest))
    left.sort(key=lambda eq: eq.order)
    snapshot = [
        SnapshotNode(obj, labels, tuple(terms))
        for (obj, labels), terms in zip(objects, terms_on, strict=True)
    ]
    return state, left, snapshot


def _priority_of(pod: Mapping) -> int:
    spec = pod.get("spec")
    value = spec.get("priority") if isinstance(spec, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _absorb_group(
    sim: Simulator,
    state: _Upcoming,
    eq: Equivalence,
    index: TopologyIndex | None,
    terms_on: list[list[PodTerms]],
) -> list[str]:
    """Place ``eq``'s pods on the upcoming nodes; returns the ids left pending. Once a pod fits no
    node, its identical successors fit none either (nodes only fill up), unless its fit depends on
    other nodes (affinity, spread)."""
    fitters: dict[int, Fitter | None] = {}
    nodes = state.nodes
    for pid in eq.ids:
        found = _first_upcoming(sim, state, eq, index, fitters)
        if found is None:
            if eq.terms.dynamic and index is not None:
                continue
            break
        idx, fitter, (_, devices, sig) = found
        fitter.place(nodes[idx][0], pid, devices, sig)
        terms_on[idx].append(eq.terms)
        state.placed[pid] = nodes[idx][0].name
        state.rr = (idx + 1) % len(nodes)
    return [pid for pid in eq.ids if pid not in state.placed]


def _first_upcoming(
    sim: Simulator,
    state: _Upcoming,
    eq: Equivalence,
    index: TopologyIndex | None,
    fitters: dict[int, Fitter | None],
) -> tuple[int, Fitter, tuple[str, list[DeviceUsage] | None, tuple]] | None:
    """CA's SchedulePodOnAnyNodeMatching over the upcoming nodes, from the round-robin position."""
    nodes = state.nodes
    for step in range(len(nodes)):
        idx = (state.rr + step) % len(nodes)
        node, template = nodes[idx]
        fitter = _upcoming_fitter(sim, eq, template, index, fitters)
        if fitter is None:
            continue
        result = fitter.check(node)
        if not result[0]:
            return idx, fitter, result
    return None


def _upcoming_fitter(
    sim: Simulator,
    eq: Equivalence,
    template: TemplateNode,
    index: TopologyIndex | None,
    fitters: dict[int, Fitter | None],
) -> Fitter | None:
    """The group's fitter for one upcoming template (its own device memo), None where the template
    can never hold the pod (selectors, taints, unschedulable, no devices for a device pod)."""
    key = id(template)
    if key not in fitters:
        static = static_reason(eq.pod, template.node)
        if not static and template.inventory.error and eq.ctx.pod.requests.has_requests:
            static = template.inventory.error
        fitters[key] = None if static else Fitter(sim, eq, index)
    return fitters[key]


def upcoming_result(state: _Upcoming) -> list[UpcomingNode]:
    return [
        UpcomingNode(node.name, template.group, node.pods, node.state.devices)
        for node, template in state.nodes
    ]


def count_upcoming(
    sim: Simulator, groups: list[GroupTemplate], limits: ScaleUpLimits, upcoming: Sequence[UpcomingNodes]
) -> tuple[list[GroupTemplate], ScaleUpLimits]:
    """Upcoming nodes count as CA counts them: in their group's target size (so toward its max
    size), in the cluster's node count for ``maxNodesTotal``, and with their template's cores,
    memory and devices in the cluster's totals (CA sums target size x template)."""
    counts: Counter[str] = Counter()
    for entry in upcoming:
        counts[entry.node_group] += entry.count
    cores = memory = gpus = 0
    for group in groups:
        if counts[group.name]:
            capacity = node_capacity(group.template)
            cores += counts[group.name] * -(-capacity.cpu // 1000)
            memory += counts[group.name] * capacity.memory
            gpus += counts[group.name] * len(TemplateNode(sim, group, None).devices)
    groups = [
        replace(g, current_size=g.current_size + counts[g.name]) if counts[g.name] else g for g in groups
    ]
    return groups, replace(
        limits,
        current_nodes=limits.current_nodes + sum(counts.values()),
        current_cores=limits.current_cores + cores,
        current_memory=limits.current_memory + memory,
        current_gpus=limits.current_gpus + gpus,
    )

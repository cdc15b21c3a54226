"""One node group's option: CA's node limit for it, its binpacking (or the packing of a group that
packs alike, copied), and the summary CA's expanders read (used nodes, waste)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..ca_releases import DEFAULT_VERSION, CARelease, ca_release
from ..scaleup import GroupSize, ScaleUpLimits, limit_source, node_limit, skip_reason
from ..scheduler_filters import Resources, node_capacity
from ..simulate import Simulator
from .ca_filters import SnapshotNode, topology_index
from .fits import GroupFits, SharedFits
from .fitter import PackedNode
from .inputs import GroupTemplate
from .packing import GroupPacker
from .parsed_groups import Equivalence
from .results import EstimatedNode, GroupOption, Waste
from .sharing import SharedPacking, device_key, share_key
from .template_node import TemplateNode

__all__ = ["Budget", "cut_short", "estimate_group", "time_limit_reason"]


def time_limit_reason(time_limit: float) -> str:
    """Why a group has no option: the estimate's own time limit ran out before it was packed."""
    return (
        f"the estimate's time limit of {time_limit:g} s ran out before this node group was packed "
        "(as CA's max-binpacking-time: the groups packed so far are the options)"
    )


def _summarise(option: GroupOption, nodes: list[PackedNode], template: TemplateNode) -> None:
    """The used nodes with their pods and devices, and the group's waste (least-waste's score)."""
    allocatable = template.allocatable
    used = [node for node in nodes if node.pods]
    option.node_count = len(used) + len(option.on_existing)
    gpu_total = gpu_used = core_total = core_used = 0
    for node in used:
        requested = Resources(
            allocatable.cpu - node.free.cpu,
            allocatable.memory - node.free.memory,
            allocatable.ephemeral - node.free.ephemeral,
            allocatable.pods - node.free.pods,
        )
        for dev in node.state.devices:
            gpu_total += dev.totalmem
            gpu_used += dev.usedmem
            core_total += dev.totalcore
            core_used += dev.usedcores
        option.nodes.append(EstimatedNode(node.name, node.pods, node.state.devices, requested))
    if used:
        capacity = node_capacity(template.node)
        cpu_total = capacity.cpu * option.node_count  # CA: the option's node count x the template
        mem_total = capacity.memory * option.node_count
        option.waste = Waste(
            _unused(cpu_total, option.requested_cpu),
            _unused(mem_total, option.requested_memory),
            _unused(gpu_total, gpu_used),
            _unused(core_total, core_used),
        )


def _unused(total: int, used: int) -> float:
    """CA's waste share; not clamped at 0 (CA's least-waste is not either)."""
    return (total - used) / total if total else 0.0


class Budget:
    """The estimate's own time limit (a monotonic deadline) and the packings groups may share (None:
    every group packed alone, pod by pod: the reference the differential tests compare with)."""

    __slots__ = ("deadline", "time_limit", "shared", "fits")

    def __init__(self, time_limit: float, share: bool = True) -> None:
        self.time_limit = time_limit
        self.deadline = time.monotonic() + time_limit
        self.shared: dict[tuple, SharedPacking] | None = {} if share else None
        self.fits: SharedFits | None = SharedFits() if share else None

    def out(self) -> bool:
        """The time limit has run out (a limit of 0: before the first group)."""
        return time.monotonic() >= self.deadline


def cut_short(group: GroupTemplate, equivalences: list[Equivalence], reason: str) -> GroupOption:
    """The option of a group a time limit left unpacked: no option, every pod with the reason."""
    return _skipped(GroupOption(group.name, cut_short=True), reason, equivalences)


def _group_limit(group: GroupTemplate, similar: Sequence[GroupSize], limits: ScaleUpLimits) -> int | None:
    """CA's node limit for the group's binpacking (None = none), with the request's maxNewNodes."""
    raw = node_limit(group.size, similar, limits)
    limit = None if raw == 0 else max(raw, 0)
    if group.max_new_nodes is not None:
        limit = group.max_new_nodes if limit is None else min(limit, group.max_new_nodes)
    return limit


def _skipped(option: GroupOption, reason: str, equivalences: list[Equivalence]) -> GroupOption:
    option.skipped = reason
    for eq in equivalences:
        for pid in eq.ids:
            option.unschedulable[pid] = reason
    return option


def estimate_group(
    sim: Simulator,
    group: GroupTemplate,
    equivalences: list[Equivalence],
    limits: ScaleUpLimits,
    similar: Sequence[GroupSize],
    budget: Budget,
    cluster: Sequence[SnapshotNode] = (),
    ca: CARelease | None = None,
    fast: bool = True,
) -> GroupOption:
    template = TemplateNode(sim, group, None)
    skipped = skip_reason(group.size, group.template, len(template.devices), limits)
    if skipped:
        return _skipped(GroupOption(group.name), skipped, equivalences)
    template.limit = _group_limit(group, similar, limits)
    if template.limit is not None:
        template.limit_reason = limit_source(group.size, similar, limits, template.limit)
    index = topology_index(equivalences, template.daemon_terms, cluster)
    shared = budget.shared
    devices = device_key(sim, template) if shared is not None else None
    key = share_key(sim, template, equivalences, template.limit, devices) if index is None else None
    found = shared.get(key) if shared is not None and key is not None else None
    if found is not None:
        option = GroupOption(group.name, node_limit=template.limit, daemon_pods=template.daemons)
        _summarise(option, found.copy_for(template, option), template)
        return option
    ca = ca or ca_release(DEFAULT_VERSION)
    fits = _group_fits(budget, devices, template)
    packer = GroupPacker(sim, template, limits, index, ca.hostname_retry, cluster, fast, fits)
    option = _pack(packer, group, equivalences, budget, ca)
    if shared is not None and key is not None and not option.timed_out and not option.cut_short:
        shared[key] = SharedPacking(template, option, packer.nodes)
    return option


def _group_fits(budget: Budget, devices: tuple | None, template: TemplateNode) -> GroupFits | None:
    """The group's view of the fits shared with groups of alike devices (None: fits of its own)."""
    if budget.fits is None or devices is None:
        return None
    return GroupFits(budget.fits, devices, tuple(d.id for d in template.devices))


def _pack(
    packer: GroupPacker,
    group: GroupTemplate,
    equivalences: list[Equivalence],
    budget: Budget,
    ca: CARelease,
) -> GroupOption:
    """The group's binpacking, equivalence group by equivalence group in CA's order, until the
    estimate's time limit (then the group is cut short: no option)."""
    template = packer.template
    packer.option.node_limit = template.limit
    packer.option.daemon_pods = template.daemons
    for eq in template.order(equivalences, ca.order_by_pod_requests):
        if budget.out():
            return cut_short(group, equivalences, time_limit_reason(budget.time_limit))
        packer.pack(eq)
    _summarise(packer.option, packer.nodes, template)
    return packer.option

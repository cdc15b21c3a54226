"""Node groups that pack alike are packed once.

A big cluster's node groups are a few instance types in many zones and capacity types: their templates
differ in name, labels and the devices' UUIDs, and nothing CA's binpacking reads of them differs. A
group's packing is a function of what its packer reads: the template's allocatable, capacity and
fresh-node resources (DaemonSet pods), its devices but for their UUIDs, each equivalence group's
static verdict against it (selectors, affinity, taints), its node limit and the pods. Two groups equal
in all of those get the same packing up to the names of the new nodes and the UUIDs of their devices,
which the copy takes from its own template.

A packing is not shared when it reads more than that: pod affinity or topology spread (labels and
node names count), a pod or a device whose fit reads UUIDs (``PodContext.uuid_blind``,
``uuid_blind_devices``), or a packing cut short by its binpacking time (the copy would not be).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..cache import uuid_blind_devices
from ..model import DeviceUsage, NodeState
from ..scheduler_filters import Resources, node_capacity
from ..simulate import Simulator
from .ca_filters import static_reason
from .fitter import PackedNode, device_signature
from .packing import limit_reason
from .parsed_groups import Equivalence
from .results import GroupOption
from .template_node import TemplateNode

__all__ = ["SharedPacking", "device_key", "share_key"]


def _resources_key(res: Resources) -> tuple:
    scalars = tuple(sorted(res.scalars.items())) if res.scalars else None
    return res.cpu, res.memory, res.ephemeral, res.pods, scalars


def _devices_key(devices: Sequence[DeviceUsage]) -> tuple:
    """The devices as a fit reads them, but for their UUIDs (their positions stand for them)."""
    usage = device_signature(list(devices))
    return tuple(
        (
            d.index,
            d.count,
            d.totalmem,
            d.totalcore,
            d.type,
            d.numa,
            d.mode,
            d.health,
            d.vendor,
            d.mig_profiles,
            u,
        )
        for d, u in zip(devices, usage, strict=True)
    )


def _by_position(template: TemplateNode) -> tuple:
    """The cordoned devices and topology pair scores with each UUID as its device's position."""
    inventory = template.inventory
    at = {d.id: i for i, d in enumerate(template.devices)}
    cordoned = tuple(sorted(str(at.get(uuid, uuid)) for uuid in inventory.cordoned))
    pairs = tuple(
        sorted(
            (str(at.get(a, a)), str(at.get(b, b)), score)
            for a, row in inventory.pair_scores.items()
            for b, score in row.items()
        )
    )
    return cordoned, pairs


def device_key(sim: Simulator, template: TemplateNode) -> tuple | None:
    """What a fit reads of the template's devices but their UUIDs (cordons and pair scores by
    position), or None when a device's fit may read its UUID (``uuid_blind_devices``) or it holds
    what no key can (vendor data)."""
    if template.devices and not uuid_blind_devices(template.inventory, sim.vendors):
        return None
    key = (_devices_key(template.devices), _by_position(template), template.inventory.error)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def share_key(
    sim: Simulator,
    template: TemplateNode,
    equivalences: Sequence[Equivalence],
    limit: int | None,
    devices: tuple | None,
) -> tuple | None:
    """What the group's packing depends on (``devices``: its ``device_key``), or None when it cannot
    be shared (see the module)."""
    if devices is None:
        return None
    if template.devices:
        for eq in equivalences:
            if eq.ctx.pod.requests.has_requests and not eq.ctx.uuid_blind:
                return None
    statics = tuple(static_reason(eq.pod, template.node) for eq in equivalences)
    key = (
        _resources_key(template.allocatable),
        _resources_key(node_capacity(template.node)),
        _resources_key(template.fresh),
        tuple(template.daemons),
        tuple(sorted(template.ports)) if template.ports else (),
        devices,
        statics,
        limit,
    )
    try:
        hash(key)
    except TypeError:  # a resource no key can hold: pack the group alone
        return None
    return key


class SharedPacking:
    """A packed group: its template, option and new nodes, to copy for groups of the same key."""

    __slots__ = ("template", "option", "nodes")

    def __init__(self, template: TemplateNode, option: GroupOption, nodes: list[PackedNode]) -> None:
        self.template = template
        self.option = option
        self.nodes = nodes

    def copy_for(self, template: TemplateNode, option: GroupOption) -> list[PackedNode]:
        """Fill ``option`` (the other group's, empty) from this packing; its new nodes, named after its
        template and holding its devices' UUIDs."""
        source = self.option
        option.scheduled = list(source.scheduled)
        option.requested_cpu = source.requested_cpu
        option.requested_memory = source.requested_memory
        old = limit_reason(source.node_limit, source.node_group, self.template.limit_reason)
        new = limit_reason(option.node_limit, option.node_group, template.limit_reason)
        option.unschedulable = {pid: new if why == old else why for pid, why in source.unschedulable.items()}
        relabel = _Relabel(self.template, template)
        nodes = []
        for i, node in enumerate(self.nodes):
            copy = template.new_node(i)
            copy.state = NodeState(
                copy.name, relabel(node.state.devices), copy.state.pair_scores, copy.state.cordoned
            )
            copy.free = node.free
            copy.pods = list(node.pods)
            nodes.append(copy)
        return nodes


class _Relabel:
    """Device lists of one template as another template has them: same usage, its own UUIDs."""

    __slots__ = ("source", "target", "ids", "done")

    def __init__(self, source: TemplateNode, target: TemplateNode) -> None:
        self.source = source.devices
        self.target = target.devices
        self.ids: Mapping[str, str] = {
            a.id: b.id for a, b in zip(source.devices, target.devices, strict=True)
        }
        self.done: dict[int, list[DeviceUsage]] = {}  # id(source list) -> copy (nodes share lists)

    def __call__(self, devices: list[DeviceUsage]) -> list[DeviceUsage]:
        if devices is self.source:
            return self.target
        found = self.done.get(id(devices))
        if found is None:
            found = []
            for dev in devices:
                copy = dev.copy()
                copy.id = self.ids.get(dev.id, dev.id)
                found.append(copy)
            self.done[id(devices)] = found
        return found

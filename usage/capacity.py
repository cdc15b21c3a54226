"""Aggregate capacity (``CA_AGGREGATE_CAPACITY``, ``deploy/capacity``): advertise on each HAMi node's
status the sum of its cards' device memory and cores under HAMi's own pod resource names.

With the names no longer in CA's ``ignoredResources`` (``make ca-config`` in that mode), upstream CA's
own simulation counts a pod's ``nvidia.com/gpumem`` and ``nvidia.com/gpucores`` against these totals,
so a node full by memory looks full to CA (``hami_sim.engine.blindspot`` computes that view). This
is the Kubernetes "advertise extended resources for a node" way: a JSON patch of ``status.capacity``
through the ``nodes/status`` subresource; kubelet copies it into ``status.allocatable``.

Kubelet sets an extended resource it does not own to 0 when it starts without its device-manager
checkpoint, so the watcher re-asserts: every node relist and every node event compares what a node
advertises with what its registered cards sum to, and patches the nodes that differ. A node with
no registered card of an aggregate vendor is left alone; a node that advertised the names and lost
its cards gets them removed. Only the names of ``aggregate_names`` are ever written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hami_sim.engine.blindspot import aggregate_capacity, aggregate_names
from hami_sim.engine.quantity import QuantityError, parse_quantity
from hami_sim.engine.simulate import Simulator

from .kube import patch_nodes_status

__all__ = ["aggregate_of", "capacity_patch", "CapacityResult", "assert_capacity"]

log = logging.getLogger("hami_sim.usage")


def _names(sim: Simulator) -> set[str]:
    return {n for e in aggregate_names(sim.vendors.values()).values() for n in (e.memory, e.cores)}


def aggregate_of(sim: Simulator, node: Mapping) -> dict[str, str]:
    """What ``node`` should advertise: the sums of its registered healthy cards of the aggregate
    vendors, as quantity strings (empty: not such a HAMi node, or its registration is unreadable)."""
    inventory = sim.annotation_inventory(node)
    if inventory.error or not inventory.devices:
        return {}
    name = str((node.get("metadata") or {}).get("name") or "")
    sums = aggregate_capacity(inventory.state(name).devices, aggregate_names(sim.vendors.values()))
    return {k: str(v) for k, v in sums.items()}


def _escape(name: str) -> str:
    """A resource name as one JSON-pointer token (RFC 6901: ``~`` then ``/``)."""
    return name.replace("~", "~0").replace("/", "~1")


def _same(current: object, want: str) -> bool:
    if not isinstance(current, str):
        return False
    try:
        return parse_quantity(current) == parse_quantity(want)
    except (QuantityError, ValueError):
        return False


def capacity_patch(node: Mapping, want: Mapping[str, str], managed: Iterable[str]) -> list[dict]:
    """The JSON patch (RFC 6902) that makes ``status.capacity`` hold ``want`` and none of the other
    ``managed`` names; empty when it already does."""
    status = node.get("status") or {}
    capacity = status.get("capacity")
    if not isinstance(capacity, Mapping):
        return [{"op": "add", "path": "/status/capacity", "value": dict(want)}] if want else []
    ops: list[dict] = []
    for name, value in sorted(want.items()):
        if not _same(capacity.get(name), value):
            ops.append({"op": "add", "path": f"/status/capacity/{_escape(name)}", "value": value})
    for name in sorted(set(managed) - set(want)):
        if name in capacity:
            ops.append({"op": "remove", "path": f"/status/capacity/{_escape(name)}"})
    return ops


@dataclass
class CapacityResult:
    """One pass: the nodes patched, and the failures by node (a 403 means the overlay's RBAC is missing)."""

    patched: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def assert_capacity(source: str, nodes: Iterable[Mapping], sim: Simulator | None = None) -> CapacityResult:
    """Patch every node of ``nodes`` whose advertised aggregate differs from its registered cards'.
    One node's failure is logged and the others are still patched; a source that cannot be
    configured raises ``SourceError``."""
    from hami_sim.runtime.simulator import get_simulator

    sim = sim or get_simulator()
    managed = _names(sim)
    patches: list[tuple[str, list[dict]]] = []
    for node in nodes:
        name = str((node.get("metadata") or {}).get("name") or "")
        ops = capacity_patch(node, aggregate_of(sim, node), managed) if name else []
        if ops:
            patches.append((name, ops))
    result = CapacityResult()
    if not patches:
        return result
    result.failed = patch_nodes_status(source, patches)
    result.patched = [name for name, _ops in patches if name not in result.failed]
    if result.failed:
        first = next(iter(result.failed.items()))
        log.warning(
            "aggregate capacity: %d node(s) not patched (%s: %s); deploy/capacity grants patch on nodes/status",
            len(result.failed),
            *first,
        )
    return result

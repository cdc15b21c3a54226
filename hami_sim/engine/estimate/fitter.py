"""One pod shape against one node: kube-scheduler's filters, then HAMi's device fit memoised by the
node's device-usage signature (the only part of a fit that depends on the devices).

Pods of one shape (same parsed request, policies and resource demand) fit identically, so a verdict
depends only on what a placement changes on the devices (``DeviceUsage.PLACEMENT_CHANGES``); the
signature is derived from that declaration."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import orjson

from ..interpod import PORTS_CONFLICT, ports_conflict
from ..model import DeviceUsage, NodeState
from ..scheduler_filters import Resources, insufficient
from ..simulate import Simulator
from ..topology import TopologyIndex
from .bound import device_bound
from .fits import GroupFits
from .parsed_groups import Equivalence

if TYPE_CHECKING:
    from .bulk import FreshFill

__all__ = ["Fitter", "PackedNode", "Shape", "device_signature"]

BOUND_REASON = "too few devices with the memory, cores and time slices the pod asks for"


class PackedNode:
    __slots__ = ("name", "state", "sig", "free", "pods", "ports", "topo")

    def __init__(self, name: str, state: NodeState, sig: tuple, free: Resources, ports: set | None) -> None:
        self.name = name
        self.state = state
        self.sig = sig
        self.free = free
        self.pods: list[str] = []
        self.ports = ports  # host ports in use (None = none)
        self.topo = -1  # the node's index in the packer's TopologyIndex (-1 = not indexed)


def _info_key(info: dict) -> bytes:
    """A canonical form of a device's ``custom_info`` (only built when it is non-empty).

    Fit reads it (MetaX sGPU's card QoS policy, which ``add_pod_usage`` retags after a placement), so
    two nodes with equal usage numbers but different ``custom_info`` must not share a memoised verdict.
    """
    try:
        return orjson.dumps(info, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # not JSON-shaped (never from annotations): fall back to its repr
        return repr(sorted(info.items(), key=repr)).encode()


def _info_entry(info: dict, shared: dict[int, bytes]) -> bytes:
    """``custom_info`` by content; a dict shared by several devices (MetaX GPU topology tables) is
    canonicalised once per signature (the device list keeps it alive, so its ``id`` is stable)."""
    key = shared.get(id(info))
    if key is None:
        key = shared[id(info)] = _info_key(info)
    return key


def _pod_infos_entry(infos: tuple[Mapping[str, str], ...], _shared: dict[int, bytes]) -> tuple:
    """The pods on a device by the annotations a vendor reads (MetaX sGPU's app classes)."""
    return tuple(tuple(sorted(i.items())) for i in infos)


def _mig_entry(in_use: list, _shared: dict[int, bytes]) -> tuple:
    """The MIG placements held, in order (a list, so a tuple for the key)."""
    return tuple(in_use)


#: how each placement-changed field that is not hashable as it stands enters a signature; every other
#: field of ``DeviceUsage.PLACEMENT_CHANGES`` enters as it is (a new unhashable one fails the memo's
#: dict insert loudly instead of sharing a verdict)
_CANONICAL: Mapping[str, Callable[[Any, dict[int, bytes]], object]] = {
    "mig_in_use": _mig_entry,
    "custom_info": _info_entry,
    "pod_infos": _pod_infos_entry,
}
_PLAIN_NAMES = tuple(f for f in DeviceUsage.PLACEMENT_CHANGES if f not in _CANONICAL)
_OTHER_NAMES = tuple(f for f in DeviceUsage.PLACEMENT_CHANGES if f in _CANONICAL)
_OTHER_CANONICAL = tuple(_CANONICAL[f] for f in _OTHER_NAMES)
_PLAIN_FIELDS = attrgetter(*_PLAIN_NAMES)
_OTHER_FIELDS = attrgetter(*_OTHER_NAMES)


def device_signature(devices: list[DeviceUsage]) -> tuple:
    """Everything Fit reads that placements change (``DeviceUsage.PLACEMENT_CHANGES``: usage
    numbers, MIG placements, ``custom_info``, the pods on a device), one entry per device.

    Computed only for fresh templates and on memo misses. A device whose other placement-changed
    fields are all empty (the common case) keeps the short tuple of the plain ones; else every field
    is appended in canonical form, empty ones as ``()``.
    """
    shared: dict[int, bytes] = {}
    out: list[tuple] = []
    for d in devices:
        entry: tuple = _PLAIN_FIELDS(d)
        others = _OTHER_FIELDS(d)
        if any(others):
            pairs = zip(_OTHER_CANONICAL, others, strict=True)
            entry += tuple([canonical(value, shared) if value else () for canonical, value in pairs])
        out.append(entry)
    return tuple(out)


class Fitter:
    """Fits one pod shape on nodes of one group: kube-scheduler's filters, then HAMi's device fit
    memoised by device-usage signature (the only part that depends on the devices)."""

    __slots__ = (
        "sim",
        "ctx",
        "demand",
        "devices",
        "memo",
        "terms",
        "index",
        "pod",
        "bound",
        "fits",
        "shared",
    )

    def __init__(
        self,
        sim: Simulator,
        eq: Equivalence,
        index: TopologyIndex | None,
        template_devices: list[DeviceUsage] | None = None,
        fits: GroupFits | None = None,
    ) -> None:
        self.sim = sim
        # the fits other groups of alike devices computed for this pod (fits.py)
        self.fits = fits
        self.shared = fits.memo(eq.ctx.key) if fits is not None and eq.ctx.uuid_blind else None
        # a quick "cannot fit" for the scans that need no reason (``probe``)
        self.bound = device_bound(sim, eq.ctx, template_devices) if template_devices else None
        self.pod = eq.pod
        self.ctx = eq.ctx
        self.demand = eq.demand
        self.devices = eq.ctx.pod.requests.has_requests
        self.memo: dict[tuple, tuple[str, list[DeviceUsage] | None, tuple]] = {}
        self.terms = eq.terms
        self.index = index

    def check(self, node: PackedNode, quick: bool = False) -> tuple[str, list[DeviceUsage] | None, tuple]:
        """("" or the reason, devices after placing, their signature). ``quick``: the caller reads
        only whether the pod fits, so a device usage the bound excludes answers no without HAMi's
        fit (with a reason of its own, never memoised)."""
        terms = self.terms
        if terms.ports and node.ports and ports_conflict(terms.ports, node.ports):
            return PORTS_CONFLICT, None, node.sig
        reason = insufficient(self.demand, node.free)
        if reason:
            return reason, None, node.sig
        if self.index is not None:
            reason = self.index.problem(terms, node.topo)
            if reason:
                return reason, None, node.sig
        if not self.devices:
            return "", node.state.devices, node.sig
        cached = self.memo.get(node.sig)
        if cached is None:
            if quick and self.bound is not None and self.bound.excludes(node.state.devices):
                return BOUND_REASON, None, node.sig
            cached = self._fit(node)
            self.memo[node.sig] = cached
        return cached

    def _fit(self, node: PackedNode) -> tuple[str, list[DeviceUsage] | None, tuple]:
        """HAMi's fit on the node's devices, or the one another group computed on alike devices."""
        shared, fits = self.shared, self.fits
        if shared is None or fits is None:
            return self._evaluate(node)
        entry = shared.get(node.sig)
        if entry is None:
            fit = self._evaluate(node)
            shared[node.sig] = (fit, fits.ids)
            return fit
        return fits.own(*entry)

    def probe(self, node: PackedNode) -> tuple[str, list[DeviceUsage] | None, tuple]:
        """``check`` for a scan that reads only whether the pod fits (``quick``)."""
        return self.check(node, True)

    def _evaluate(self, node: PackedNode) -> tuple[str, list[DeviceUsage] | None, tuple]:
        verdict = self.sim.evaluate(self.ctx, node.name, node.state)
        if verdict.fits and verdict.fit is not None and verdict.fit.usage_after is not None:
            after = list(verdict.fit.usage_after)
            return "", after, device_signature(after)
        return verdict.reason or "pod does not fit", None, node.sig

    def place(self, node: PackedNode, pid: str, devices: list[DeviceUsage] | None, sig: tuple) -> None:
        node.free.take(self.demand)
        node.pods.append(pid)
        if self.terms.ports:
            node.ports = set(node.ports or ()) | self.terms.ports
        if self.index is not None:
            self.index.add_pod(node.topo, self.terms)
        if devices is not None and devices is not node.state.devices:
            node.state = NodeState(node.name, devices, node.state.pair_scores, node.state.cordoned)
            node.sig = sig


class Shape:
    """Pods that fit identically (same parsed request, policies and resource demand).

    They share one fit memo and one sorted list of candidate node indices: a node that rejected the
    shape leaves the list until a placement changes that node, so the round-robin scan does not walk
    over full nodes again and again. ``seen`` = how many of the group's nodes the list covers.
    """

    __slots__ = ("fitter", "cands", "seen", "dynamic", "fill")

    def __init__(self, fitter: Fitter) -> None:
        self.fitter = fitter
        self.fill: FreshFill | None = None  # how the shape fills a fresh node (bulk.py), once asked
        self.cands: list[int] = []
        self.seen = 0
        # pod affinity and topology spread: a node may start to fit after a placement elsewhere, so
        # no node leaves the candidate list
        self.dynamic = fitter.index is not None and fitter.terms.dynamic

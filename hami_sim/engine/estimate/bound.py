"""A necessary condition for HAMi's NVIDIA device fit, cheap enough to ask before the fit itself.

Binpacking asks a pod shape about node after node, and with many shapes on one node most of those
nodes' device usage is new to the shape (no memoised verdict) and most of the answers are no. HAMi's
NVIDIA ``Fit`` takes a device for a container's request only if the device has a time slice left,
the memory the request takes of it and passes the core rules (``core_reason``: the cores it asks for,
a whole card unused, compute left for a core-less request), with more rules after those, and a
request needs ``nums`` such devices: so a node with fewer devices passing those rules cannot
hold the pod, and the full fit (device scores, policy sort, walk) need not run to say so.

The bound only ever says "cannot fit"; "may fit" still runs HAMi's fit. It is sound because:

- every app container is fitted on a usage at least the node's (one after another on the node,
  after the init containers when a HAMi release adds theirs up), and these rules only fail more
  often as usage grows (a card whose used cores passed its total fails the first core rule), so
  each app container's request is checked against the node's usage as it stands; init containers
  are left out (HAMi 2.8 does not read them);
- the rules are a subset of NVIDIA's per-device rules, in HAMi's arithmetic (``memory_request``),
  and devices of other types counted as passing only weaken the bound;
- NUMA binding and topology mode only narrow which passing devices are taken;
- a MIG-mode device can give one request several instances, so a node with one gets no bound.

Requests of other vendors are not bounded (their Fit decides alone).
"""

from __future__ import annotations

from ..model import ContainerDeviceRequest, DeviceUsage
from ..simulate import PodContext, Simulator
from ..vendors.fit_loop import core_reason, memory_request
from ..vendors.nvidia import NvidiaVendor
from ..vendors.nvidia_mig import MIG_MODE

__all__ = ["device_bound"]

# (devices needed, the request, MiB per device or None when it depends on the card, cores per device)
_Rule = tuple[int, ContainerDeviceRequest, int | None, int]


class DeviceBound:
    """The NVIDIA requests of one pod shape, each as (devices, memory, cores) it needs per device."""

    __slots__ = ("rules",)

    def __init__(self, rules: list[_Rule]) -> None:
        self.rules = rules

    def excludes(self, devices: list[DeviceUsage]) -> bool:
        """True when no fit of the shape on ``devices`` (the node's usage) is possible."""
        for nums, request, memreq, cores in self.rules:
            passing = 0
            for dev in devices:
                if dev.used >= dev.count:
                    continue
                mem = memreq if memreq is not None else memory_request(request, dev)
                if dev.totalmem - dev.usedmem < mem or core_reason(dev, cores):
                    continue
                passing += 1
                if passing >= nums:
                    break
            else:
                return True
        return False


def device_bound(sim: Simulator, ctx: PodContext, devices: list[DeviceUsage]) -> DeviceBound | None:
    """The bound for a pod shape on a group whose fresh node has ``devices``; None when it would
    prove nothing (no NVIDIA request, or a MIG-mode device on the node)."""
    if any(dev.mode == MIG_MODE for dev in devices):
        return None
    rules: list[_Rule] = []
    requests = ctx.pod.requests
    for container in requests.containers[requests.init_count :]:
        for vtype, request in container.items():
            if request.nums <= 0 or not isinstance(sim.vendors.get(vtype), NvidiaVendor):
                continue
            fixed = request.memreq if request.memreq > 0 else None  # memory_request's first case
            rules.append((request.nums, request, fixed, min(request.coresreq, 100)))
    return DeviceBound(rules) if rules else None

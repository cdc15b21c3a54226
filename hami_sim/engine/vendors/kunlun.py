"""Kunlunxin XPUs (HAMi ``pkg/device/kunlun``): whole cards (``kunlun``) and vXPU slices (``XPU``).

- Whole cards: ``status.capacity[kunlunxin.com/xpu]`` cards (count 100, 98304 MiB; the upper half of
  the indices on NUMA 1). A request for N cards is placed by the 8-card board topology
  (``graghSelect``: two 4-card wings, preferred pairings) on idle, healthy cards only. Allocation
  only bumps ``used``.
- vXPU: JSON ``hami.io/node-register-xpu``; ``kunlunxin.com/vxpu`` devices and
  ``kunlunxin.com/vxpu-memory`` MiB rounded **up** to the 24576 / 49152 / 98304 templates; cores
  follow memory (``mem x 100 / 98304``); no memory = the whole card. A healthy card only takes
  slices of the size it already holds; under the mutex policy only idle cards.
- Both place cards on the 8-card board of ``kunlun_topology.py``, and both select cards by UUID with ``hami.io/use-xpu-uuid`` / ``no-use-xpu-uuid`` *and* the legacy
  ``baidu.com/use-gpuuuid`` / ``nouse-gpuuuid`` (a card must pass both). When nothing is placed the
  reason counts over the node's devices: the mutex conflicts (vXPU), else the cards rejected by UUID,
  else ``1/<n> NumaNotFit``.

Node score (``ScoreNode``, whole cards only, ``kunlun_topology_score``): on a node whose every
device is a ``kunlun`` card, ``countbubble`` of the cards in use before the pod and of the pod's cards
(two 4-card wings: a wing holding 4 cards counts 0, 1 card 2, anything else 1; nothing at all counts
1) decides the bonus: one bubble fewer 3000, as many 2000, one more 1000, two more 0, any other
change 1000 (HAMi ``calcscore``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, uuid_check
from .kunlun_topology import FitFn, graph_select, kunlun_topology_score
from .node_codecs import capacity_devices, json_devices
from .registry import (
    CUSTOMINFO_HELP,
    Backend,
    ProfileFields,
    Row,
    VendorDescriptor,
    capacity_renderer,
    render_json,
)
from .request_rules import count_request, requested_count, resource_value
from .selection import UuidCheck

if TYPE_CHECKING:
    from ..hami_releases import HamiRules
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "KunlunConfig",
    "KunlunVendor",
    "KunlunVxpuVendor",
    "KUNLUN",
    "XPU",
    "XPU_REGISTER",
    "trim_vxpu_memory",
    "graph_select",
    "kunlun_topology_score",
]

KUNLUN = "kunlun"
XPU = "XPU"
XPU_REGISTER = "hami.io/node-register-xpu"
KUNLUN_MAX_MEMORY = 98304
VXPU_TEMPLATES = (24576, 49152)


def trim_vxpu_memory(memory: int) -> int:
    """``trimMemory``: the vXPU template a memory request rounds up to (the whole card above 49152)."""
    for template in VXPU_TEMPLATES:
        if memory <= template:
            return template
    return KUNLUN_MAX_MEMORY


UUID_KEYS = (
    ("hami.io/use-xpu-uuid", "hami.io/no-use-xpu-uuid"),
    ("baidu.com/use-gpuuuid", "baidu.com/nouse-gpuuuid"),
)


def _select(
    devices: list[DeviceUsage],
    request: ContainerDeviceRequest,
    pod: PodView,
    fits: FitFn,
    full: bool,
    failure: Callable[[], dict[str, int]] = dict,
    uuids: UuidCheck | None = None,
    over_devices: bool = True,
) -> FitOutcome:
    """HAMi's kunlun/vXPU Fit around ``graghSelect``: a device must pass both UUID selections (the
    ``hami.io`` and ``baidu.com`` lists) and ``fits``. On failure the reason is ``failure()``'s counts,
    else the number of devices rejected by UUID, else one ``NumaNotFit``, over the node's devices.
    ``uuids``: the release's UUID-list check; None (before v2.10, #2577,
    ``HamiRules.kunlun_uuid_selection``): the lists are not read. ``over_devices`` off (before v2.10,
    ``HamiRules.graph_reason_over_devices``): the reason counts over 1."""
    annotations = pod.annotations
    mismatched: set[str] = set()

    def usable(dev: DeviceUsage, req: ContainerDeviceRequest) -> bool:
        if uuids is not None and not all(uuids(annotations, dev.id, use, nouse) for use, nouse in UUID_KEYS):
            mismatched.add(dev.id)
            return False
        return fits(dev, req)

    alloc = graph_select(devices, request, usable)
    if not alloc:
        counts = failure()
        if not counts and mismatched:
            counts = {R.CARD_UUID_MISMATCH: len(mismatched)}
        if not counts:
            counts = {R.NUMA_NOT_FIT: 1}
        return FitOutcome(False, [], R.gen_reason(counts, len(devices) if over_devices else len(counts)))
    chosen: list[ContainerDevice] = []
    for idx in alloc:
        for dev in devices:
            if dev.index == idx:
                mem, cores = (dev.totalmem, dev.totalcore) if full else (request.memreq, request.coresreq)
                chosen.append(ContainerDevice(dev.index, dev.id, request.type, mem, cores))
                break
    return FitOutcome(True, chosen, "")


@dataclass(slots=True, frozen=True)
class KunlunConfig:
    """The ``kunlun:`` block of HAMi's device config."""

    resource_count_name: str = "kunlunxin.com/xpu"
    resource_vcount_name: str = "kunlunxin.com/vxpu"
    resource_vmemory_name: str = "kunlunxin.com/vxpu-memory"


class KunlunVendor(Vendor):
    """Whole Kunlunxin cards from node capacity."""

    common_word = KUNLUN
    allocated_annotation = (
        "hami.io/kunlun-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = KunlunConfig
    resource_fields = ("resource_count_name",)

    def node_reads(self) -> NodeReads:
        """The card count in capacity; the cards are named after the node."""
        return NodeReads(capacity=(self.config.resource_count_name,), name="id")

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        devices = capacity_devices(
            node,
            self.config.resource_count_name,
            KUNLUN,
            id_infix="kunlun",
            split=100,
            devmem=KUNLUN_MAX_MEMORY,
            devcore=100,
        )
        half = len(devices) // 2
        return [replace(dev, numa=1) if dev.index >= half else dev for dev in devices], {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        return count_request(resources, self.config.resource_count_name, KUNLUN)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        rules = self.release_rules
        over = rules.graph_reason_over_devices
        return _select(devices, request, pod, _fits_xpu, full=True, uuids=_uuids(rules), over_devices=over)

    def add_usage(self, dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
        dev.used += 1  # HAMi's kunlun AddResourceUsage only counts the user
        return None

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        return kunlun_topology_score(pod_devices, previous, KUNLUN)


def _fits_xpu(dev: DeviceUsage, request: ContainerDeviceRequest) -> bool:
    """``FitXPU``: a whole card must be idle and healthy."""
    return dev.used == 0 and dev.health


def _fits_vxpu(dev: DeviceUsage, request: ContainerDeviceRequest) -> bool:
    """``FitVXPU``: healthy, memory left, and a used card only takes slices of the size it holds."""
    if not dev.health:
        return False
    if request.memreq + dev.usedmem > dev.totalmem:
        return False
    if dev.used == 0:
        return True
    return dev.usedmem // dev.used == request.memreq


class KunlunVxpuVendor(Vendor):
    """vXPU slices from the ``hami.io/node-register-xpu`` JSON registration."""

    common_word = XPU
    allocated_annotation = (
        "hami.io/xpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = KunlunConfig
    resource_fields = ("resource_vcount_name", "resource_vmemory_name")
    register_key = XPU_REGISTER

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(XPU_REGISTER,), json_devices=True)

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return json_devices(annotations, XPU_REGISTER, XPU, "no device found on node"), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        nums = requested_count(resources, c.resource_vcount_name)
        if nums is None:
            return None
        mem = resource_value(resources, c.resource_vmemory_name)
        memnum = trim_vxpu_memory(mem) if mem is not None else 0
        cores = memnum * 100 // KUNLUN_MAX_MEMORY
        pct = 0
        if memnum == 0:
            pct, cores, memnum = 100, 100, KUNLUN_MAX_MEMORY
        return ContainerDeviceRequest(nums, XPU, memnum, pct, cores)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        uuids = _uuids(self.release_rules)
        over = self.release_rules.graph_reason_over_devices
        if not policy.mutex:
            return _select(devices, request, pod, _fits_vxpu, full=False, uuids=uuids, over_devices=over)

        def conflicts() -> dict[str, int]:
            # under mutex, every used card that would otherwise take the slice is a conflict
            n = sum(1 for dev in devices if dev.used > 0 and _fits_vxpu(dev, request))
            return {R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT: n} if n else {}

        return _select(
            devices,
            request,
            pod,
            lambda d, r: d.used == 0 and _fits_vxpu(d, r),
            full=False,
            failure=conflicts,
            uuids=uuids,
            over_devices=over,
        )


def _uuids(release: HamiRules) -> UuidCheck | None:
    """The UUID-list check Kunlunxin's Fit applies under ``release``; None: the lists are not read."""
    return uuid_check(release) if release.kunlun_uuid_selection else None


def _capacity(config: KunlunConfig, devices: Sequence[DeviceInfo]) -> dict[str, str]:
    return {config.resource_count_name: str(len(devices))}


def _check_rows(rows: Sequence[Row]) -> str:
    """HAMi puts the upper half of a node's cards on NUMA 1: the rows must say so."""
    total = sum(int(r.get("quantity", 1)) for r in rows)
    index = 0
    for i, r in enumerate(rows):
        for _ in range(int(r.get("quantity", 1))):
            want = 1 if index >= total // 2 else 0
            if r.get("numa") != want:
                return (
                    f"rows[{i}].numa must be {want}: HAMi puts the upper half of a node's kunlun cards "
                    f"on NUMA 1 (use one row per half)"
                )
            index += 1
    return ""


XPU_PROFILE = ProfileFields(
    label="Kunlunxin XPU (capacity)",
    device_noun="XPU",
    codec="capacity",
    help="status.capacity kunlunxin.com/xpu = cards; the upper half of the cards is NUMA 1",
    render=capacity_renderer(_capacity),
    fixed={"type": KUNLUN, "count": 100, "devmem": KUNLUN_MAX_MEMORY, "devcore": 100},
    check_rows=_check_rows,
)
VXPU_PROFILE = ProfileFields(
    label="Kunlunxin vXPU",
    device_noun="XPU",
    codec="json",
    help="hami.io/node-register-xpu JSON (Kunlunxin vXPU)",
    render=render_json,
    extras={"custominfo": CUSTOMINFO_HELP},
    count_field="resource_vcount_name",
)

DESCRIPTOR = VendorDescriptor(
    block="kunlun",
    order=70,
    config_class=KunlunConfig,
    backends=(
        Backend(KunlunVendor, lambda word: XPU_PROFILE),
        Backend(KunlunVxpuVendor, lambda word: VXPU_PROFILE),
    ),
)

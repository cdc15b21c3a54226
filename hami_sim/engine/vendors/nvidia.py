"""NVIDIA (HAMi ``pkg/device/nvidia``): JSON registration, request parsing, Fit, topology.

MIG (how a MIG-mode GPU gives instances, and the MIG reservations live usage counts) is
``nvidia_mig.py``; this module calls it where HAMi's NVIDIA backend does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import reasons as R
from ..annotations import (
    NVIDIA_PAIR_SCORE,
    NVIDIA_REGISTER,
    AnnotationError,
    decode_pair_scores,
    encode_pair_scores,
)
from ..hami_releases import HamiRules
from ..model import (
    ContainerDevice,
    ContainerDeviceRequest,
    DeviceInfo,
    DeviceUsage,
    InventoryError,
    NodeState,
)
from .base import (
    FitOutcome,
    NodeReads,
    PriorDevices,
    Reservations,
    ResourceGetter,
    UuidIdentity,
    Vendor,
    go_parse_bool,
    type_allows,
    uuid_check,
)
from .fit_loop import Rejections, collected_count, core_reason, memory_request
from .node_codecs import json_devices
from .nvidia_mig import MIG_MODE, MIG_RESERVATIONS, PROFILE_MIG, ProfileMig
from .nvidia_mig_defaults import template_mig
from .nvidia_mig_templates import MigGeometries, TemplateMig, geometries_from_settings
from .nvidia_requests import checked_request, request_as_written
from .nvidia_topology import topology_pick
from .registry import (
    CUSTOMINFO_HELP,
    Backend,
    ProfileFields,
    Registration,
    RenderInput,
    VendorDescriptor,
    render_json,
)

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "NvidiaConfig",
    "NvidiaVendor",
    "GPU_IN_USE",
    "GPU_NO_USE",
    "GPU_USE_UUID",
    "GPU_NO_USE_UUID",
    "NUMA_BIND",
    "ALLOCATE_MODE",
]

NVIDIA = "NVIDIA"
GPU_IN_USE = "nvidia.com/use-gputype"
GPU_NO_USE = "nvidia.com/nouse-gputype"
GPU_USE_UUID = "nvidia.com/use-gpuuuid"
GPU_NO_USE_UUID = "nvidia.com/nouse-gpuuuid"
NUMA_BIND = "nvidia.com/numa-bind"
ALLOCATE_MODE = "nvidia.com/vgpu-mode"


@dataclass(slots=True, frozen=True)
class NvidiaConfig:
    """The ``nvidia:`` block of HAMi's device config (Helm defaults)."""

    resource_count_name: str = "nvidia.com/gpu"
    resource_memory_name: str = "nvidia.com/gpumem"
    resource_memory_percentage_name: str = "nvidia.com/gpumem-percentage"
    resource_core_name: str = "nvidia.com/gpucores"
    resource_priority_name: str = "nvidia.com/priority"
    default_memory: int = 0
    default_cores: int = 0
    memory_factor: int = 1
    # ``knownMigGeometries``: what a MIG GPU may be split into before v2.10.0 (``mig_profiles``);
    # None: not configured, so the release's chart default (``HamiRules.mig_default_geometries``)
    known_mig_geometries: tuple[MigGeometries, ...] | None = None


class _Walk:
    """The state of one NVIDIA Fit walk: what is still needed, what was collected, why devices failed."""

    __slots__ = ("origin", "nums", "numa_bind", "prevnuma", "collected", "reject", "release")

    def __init__(self, nums: int, numa_bind: bool, release: HamiRules) -> None:
        self.origin = self.nums = nums
        self.numa_bind = numa_bind
        self.release = release  # how NumaNotFit and AllocatedCardsInsufficientRequest count
        self.prevnuma = -1
        self.collected: list[ContainerDevice] = []
        self.reject = Rejections()

    def numa_switch(self, dev: DeviceUsage) -> None:
        """``numa-bind``: a device on another NUMA node restarts the collection; the devices dropped
        count as ``NumaNotFit``."""
        if not self.numa_bind or dev.numa == self.prevnuma:
            return
        if self.nums != self.origin:
            counts, reasons = self.reject.counts, self.reject.device_reasons
            counts[R.NUMA_NOT_FIT] = counts.get(R.NUMA_NOT_FIT, 0) + self.collected_count()
            for prior in self.collected:
                reasons.setdefault(prior.uuid, R.NUMA_NOT_FIT)
        self.nums = self.origin
        self.prevnuma = dev.numa
        self.collected = []

    def collected_count(self) -> int:
        """How HAMi counts the devices collected in a reason (``fit_loop.collected_count``)."""
        return collected_count(self.release, self.collected)


def _selection_reason(
    dev: DeviceUsage,
    request: ContainerDeviceRequest,
    annotations: Mapping[str, str],
    cordoned: frozenset[str],
    release: HamiRules,
) -> str:
    """The rules checked before the NUMA switch: health, cordon, request type, card type and mode."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if dev.id in cordoned:
        return R.CARD_CORDONED
    vgpu_mode = annotations.get(ALLOCATE_MODE)
    if (
        request.type != NVIDIA
        or not type_allows(release, annotations, dev.type, GPU_IN_USE, GPU_NO_USE)
        or (vgpu_mode is not None and dev.mode not in vgpu_mode)
    ):
        return R.CARD_TYPE_MISMATCH
    return ""


def _uuid_blind(dev: DeviceInfo) -> bool:
    """A MIG device's accounting error names its UUID; vendor data is left to be safe."""
    return dev.mode != MIG_MODE and not dev.mig_profiles and dev.custom_info is None


class NvidiaVendor(Vendor):
    health_always_checked = True  # its Fit skipped unhealthy devices in every release
    common_word = NVIDIA
    allocated_annotation = (
        "hami.io/vgpu-devices-allocated"  # SupportDevices: where HAMi writes the allocation
    )
    register_key = NVIDIA_REGISTER
    config_class = NvidiaConfig
    resource_fields = (
        "resource_count_name",
        "resource_memory_name",
        "resource_memory_percentage_name",
        "resource_core_name",
        "resource_priority_name",
    )

    # Only ``use-gpuuuid``/``nouse-gpuuuid`` read UUIDs (``CheckUUID``); the walk, the usage
    # accounting and the reasons compare them (topology pair scores are the node's, checked by the
    # simulator)
    uuids = UuidIdentity((GPU_USE_UUID, GPU_NO_USE_UUID), _uuid_blind)
    # the MIG placements a pod reserves (``hami.io/vgpu-mig-allocations``), counted by live usage
    reservations = MIG_RESERVATIONS
    # its gpumem (MiB per card) and gpucores (percent of a card) add up over a node's cards
    sums_capacity = True

    # -- registration ---------------------------------------------------------------------------
    def node_reads(self) -> NodeReads:
        """The registration and the operator's pair scores; asked on every node (the default backend)."""
        return NodeReads(
            registers=(NVIDIA_REGISTER,),
            annotations={NVIDIA_PAIR_SCORE: "pair_scores"},
            every_node=True,
            json_devices=True,
        )

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        devices = json_devices(annotations, NVIDIA_REGISTER, NVIDIA, "no gpu found on node")
        if not devices:
            return [], {}
        pair_scores: dict[str, dict[str, int]] = {}
        raw_scores = annotations.get(NVIDIA_PAIR_SCORE)
        if raw_scores is not None:
            try:
                pair_scores = decode_pair_scores(raw_scores)
            except AnnotationError as exc:
                raise InventoryError(NVIDIA_PAIR_SCORE, str(exc)) from None
        return devices, pair_scores

    # -- requests -------------------------------------------------------------------------------
    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """HAMi's NVIDIA ``GenerateResourceRequests`` under the release's rules (``nvidia_requests``)."""
        if self.release_rules.nvidia_request_checks:
            return checked_request(self.config, resources)
        return request_as_written(self.config, resources)

    def holding_limits(self, count: int, memory: int, cores: int) -> dict[str, str]:
        """``count`` GPUs with ``memory`` MiB (in ``memoryFactor`` units, rounded up) and ``cores``."""
        c = self.config
        return {
            c.resource_count_name: str(count),
            c.resource_memory_name: str(-(-memory // max(c.memory_factor, 1))),
            c.resource_core_name: str(cores),
        }

    # -- fit --------------------------------------------------------------------------------------
    def binds_numa(self, annotations: Mapping[str, str]) -> bool:
        return go_parse_bool(annotations.get(NUMA_BIND))

    def is_mig_request(
        self, request: ContainerDeviceRequest, devices: list[DeviceUsage], pod: PodView
    ) -> bool:
        if request.type != NVIDIA:
            return False
        mode = pod.annotations.get(ALLOCATE_MODE)
        if mode is not None and MIG_MODE not in mode:
            return False
        return any(dev.mode == MIG_MODE for dev in devices)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """HAMi's NVIDIA ``Fit``: walk the policy-sorted devices from the end, reject each on its first
        failing rule, restart the collection on every NUMA change under ``numa-bind``, and stop once
        enough devices were collected (topology mode collects every fitting device, then picks)."""
        rules = self.release_rules
        walk = _Walk(request.nums, go_parse_bool(pod.annotations.get(NUMA_BIND)), rules)
        cordoned = node.cordoned if rules.device_cordon else frozenset()
        coresreq = min(request.coresreq, 100)  # HAMi clamps before the first rule that reads it
        topology = policy.topology
        i = len(devices) - 1
        while i >= 0:
            dev = devices[i]
            i -= 1
            why = _selection_reason(dev, request, pod.annotations, cordoned, rules)
            if why:
                walk.reject(dev, why)
                continue
            walk.numa_switch(dev)
            why, memreq = self._device_reason(dev, request, pod.annotations, coresreq, walk, policy.mutex)
            if why:
                walk.reject(dev, why)
                continue
            if walk.nums > 0:
                walk.collected.append(ContainerDevice(dev.index, dev.id, NVIDIA, memreq, coresreq))
                if not topology:
                    walk.nums -= 1
                    if walk.nums == 0:
                        return FitOutcome(True, walk.collected, "", walk.reject.device_reasons)
                if dev.mode == MIG_MODE:
                    i += 1  # one MIG-mode GPU may supply several instances: visit it again
        return self._finish(walk, devices, node, topology)

    def _device_reason(
        self,
        dev: DeviceUsage,
        request: ContainerDeviceRequest,
        annotations: Mapping[str, str],
        coresreq: int,
        walk: _Walk,
        mutex: bool,
    ) -> tuple[str, int]:
        """(the first failing rule after selection, "" when the device fits; the memory it would give)."""
        if not uuid_check(self.release_rules)(annotations, dev.id, GPU_USE_UUID, GPU_NO_USE_UUID):
            return R.CARD_UUID_MISMATCH, 0
        if dev.count <= dev.used:
            return R.CARD_TIME_SLICING_EXHAUSTED, 0
        if mutex and dev.used > 0:
            return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT, 0
        memreq = memory_request(request, dev)
        if dev.totalmem - dev.usedmem < memreq:
            return R.CARD_INSUFFICIENT_MEMORY, memreq
        why = core_reason(dev, coresreq)
        if why:
            return why, memreq
        if dev.mode == MIG_MODE:
            mig = self.mig
            if not mig.fits(dev, memreq, request.memreq, walk.collected):
                return mig.refusal, memreq
        return "", memreq

    def _finish(self, walk: _Walk, devices: list[DeviceUsage], node: NodeState, topology: bool) -> FitOutcome:
        """After the walk: topology mode picks from what it collected; otherwise too few were found."""
        origin, collected, reject = walk.origin, walk.collected, walk.reject
        if topology and len(collected) >= origin:
            zero_scores = self.release_rules.topology_zero_scores
            chosen = (
                collected
                if len(collected) == origin
                else topology_pick(collected, origin, node.pair_scores, zero_scores=zero_scores)
            )
            return FitOutcome(True, chosen, "", reject.device_reasons)
        if collected:
            reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = walk.collected_count()
        return FitOutcome(False, [], R.gen_reason(reject.counts, len(devices)), reject.device_reasons)

    @property
    def mig(self) -> ProfileMig | TemplateMig:
        """The release's MIG rules (``HamiRules.mig_profiles``): v2.10.0's registered profiles and
        placements (``nvidia_mig``), or before it the config's geometries (``nvidia_mig_templates``),
        the release's chart default when none are configured (``nvidia_mig_defaults``)."""
        rules = self.release_rules
        if rules.mig_profiles:
            return PROFILE_MIG
        return template_mig(self.config.known_mig_geometries, rules.mig_default_geometries)

    def release_reservations(self) -> Reservations:
        """What live usage counts beside the allocation under this release (``mig``)."""
        return self.mig.reservations

    def placed(self, dev: DeviceUsage, chosen: ContainerDevice) -> ContainerDevice:
        """On a MIG device: the instance ``add_usage`` placed last, with its memory and cores."""
        return self.mig.placed(dev, chosen) if dev.mode == MIG_MODE else chosen

    def add_usage(self, dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
        if dev.mode == MIG_MODE:
            return self.mig.take(dev, chosen)
        dev.used += 1
        dev.usedmem += chosen.usedmem
        dev.usedcores += chosen.usedcores
        return None


def config_from_settings(block: Mapping[str, Any]) -> NvidiaConfig:
    """``HAMI["NVIDIA"]`` (Helm's camelCase names, every key required) as the config block."""
    return NvidiaConfig(
        resource_count_name=block["resourceCountName"],
        resource_memory_name=block["resourceMemoryName"],
        resource_memory_percentage_name=block["resourceMemoryPercentageName"],
        resource_core_name=block["resourceCoreName"],
        default_memory=block["defaultMemory"],
        default_cores=block["defaultCores"],
        memory_factor=block["memoryFactor"],
        known_mig_geometries=geometries_from_settings(block.get("knownMigGeometries")),
    )


def _render(vendor: NvidiaVendor, data: RenderInput, count_name: str) -> Registration:
    out = render_json(vendor, data, count_name)
    if data.pair_scores:
        out.annotations[NVIDIA_PAIR_SCORE] = encode_pair_scores(
            {a: dict(row) for a, row in data.pair_scores.items()}
        )
    return out


PROFILE = ProfileFields(
    label="NVIDIA GPU",
    codec="json",
    help="hami.io/node-nvidia-register JSON; mode hami-core/mig/mps, MIG profiles",
    render=_render,
    extras={"custominfo": CUSTOMINFO_HELP},
    pair_scores=True,
    modes=("hami-core", MIG_MODE, "mps"),
)

DESCRIPTOR = VendorDescriptor(
    block="nvidia",
    order=10,
    config_class=NvidiaConfig,
    backends=(Backend(NvidiaVendor, lambda word: PROFILE),),
    settings_block="NVIDIA",
    from_settings=config_from_settings,
)

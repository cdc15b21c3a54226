"""MetaX GPUs (HAMi ``pkg/device/metax``): whole GPUs (``Metax-GPU``) and sGPU slices (``Metax-SGPU``).

- Whole GPUs: ``status.capacity[metax-tech.com/gpu]`` exclusive devices (count 1, 65536 MiB);
  ``metax-tech.com/gpu: N`` (limits, else requests) asks for N whole GPUs. HAMi's
  ``customFilterRule``: a later container of the pod may only use the device every earlier
  container of its phase got (``CardNotFoundCustomFilterRule``); with count-1 cards that means one
  GPU-requesting container per phase. ``ScoreNode``: under binpack ``2000 - losses[n]``, under
  spread ``2000 - scores[n]``, where ``n`` = the pod's MetaX GPUs and ``losses``/``scores`` are the
  JSON ``{"<n>": <int>}`` node annotations ``metax-tech.com/gpu.topology.losses`` / ``.scores``
  (absent: no score; unparsable or no entry for ``n``: 2000).
- sGPU: ``MetaxSgpuVendor`` below, its rules (registration JSON, limits-only requests, QoS policies,
  app classes) in ``metax_sgpu.py``, which cards it takes and its "policy neutral" score in
  ``metax_sgpu_rank.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import orjson

from ..frozen import freeze
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from ..policy import f32
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .fit_loop import FitRules, Rejections, common_fit, same_device_rule
from .metax_sgpu import (
    APP_CLASS,
    METAX_SGPU,
    METAX_SGPU_REGISTER,
    SGPU_PROFILE,
    SgpuAsk,
    card_reason,
    decode_sdevices,
    retag_qos,
    vmemory_mib,
)
from .metax_sgpu_rank import choose, neutral_score
from .node_codecs import capacity_devices
from .registry import Backend, ProfileFields, VendorDescriptor, capacity_renderer
from .request_rules import MAX_INT32, count_request, int32, int64, quantity_int

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "MetaxConfig",
    "MetaxGpuVendor",
    "MetaxSgpuVendor",
    "METAX_GPU",
    "TOPOLOGY_LOSSES",
    "TOPOLOGY_SCORES",
    "parse_topology_map",
]

METAX_GPU = "Metax-GPU"
METAX_GPU_MEMORY = 65536
TOPOLOGY_LOSSES = "metax-tech.com/gpu.topology.losses"
TOPOLOGY_SCORES = "metax-tech.com/gpu.topology.scores"


@dataclass(slots=True, frozen=True)
class MetaxConfig:
    """The ``metax:`` block of HAMi's device config."""

    resource_count_name: str = "metax-tech.com/gpu"
    resource_vcount_name: str = "metax-tech.com/sgpu"
    resource_vcore_name: str = "metax-tech.com/vcore"
    resource_vmemory_name: str = "metax-tech.com/vmemory"
    #: ``topologyAware``: sGPU topology-aware node scoring for exclusive pods without the annotation
    topology_aware: bool = False


def parse_topology_map(raw: str | None) -> dict[str, int] | None:
    """A ``gpu.topology.losses``/``scores`` value as Go's ``json.Unmarshal`` into ``map[int]int``.

    None when the annotation is absent; ``{}`` when it does not decode (HAMi then reads 0). Keys are
    the canonical decimal text of the int (``"+2"`` -> ``"2"``), so the table stays JSON (sessions
    store a device's ``custom_info``).
    """
    if raw is None:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, int] = {}
    for key, value in data.items():
        text = key[1:] if key[:1] in "+-" else key
        if not text.isascii() or not text.isdigit():
            return {}
        number = int(key)
        if value is None:
            value = 0
        if isinstance(value, bool) or not isinstance(value, int):
            return {}
        if not (-(2**63) <= number < 2**63 and -(2**63) <= value < 2**63):
            return {}
        out[str(number)] = value
    return out


#: v2.10's MetaX GPU ``checkUUID`` always passes: no UUID selection for whole GPUs
GPU_RULES = FitRules("", "")


class MetaxGpuVendor(Vendor):
    """Exclusive MetaX GPUs from node capacity, with the topology-loss node score."""

    common_word = METAX_GPU
    allocated_annotation = (
        "hami.io/metax-gpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = MetaxConfig
    resource_fields = ("resource_count_name",)

    def node_reads(self) -> NodeReads:
        """The GPU count in capacity; the topology tables fill the custom info, and the GPUs are
        named after the node."""
        return NodeReads(
            capacity=(self.config.resource_count_name,),
            annotations={TOPOLOGY_LOSSES: "custom_info", TOPOLOGY_SCORES: "custom_info"},
            name="id",
        )

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        devices = capacity_devices(
            node,
            self.config.resource_count_name,
            METAX_GPU,
            id_infix="metax",
            split=1,
            devmem=METAX_GPU_MEMORY,
            devcore=100,
        )
        if not devices:
            return [], {}
        losses = annotations.get(TOPOLOGY_LOSSES)
        scores = annotations.get(TOPOLOGY_SCORES)
        if losses is not None or scores is not None:
            # ScoreNode reads these node annotations; parsed once here, shared read-only
            info = freeze(
                {
                    TOPOLOGY_LOSSES: parse_topology_map(losses if isinstance(losses, str) else None),
                    TOPOLOGY_SCORES: parse_topology_map(scores if isinstance(scores, str) else None),
                }
            )
            devices = [replace(dev, custom_info=info) for dev in devices]
        return devices, {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """``N`` whole GPUs (100 %, 100 cores each)."""
        return count_request(resources, self.config.resource_count_name, METAX_GPU, (0, 100, 100))

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """The common loop with HAMi's "needs all devices on a device" ``customFilterRule``."""
        return common_fit(
            METAX_GPU,
            GPU_RULES,
            devices,
            request,
            pod,
            node,
            policy,
            accept=same_device_rule(allocated),
            release=self.release_rules,
        )

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """``2000 - losses[n]`` (binpack) / ``2000 - scores[n]`` (spread), n = the pod's MetaX GPUs."""
        if policy == "binpack":
            key = TOPOLOGY_LOSSES
        elif policy == "spread":
            key = TOPOLOGY_SCORES
        else:
            return 0.0
        table: dict[str, int] | None = None
        for dev in previous:
            if dev.type == METAX_GPU and isinstance(dev.custom_info, dict):
                table = dev.custom_info.get(key)
                break
        if table is None:
            return 0.0
        wanted = sum(len(container) for container in pod_devices)
        value = table.get(str(wanted), 0) if isinstance(table, dict) else 0
        return f32(2000 - f32(value if isinstance(value, int) else 0))


class MetaxSgpuVendor(Vendor):
    """MetaX sGPU: shared slices with QoS policies."""

    health_always_checked = True  # its Fit skipped unhealthy devices in every release
    common_word = METAX_SGPU
    allocated_annotation = (
        "hami.io/metax-sgpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = MetaxConfig
    resource_fields = ("resource_vcount_name", "resource_vcore_name", "resource_vmemory_name")
    pod_info_annotations = (APP_CLASS,)

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(METAX_SGPU_REGISTER,))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        raw = annotations.get(METAX_SGPU_REGISTER)
        if raw is None:
            return [], {}
        return decode_sdevices(raw), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """HAMi v2.10 ``GenerateResourceRequests`` (limits only). The count must be 1..MaxInt32, and an
        integer ``vcore`` or ``vmemory`` (in MiB) 0..MaxInt32, else the container asks nothing; a value
        that is not an integer is ignored. Before v2.10 (#2388) the values as written, narrowed to
        int32 (``request_range_guards``)."""
        c = self.config
        limits = resources.limits  # MetaX sGPU reads limits only
        if not self.release_rules.request_range_guards:
            return _sgpu_request_as_written(c, limits)
        count = quantity_int(limits.get(c.resource_vcount_name))
        if count is None or not 1 <= count <= MAX_INT32:
            return None
        core_raw = limits.get(c.resource_vcore_name)
        core = _bounded(quantity_int(core_raw) if core_raw is not None else None, 100)
        mem_raw = limits.get(c.resource_vmemory_name)
        mem = _bounded(vmemory_mib(mem_raw) if mem_raw is not None else None, 0)
        if core is None or mem is None:
            return None
        return ContainerDeviceRequest(count, METAX_SGPU, mem, 100 if mem == 0 else 0, core)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """HAMi's sGPU Fit: every card is checked (``card_reason``), every fitting one collected, and
        the candidates prioritised by app class or MetaXLink zone (``choose``)."""
        ask = SgpuAsk.of(request, pod, policy, self.release_rules)
        reject = Rejections()
        candidates: list[tuple[DeviceUsage, int]] = []
        for dev in reversed(devices):
            why, memreq = card_reason(dev, ask)
            if why:
                reject(dev, why)
            else:
                candidates.append((dev, memreq))
        return choose(candidates, ask, reject, len(devices))

    def add_pod_usage(self, dev: DeviceUsage, chosen: ContainerDevice, pod: PodView) -> str | None:
        """HAMi's sGPU ``AddResourceUsage``: the usage, then a non-online pod's QoS tag on the card, so
        its later containers, and later pods of a session, are checked against that policy."""
        self.add_usage(dev, chosen)
        retag_qos(dev, chosen, pod.annotations)
        return None

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """HAMi's "policy neutral" sGPU score: +-10000 x the online or topology-aware score."""
        return neutral_score(pod_devices, previous, policy, pod.annotations, self.config.topology_aware)


def _sgpu_request_as_written(c: MetaxConfig, limits: Mapping[str, object]) -> ContainerDeviceRequest | None:
    """v2.9's sGPU request: an integer count, vcore and vmemory narrowed to int32 as written; "no
    memory" (the whole card) is decided before the narrowing, as HAMi does."""
    count = quantity_int(limits.get(c.resource_vcount_name))
    if count is None:
        return None
    core = quantity_int(limits.get(c.resource_vcore_name))
    mem_raw = limits.get(c.resource_vmemory_name)
    mem = vmemory_mib(mem_raw) if mem_raw is not None else None
    mem = int64(mem) if mem is not None else 0
    cores = int32(core) if core is not None else 100
    return ContainerDeviceRequest(int32(count), METAX_SGPU, int32(mem), 100 if mem == 0 else 0, cores)


def _bounded(value: int | None, default: int) -> int | None:
    """A request value: ``default`` when absent or not an integer, None (no request) outside
    0..MaxInt32."""
    if value is None:
        return default
    return value if 0 <= value <= MAX_INT32 else None


def _gpu_capacity(config: MetaxConfig, devices: Sequence[DeviceInfo]) -> dict[str, str]:
    return {config.resource_count_name: str(len(devices))}


GPU_PROFILE = ProfileFields(
    label="MetaX GPU (capacity)",
    codec="capacity",
    help="status.capacity metax-tech.com/gpu = cards (HAMi: 65536 MiB, exclusive)",
    render=capacity_renderer(_gpu_capacity),
    fixed={"type": METAX_GPU, "count": 1, "devmem": METAX_GPU_MEMORY, "devcore": 100, "numa": 0},
)
DESCRIPTOR = VendorDescriptor(
    block="metax",
    order=60,
    config_class=MetaxConfig,
    backends=(
        Backend(MetaxGpuVendor, lambda word: GPU_PROFILE),
        Backend(MetaxSgpuVendor, lambda word: SGPU_PROFILE),
    ),
)

"""Huawei Ascend NPUs (HAMi ``pkg/device/ascend``): one backend per chip, vNPU memory templates.

Each ``vnpus:`` entry of the device config is its own vendor with ``commonWord`` = e.g.
``Ascend910B3``: JSON registration ``hami.io/node-register-<cw>``, requests ``huawei.com/<cw>``
devices and ``huawei.com/<cw>-memory`` MiB. The memory is rounded **up** to the smallest vNPU
template that holds it; above every template but within ``memoryCapacity`` it becomes the whole
card (``memoryAllocatable``); above that it is 0, which HAMi then treats as 100 % of the card. No
memory resource means 100 % of the card. Cores are never requested by the scheduler (0).

Topology: on Ascend910* nodes whose every device carries ``custominfo.NetworkID``, Fit collects
every fitting device and picks the largest same-network group (910C: whole 2-NPU modules only).

Node score (``ScoreNode``, Ascend910* chips only): for each container, the share of its NPUs in its
largest NetworkID group (1.0 when all share one network), summed over containers and weighted x10
(``Ascend910NetworkWeight``); 0 as soon as a chosen NPU has no ``custominfo`` or no NetworkID.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceUsage, NodeState
from ..policy import f32
from .base import FitOutcome, PriorDevices, ResourceGetter
from .common import ChipVendor, common_fit, int32, requested_count, resource_value, sliced_request

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["VnpuTemplate", "AscendConfig", "AscendVendor", "DEFAULT_ASCEND_CONFIGS", "ascend_vendors"]

ASCEND_910_PREFIX = "Ascend910"
ASCEND_910C = "Ascend910C"
NETWORK_ID = "NetworkID"
NETWORK_WEIGHT = 10  # HAMi Ascend910NetworkWeight


@dataclass(slots=True, frozen=True)
class VnpuTemplate:
    """A vNPU template: name, memory (MiB), AI cores."""

    name: str
    memory: int
    ai_core: int = 0


@dataclass(slots=True, frozen=True)
class AscendConfig:
    """One ``vnpus:`` entry (Helm defaults below)."""

    common_word: str
    chip_name: str
    memory_allocatable: int
    memory_capacity: int
    ai_core: int = 0
    templates: tuple[VnpuTemplate, ...] = ()
    memory_factor: int = 1
    resource_name: str = ""
    resource_memory_name: str = ""
    resource_core_name: str = ""
    sorted_templates: tuple[VnpuTemplate, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cw = self.common_word
        if not self.resource_name:
            object.__setattr__(self, "resource_name", f"huawei.com/{cw}")
        if not self.resource_memory_name:
            object.__setattr__(self, "resource_memory_name", f"huawei.com/{cw}-memory")
        if not self.resource_core_name:
            object.__setattr__(self, "resource_core_name", f"huawei.com/{cw}-core")
        # HAMi sorts the templates by memory at start-up
        object.__setattr__(self, "sorted_templates", tuple(sorted(self.templates, key=lambda t: t.memory)))

    def trim_memory(self, memory: int) -> tuple[int, str]:
        """``trimMemory``: the template (or whole card) a memory request is rounded up to."""
        for template in self.sorted_templates:
            if memory <= template.memory:
                return template.memory, template.name
        if memory <= self.memory_capacity:
            return self.memory_allocatable, ""
        return 0, ""


def _t(*items: tuple[str, int, int]) -> tuple[VnpuTemplate, ...]:
    return tuple(VnpuTemplate(n, m, c) for n, m, c in items)


DEFAULT_ASCEND_CONFIGS: tuple[AscendConfig, ...] = (
    AscendConfig(
        "Ascend910A",
        "910A",
        32768,
        32768,
        30,
        _t(("vir02", 2184, 2), ("vir04", 4369, 4), ("vir08", 8738, 8), ("vir16", 17476, 16)),
    ),
    AscendConfig(
        "Ascend910B2",
        "910B2",
        65536,
        65536,
        24,
        _t(("vir03_1c_8g", 8192, 3), ("vir06_1c_16g", 16384, 6), ("vir12_3c_32g", 32768, 12)),
    ),
    AscendConfig(
        "Ascend910B3", "910B3", 65536, 65536, 20, _t(("vir05_1c_16g", 16384, 5), ("vir10_3c_32g", 32768, 10))
    ),
    AscendConfig(
        "Ascend910B4-1",
        "910B4-1",
        65536,
        65536,
        20,
        _t(("vir05_1c_8g", 8192, 5), ("vir10_3c_16g", 16384, 10)),
    ),
    AscendConfig(
        "Ascend910B4", "910B4", 32768, 32768, 20, _t(("vir05_1c_8g", 8192, 5), ("vir10_3c_16g", 16384, 10))
    ),
    AscendConfig(
        "Ascend910C",
        "Ascend910",
        65536,
        65536,
        20,
        _t(("vir06_1c_16g", 16384, 6), ("vir12_3c_32g", 32768, 12)),
    ),
    AscendConfig(
        "Ascend310P",
        "310P3",
        21527,
        24576,
        8,
        _t(("vir01", 3072, 1), ("vir02", 6144, 2), ("vir04", 12288, 4)),
    ),
)


def _network_id(dev: DeviceUsage) -> float | None:
    info = dev.custom_info
    if not isinstance(info, dict):
        return None
    value = info.get(NETWORK_ID)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


class AscendVendor(ChipVendor[AscendConfig]):
    empty_error = "no device found on node"
    register_format = "hami.io/node-register-{}"
    resource_fields = ("resource_name", "resource_memory_name", "resource_core_name")

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        nums = requested_count(resources, c.resource_name)
        if nums is None:
            return None
        memnum = 0
        mem = resource_value(resources, c.resource_memory_name)
        if mem is not None:
            if c.memory_factor > 1:
                mem *= c.memory_factor
            memnum = int32(c.trim_memory(mem)[0])
        return sliced_request(nums, c.common_word, memnum, 0)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        topology = self.common_word.startswith(ASCEND_910_PREFIX) and all(
            _network_id(dev) is not None for dev in devices
        )
        if not topology:
            return common_fit(self.common_word, self.rules, devices, request, pod, node, policy)
        # topology mode: collect every fitting device (Fit never stops early), then choose
        wide = ContainerDeviceRequest(
            len(devices) + 1, request.type, request.memreq, request.mem_percentage_req, request.coresreq
        )
        outcome = common_fit(self.common_word, self.rules, devices, wide, pod, node, policy)
        collected = outcome.devices
        origin = request.nums
        if not collected:  # the reasons of the wide run are exactly HAMi's (nothing collected)
            return outcome
        by_id = {dev.id: dev for dev in devices}
        if len(collected) < origin:
            return FitOutcome(False, [], self._partial_reason(devices, request, pod, node, policy))
        if len(collected) == origin:
            return FitOutcome(True, collected, "", outcome.device_reasons)
        if origin == 1:
            return FitOutcome(True, collected[:1], "", outcome.device_reasons)
        if self.common_word == ASCEND_910C:
            chosen = self._best_modules(collected, origin)
        else:
            chosen = self._best_network(collected, origin, by_id)
        if len(chosen) < origin:
            counts = {R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST: 1}
            return FitOutcome(False, [], R.gen_reason(counts, len(devices)), outcome.device_reasons)
        return FitOutcome(True, chosen, "", outcome.device_reasons)

    def _partial_reason(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
    ) -> str:
        # the normal run gives the same per-device reasons plus the partial-collection count
        return common_fit(self.common_word, self.rules, devices, request, pod, node, policy).reason

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """HAMi's Ascend ``ScoreNode``: NetworkID cohesion of each container's NPUs, x10 (float32)."""
        if not self.common_word.startswith(ASCEND_910_PREFIX):
            return 0.0
        by_id = {dev.id: dev for dev in previous}
        score = 0.0
        for container in pod_devices:
            if not container:
                continue
            counts: dict[int, int] = {}
            for chosen in container:
                dev = by_id.get(chosen.uuid)
                info = dev.custom_info if dev is not None else None
                if not isinstance(info, dict) or NETWORK_ID not in info:
                    return 0.0
                value = info[NETWORK_ID]
                # Go decodes JSON numbers as float64; any other JSON value is skipped, not counted
                if isinstance(value, int | float) and not isinstance(value, bool):
                    key = int(value)
                    counts[key] = counts.get(key, 0) + 1
            total = sum(counts.values())
            if total == 0:
                continue
            score = f32(score + f32(f32(max(counts.values())) / f32(total)))
        return f32(score * NETWORK_WEIGHT)

    @staticmethod
    def _best_network(
        collected: list[ContainerDevice], origin: int, by_id: dict[str, DeviceUsage]
    ) -> list[ContainerDevice]:
        """``computeBestCombination``: fill from the network groups with most fitting devices."""
        groups: dict[float, list[ContainerDevice]] = {}
        for cd in collected:
            net = _network_id(by_id[cd.uuid])
            if net is not None:
                groups.setdefault(net, []).append(cd)
        result: list[ContainerDevice] = []
        for group in sorted(groups.values(), key=len, reverse=True):
            for cd in group:
                result.append(cd)
                if len(result) == origin:
                    return result
        return result

    @staticmethod
    def _best_modules(collected: list[ContainerDevice], origin: int) -> list[ContainerDevice]:
        """``computeBestCombination910C``: whole modules (NPU pairs idx//2) only, fullest first."""
        modules: dict[int, list[ContainerDevice]] = {}
        for cd in collected:
            modules.setdefault(cd.idx // 2, []).append(cd)
        result: list[ContainerDevice] = []
        remaining = origin
        for module in sorted(modules.values(), key=len):
            if remaining <= 0:
                break
            if len(module) == 2:
                result.extend(module)
                remaining -= 2
        return result[:origin] if len(result) >= origin else result


def ascend_vendors(configs: tuple[AscendConfig, ...] = DEFAULT_ASCEND_CONFIGS) -> list[AscendVendor]:
    return [AscendVendor(c) for c in configs]

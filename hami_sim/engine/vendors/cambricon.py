"""Cambricon MLU (HAMi ``pkg/device/cambricon``): devices synthesised from node capacity.

There is no registration annotation: ``status.capacity[cambricon.com/mlu.smlu.vcore]`` / 100 cards,
each with split count 100, devcore 100 and devmem = capacity(``mlu.smlu.vmemory``) x 256 x 100 / vcore.
Requests: ``cambricon.com/vmlu`` devices, ``mlu.smlu.vmemory`` in 256 MiB units (a value that is
not a plain integer or overflows int32 once scaled gives no request), ``mlu.smlu.vcore`` percent
(default 100, i.e. a whole MLU unless cores are given).

Fit (v2.10): the common loop with health first (``CardNotHealth``) and the shared ``CheckUUID``
(``cambricon.com/use-gpuuuid``); a partial collection counts the MLUs collected; the device cordon
is not read. HAMi's namespace-quota check (``ResourceQuotaNotFit``) is not simulated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .fit_loop import FitRules, common_fit
from .node_codecs import core_split_devices
from .registry import Backend, ProfileFields, VendorDescriptor, capacity_renderer
from .request_rules import count_memory_core_request, plain_memory_request

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["DESCRIPTOR", "CambriconConfig", "CambriconVendor", "MLU"]

MLU = "MLU"
MLU_USE_TYPE = "cambricon.com/use-mlutype"
MLU_NOUSE_TYPE = "cambricon.com/nouse-mlutype"
MLU_USE_UUID = "cambricon.com/use-gpuuuid"
MLU_NOUSE_UUID = "cambricon.com/nouse-gpuuuid"
MEMORY_UNIT = 256  # one vmemory unit is 256 MiB


@dataclass(slots=True, frozen=True)
class CambriconConfig:
    """The ``cambricon:`` block of HAMi's device config (Helm defaults)."""

    resource_count_name: str = "cambricon.com/vmlu"
    resource_memory_name: str = "cambricon.com/mlu.smlu.vmemory"
    resource_core_name: str = "cambricon.com/mlu.smlu.vcore"


#: HAMi declares cambricon.com/use-mlutype but its MLU Fit never checks it (devices are all "MLU");
#: v2.10 (the common loop): unhealthy MLUs are rejected, a partial collection counts the MLUs
#: collected, the device cordon is not read
RULES = FitRules(MLU_USE_UUID, MLU_NOUSE_UUID)


class CambriconVendor(Vendor):
    common_word = MLU
    allocated_annotation = "hami.io/cambricon-mlu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    config_class = CambriconConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")

    def node_reads(self) -> NodeReads:
        """vcore and vmemory capacity; the MLUs are named after the node."""
        return NodeReads(
            capacity=(self.config.resource_core_name, self.config.resource_memory_name), name="id"
        )

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return core_split_devices(
            node, MLU, self.config, per_card=100, memory_unit=MEMORY_UNIT, id_infix="cambricon-mlu"
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """No vcore: a whole MLU's compute. v2.10 refuses a memory that is not an integer within
        int32 once scaled (#2285); before, it was narrowed as written (``request_range_guards``)."""
        guarded = self.release_rules.request_range_guards
        read = plain_memory_request if guarded else count_memory_core_request
        return read(resources, MLU, self.config, memory_scale=MEMORY_UNIT, default_cores=100)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        return common_fit(MLU, RULES, devices, request, pod, node, policy, release=self.release_rules)


def _capacity(config: CambriconConfig, devices: Sequence[DeviceInfo]) -> dict[str, str]:
    """vcore = 100 per card; vmemory in 256 MiB units over all cards."""
    n = len(devices)
    devmem = devices[0].devmem if devices else 0
    return {
        config.resource_core_name: str(100 * n),
        config.resource_memory_name: str(n * devmem // MEMORY_UNIT),
    }


PROFILE = ProfileFields(
    label="Cambricon MLU (capacity)",
    device_noun="MLU",
    codec="capacity",
    help="status.capacity mlu.smlu.vcore = 100 x cards, mlu.smlu.vmemory = cards x devmem / 256",
    render=capacity_renderer(_capacity),
    fixed={"type": "MLU", "count": 100, "devcore": 100, "numa": 0},
    devmem_unit=MEMORY_UNIT,
)

DESCRIPTOR = VendorDescriptor(
    block="cambricon",
    order=20,
    config_class=CambriconConfig,
    backends=(Backend(CambriconVendor, lambda word: PROFILE),),
)

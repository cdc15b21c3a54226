"""Hygon DCU (HAMi ``pkg/device/hygon``): legacy colon-format registration, vDCU memory and cores.

``hami.io/node-dcu-register`` still uses the pre-2.8 7/9-field format at v2.10. A request is
``hygon.com/dcunum`` devices with ``dcumem`` MiB (x ``memoryFactor``; 0 = the whole card: 100 %) and
``dcucores`` percent (default 100: a whole card unless cores are given) each. v2.10's guards drop the
whole request when the count is not in 1..MaxInt32, or an integer memory or core value is negative or
above MaxInt32 (memory also after the factor); a memory or core value that is not an integer is
ignored. Type selection is the shared ``device.CheckType`` on ``hygon.com/use-dcutype`` /
``nouse-dcutype`` (substring of the card model), UUID selection the shared ``device.CheckUUID``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import ContainerDeviceRequest
from .base import ResourceGetter
from .common import MAX_INT32, ConfiguredVendor, FitRules, RegisteredVendor, resource_int, sliced_request
from .registry import Backend, ProfileFields, VendorDescriptor, render_legacy

__all__ = ["DESCRIPTOR", "HygonConfig", "HygonVendor", "DCU", "DCU_REGISTER"]

DCU = "DCU"
DCU_REGISTER = "hami.io/node-dcu-register"
DCU_USE_TYPE = "hygon.com/use-dcutype"
DCU_NOUSE_TYPE = "hygon.com/nouse-dcutype"
DCU_USE_UUID = "hygon.com/use-gpuuuid"
DCU_NOUSE_UUID = "hygon.com/nouse-gpuuuid"


@dataclass(slots=True, frozen=True)
class HygonConfig:
    """The ``hygon:`` block of HAMi's device config."""

    resource_count_name: str = "hygon.com/dcunum"
    resource_memory_name: str = "hygon.com/dcumem"
    resource_core_name: str = "hygon.com/dcucores"
    memory_factor: int = 1


def _in_range(value: int) -> bool:
    return 0 <= value <= MAX_INT32


class HygonVendor(ConfiguredVendor[HygonConfig], RegisteredVendor):
    common_word = DCU
    allocated_annotation = (
        "hami.io/dcu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = HygonConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    register_key = DCU_REGISTER
    legacy = True
    rules = FitRules(DCU_USE_UUID, DCU_NOUSE_UUID, DCU_USE_TYPE, DCU_NOUSE_TYPE)

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """HAMi v2.10 ``GenerateResourceRequests`` with its range guards (None = no request)."""
        c = self.config
        present, nums = resource_int(resources, c.resource_count_name)
        if not present or nums is None or not 1 <= nums <= MAX_INT32:
            return None
        memnum = 0
        present, memory = resource_int(resources, c.resource_memory_name)
        if present and memory is not None:
            if c.memory_factor > 1:
                memory *= c.memory_factor
            if not _in_range(memory):
                return None
            memnum = memory
        corenum = 100  # no dcucores: the whole card's compute (exclusive)
        present, cores = resource_int(resources, c.resource_core_name)
        if present and cores is not None:
            if not _in_range(cores):
                return None
            corenum = cores
        return sliced_request(nums, DCU, memnum, corenum)


PROFILE = ProfileFields(
    label="Hygon DCU",
    codec="legacy",
    help="hami.io/node-dcu-register (legacy colon format); type contains DCU",
    render=render_legacy,
)

DESCRIPTOR = VendorDescriptor(
    block="hygon", order=30, config_class=HygonConfig, backends=(Backend(HygonVendor, lambda word: PROFILE),)
)

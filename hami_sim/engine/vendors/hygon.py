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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .fit_loop import FitRules, common_fit
from .node_codecs import legacy_devices
from .registry import Backend, ProfileFields, VendorDescriptor, render_legacy
from .request_rules import MAX_INT32, count_memory_core_request, resource_int, sliced_request

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

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


RULES = FitRules(DCU_USE_UUID, DCU_NOUSE_UUID, DCU_USE_TYPE, DCU_NOUSE_TYPE, type_use_alone=True)


def _in_range(value: int) -> bool:
    return 0 <= value <= MAX_INT32


def _optional(resources: ResourceGetter, name: str, factor: int = 1) -> tuple[bool, int | None]:
    """(ok, value): an integer memory or core value (x ``factor``) must be in 0..MaxInt32; a value
    that is not an integer is ignored (None)."""
    present, value = resource_int(resources, name)
    if not present or value is None:
        return True, None
    if factor > 1:
        value *= factor
    return _in_range(value), value


class HygonVendor(Vendor):
    common_word = DCU
    allocated_annotation = (
        "hami.io/dcu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = HygonConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    register_key = DCU_REGISTER

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(DCU_REGISTER,))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return legacy_devices(annotations, DCU_REGISTER, DCU), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """HAMi v2.10 ``GenerateResourceRequests`` with its range guards (None = no request); before
        v2.10 (#2388) the values as written, narrowed to int32 (``request_range_guards``)."""
        c = self.config
        if not self.release_rules.request_range_guards:
            scale = c.memory_factor if c.memory_factor > 1 else 1
            return count_memory_core_request(resources, DCU, c, memory_scale=scale, default_cores=100)
        present, nums = resource_int(resources, c.resource_count_name)
        if not present or nums is None or not 1 <= nums <= MAX_INT32:
            return None
        mem_ok, memory = _optional(resources, c.resource_memory_name, c.memory_factor)
        cores_ok, cores = _optional(resources, c.resource_core_name)
        if not (mem_ok and cores_ok):
            return None
        # no dcucores: the whole card's compute (exclusive)
        return sliced_request(nums, DCU, memory or 0, 100 if cores is None else cores)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        return common_fit(DCU, RULES, devices, request, pod, node, policy, release=self.release_rules)


PROFILE = ProfileFields(
    label="Hygon DCU",
    device_noun="DCU",
    codec="legacy",
    help="hami.io/node-dcu-register (legacy colon format); type contains DCU",
    render=render_legacy,
)

DESCRIPTOR = VendorDescriptor(
    block="hygon", order=30, config_class=HygonConfig, backends=(Backend(HygonVendor, lambda word: PROFILE),)
)

"""Cambricon MLU (HAMi ``pkg/device/cambricon``): devices synthesised from node capacity.

There is no registration annotation: ``status.capacity[cambricon.com/mlu.smlu.vcore]`` / 100 cards,
each with split count 100, devcore 100 and devmem = capacity(``mlu.smlu.vmemory``) x 256 x 100 / vcore.
Requests: ``cambricon.com/vmlu`` devices, ``mlu.smlu.vmemory`` in 256 MiB units, ``mlu.smlu.vcore``
percent (default 100, i.e. a whole MLU unless cores are given).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model import ContainerDeviceRequest, DeviceInfo
from .base import ResourceGetter
from .common import CapacityVendor, FitRules, capacity_int, int32, resource_int, synthesise

__all__ = ["CambriconConfig", "CambriconVendor", "MLU"]

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


class CambriconVendor(CapacityVendor):
    common_word = MLU
    # HAMi declares cambricon.com/use-mlutype but its MLU Fit never checks it (devices are all "MLU")
    rules = FitRules(MLU_USE_UUID, MLU_NOUSE_UUID)

    def __init__(self, config: CambriconConfig | None = None) -> None:
        self.config = config or CambriconConfig()
        self.capacity_names = (self.config.resource_core_name, self.config.resource_memory_name)

    def resource_names(self) -> frozenset[str]:
        c = self.config
        return frozenset({c.resource_count_name, c.resource_memory_name, c.resource_core_name})

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        cores = capacity_int(node, self.config.resource_core_name)
        if cores <= 0:
            return [], {}
        memory = capacity_int(node, self.config.resource_memory_name)
        cards = -(-cores // 100)  # HAMi loops while i*100 < cores
        devmem = int32(memory * MEMORY_UNIT * 100 // cores)
        return synthesise(
            node,
            cards,
            vendor=MLU,
            id_infix="cambricon-mlu",
            split=100,
            devmem=devmem,
            devcore=100,
            source=self.config.resource_core_name,
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        present, nums = resource_int(resources, c.resource_count_name)
        if not present or nums is None:
            return None
        _, mem = resource_int(resources, c.resource_memory_name)
        memnum = int32(mem * MEMORY_UNIT) if mem is not None else 0
        corenum = 100
        _, cores = resource_int(resources, c.resource_core_name)
        if cores is not None:
            corenum = int32(cores)
        return ContainerDeviceRequest(int32(nums), MLU, memnum, 100 if memnum == 0 else 0, corenum)

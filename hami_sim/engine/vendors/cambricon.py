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
from .common import CapacityVendor, ConfiguredVendor, FitRules, count_memory_core_request

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


class CambriconVendor(ConfiguredVendor[CambriconConfig], CapacityVendor):
    common_word = MLU
    config_class = CambriconConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    capacity_fields = ("resource_core_name", "resource_memory_name")
    # HAMi declares cambricon.com/use-mlutype but its MLU Fit never checks it (devices are all "MLU")
    rules = FitRules(MLU_USE_UUID, MLU_NOUSE_UUID)

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return self.core_split_devices(
            node, self.config, per_card=100, memory_unit=MEMORY_UNIT, id_infix="cambricon-mlu"
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        # no vcore: a whole MLU's compute
        return count_memory_core_request(
            resources, MLU, self.config, memory_scale=MEMORY_UNIT, default_cores=100
        )

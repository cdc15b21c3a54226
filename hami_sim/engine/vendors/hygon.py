"""Hygon DCU (HAMi ``pkg/device/hygon``): legacy colon-format registration, vDCU memory and cores.

``hami.io/node-dcu-register`` still uses the pre-2.8 7/9-field format at v2.10. A request is
``hygon.com/dcunum`` devices with ``dcumem`` MiB (x ``memoryFactor``; 0 = the whole card: 100 %) and
``dcucores`` percent (default 100: a whole card unless cores are given) each; type selection by
``hygon.com/use-dcutype`` (substring of the card model); the backend's own exact UUID lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model import ContainerDeviceRequest
from .base import ResourceGetter
from .common import FitRules, RegisteredVendor, int32, resource_int

__all__ = ["HygonConfig", "HygonVendor", "DCU", "DCU_REGISTER", "check_dcu_type"]

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


def check_dcu_type(annotations: Mapping[str, str], card_type: str) -> bool:
    """``checkDCUtype``: a present use-list decides alone (nouse is then ignored); entries are not
    trimmed and match as upper-cased substrings of the card type (so an empty entry matches)."""
    upper = card_type.upper()
    if DCU_USE_TYPE in annotations:
        return any(entry.upper() in upper for entry in annotations[DCU_USE_TYPE].split(","))
    if DCU_NOUSE_TYPE in annotations:
        return not any(entry.upper() in upper for entry in annotations[DCU_NOUSE_TYPE].split(","))
    return True


class HygonVendor(RegisteredVendor):
    common_word = DCU
    register_key = DCU_REGISTER
    legacy = True
    rules = FitRules(DCU_USE_UUID, DCU_NOUSE_UUID, exact_uuid=True, type_check=check_dcu_type)

    def __init__(self, config: HygonConfig | None = None) -> None:
        self.config = config or HygonConfig()

    def resource_names(self) -> frozenset[str]:
        c = self.config
        return frozenset({c.resource_count_name, c.resource_memory_name, c.resource_core_name})

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        present, nums = resource_int(resources, c.resource_count_name)
        if not present or nums is None:
            return None
        memnum = 0
        _, mem = resource_int(resources, c.resource_memory_name)
        if mem is not None:
            memnum = int32(mem * c.memory_factor if c.memory_factor > 1 else mem)
        corenum = 100  # no dcucores: the whole card's compute (exclusive)
        _, cores = resource_int(resources, c.resource_core_name)
        if cores is not None:
            corenum = int32(cores)
        return ContainerDeviceRequest(int32(nums), DCU, memnum, 100 if memnum == 0 else 0, corenum)

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
from .common import ConfiguredVendor, FitRules, RegisteredVendor, count_memory_core_request

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
    trimmed and match as upper-cased substrings of the card type (so an empty entry matches).

    Not ``base.check_type``: that is the shared ``device.CheckType`` (trimmed entries, blank lists
    ignored, nouse checked too); Hygon's own function is a different HAMi rule."""
    upper = card_type.upper()
    if DCU_USE_TYPE in annotations:
        return any(entry.upper() in upper for entry in annotations[DCU_USE_TYPE].split(","))
    if DCU_NOUSE_TYPE in annotations:
        return not any(entry.upper() in upper for entry in annotations[DCU_NOUSE_TYPE].split(","))
    return True


class HygonVendor(ConfiguredVendor[HygonConfig], RegisteredVendor):
    common_word = DCU
    config_class = HygonConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    register_key = DCU_REGISTER
    legacy = True
    rules = FitRules(DCU_USE_UUID, DCU_NOUSE_UUID, exact_uuid=True, type_check=check_dcu_type)

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        factor = self.config.memory_factor
        # no dcucores: the whole card's compute (exclusive)
        return count_memory_core_request(
            resources, DCU, self.config, memory_scale=factor if factor > 1 else 1, default_cores=100
        )

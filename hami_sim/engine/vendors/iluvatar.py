"""Iluvatar (HAMi ``pkg/device/iluvatar``): one backend per chip, legacy colon-format registration.

Each configured chip (``iluvatars:`` in the device config; Helm ships MR-V100, MR-V50, BI-V150 and
BI-V100) is its own vendor with ``commonWord`` = chip name: registration
``hami.io/node-<chip>-register`` (7/9-field format), requests ``iluvatar.ai/<chip>-vgpu`` devices with
``<chip>.vMem`` in 256 MiB units (0 = whole card; not a plain integer, or overflowing int32 once
scaled: no request) and ``<chip>.vCore`` percent (default 0); UUID selection by
``hami.io/use-<chip>-uuid`` / ``hami.io/no-use-<chip>-uuid`` (shared ``CheckUUID``).

Fit (v2.10): the common loop with health first (``CardNotHealth``); a partial collection counts the
cards collected; the device cordon is not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest
from .base import ResourceGetter
from .common import ChipVendor, plain_memory_request
from .registry import Backend, ProfileFields, VendorDescriptor, render_legacy

if TYPE_CHECKING:
    pass

__all__ = ["DESCRIPTOR", "IluvatarConfig", "IluvatarVendor", "DEFAULT_ILUVATAR_CHIPS", "iluvatar_vendors"]

MEMORY_UNIT = 256  # one vMem unit is 256 MiB
DEFAULT_ILUVATAR_CHIPS = ("MR-V100", "MR-V50", "BI-V150", "BI-V100")


@dataclass(slots=True, frozen=True)
class IluvatarConfig:
    """One entry of the ``iluvatars:`` list."""

    common_word: str
    resource_count_name: str = ""
    resource_memory_name: str = ""
    resource_core_name: str = ""

    @classmethod
    def for_chip(cls, chip: str) -> IluvatarConfig:
        return cls(chip, f"iluvatar.ai/{chip}-vgpu", f"iluvatar.ai/{chip}.vMem", f"iluvatar.ai/{chip}.vCore")


class IluvatarVendor(ChipVendor[IluvatarConfig]):
    legacy = True
    register_format = "hami.io/node-{}-register"
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    drop_unset_names = True  # a chip entry may leave names unset

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        return plain_memory_request(resources, self.common_word, self.config, memory_scale=MEMORY_UNIT)


def iluvatar_vendors(chips: tuple[str, ...] = DEFAULT_ILUVATAR_CHIPS) -> list[IluvatarVendor]:
    return [IluvatarVendor(IluvatarConfig.for_chip(chip)) for chip in chips]


def _profile(chip: str) -> ProfileFields:
    return ProfileFields(
        label=f"Iluvatar {chip}",
        codec="legacy",
        help=f"hami.io/node-{chip}-register (legacy colon format)",
        render=render_legacy,
    )


DESCRIPTOR = VendorDescriptor(
    block="iluvatar",
    order=130,
    config_class=IluvatarConfig,
    backends=(Backend(IluvatarVendor, _profile),),
    chips=tuple(IluvatarConfig.for_chip(chip) for chip in DEFAULT_ILUVATAR_CHIPS),
)

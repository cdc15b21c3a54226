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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .fit_loop import FitRules, common_fit
from .node_codecs import legacy_devices
from .registry import Backend, ProfileFields, VendorDescriptor, render_legacy
from .request_rules import count_memory_core_request, plain_memory_request

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

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


class IluvatarVendor(Vendor):
    """One chip's backend, named by the chip (``config.common_word``)."""

    config_class = IluvatarConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")
    drop_unset_names = True  # a chip entry may leave names unset

    def __init__(self, config: IluvatarConfig) -> None:  # a chip is always configured
        chip = self.common_word = config.common_word
        self.register_key = f"hami.io/node-{chip}-register"
        self.rules = FitRules(f"hami.io/use-{chip}-uuid", f"hami.io/no-use-{chip}-uuid")
        super().__init__(config)

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(self.register_key,))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return legacy_devices(annotations, self.register_key, self.common_word), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """v2.10 refuses a memory that is not an integer within int32 once scaled (#2285); before,
        it was narrowed as written (``HamiRules.request_range_guards``)."""
        if self.release_rules.request_range_guards:
            return plain_memory_request(resources, self.common_word, self.config, memory_scale=MEMORY_UNIT)
        return count_memory_core_request(resources, self.common_word, self.config, memory_scale=MEMORY_UNIT)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        release = self.release_rules
        # v2.8.3 walked the cards from the first (#1631): the common loop walks from the last
        seen = devices if release.iluvatar_from_last else devices[::-1]
        return common_fit(self.common_word, self.rules, seen, request, pod, node, policy, release=release)


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

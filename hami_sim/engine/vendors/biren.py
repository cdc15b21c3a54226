"""Biren GPUs (HAMi ``pkg/device/biren``): JSON registration, whole-device (count-only) sharing.

``hami.io/node-biren-register`` is a ``[]DeviceInfo``; HAMi forces ``devcore`` to 100 (only for
scoring). ``birentech.com/gpu: N`` asks for N devices; Fit (the common loop, walking the list from the
end) only checks health, UUID selection, the split count (``count``) and mutex, recording 0 MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .fit_loop import FitRules, common_fit
from .node_codecs import whole_devices
from .registry import CUSTOMINFO_HELP, Backend, ProfileFields, VendorDescriptor, render_json
from .request_rules import count_request

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["DESCRIPTOR", "BirenConfig", "BirenVendor", "BIREN", "BIREN_REGISTER"]

BIREN = "Biren"
BIREN_REGISTER = "hami.io/node-biren-register"


@dataclass(slots=True, frozen=True)
class BirenConfig:
    """The ``biren:`` block of HAMi's device config."""

    resource_count_name: str = "birentech.com/gpu"


#: the common loop without memory and cores, recording 0 MiB
RULES = FitRules(
    "birentech.com/use-gpuuuid",
    "birentech.com/nouse-gpuuuid",
    check_memory_and_cores=False,
    record_memory=False,
)


class BirenVendor(Vendor):
    exists_by = "biren_backend"  # a backend only from the release that brought it
    common_word = BIREN
    config_class = BirenConfig
    resource_fields = ("resource_count_name",)
    register_key = BIREN_REGISTER

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(BIREN_REGISTER,))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return whole_devices(annotations, BIREN_REGISTER, BIREN), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        return count_request(resources, self.config.resource_count_name, BIREN)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        return common_fit(BIREN, RULES, devices, request, pod, node, policy, release=self.release_rules)


PROFILE = ProfileFields(
    label="Biren",
    codec="json",
    help="hami.io/node-biren-register JSON; HAMi forces devcore 100",
    render=render_json,
    extras={"custominfo": CUSTOMINFO_HELP},
    fixed={"devcore": 100},
)

DESCRIPTOR = VendorDescriptor(
    block="biren", order=110, config_class=BirenConfig, backends=(Backend(BirenVendor, lambda word: PROFILE),)
)

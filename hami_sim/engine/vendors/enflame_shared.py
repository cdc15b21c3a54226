"""Enflame shared GCUs before v2.10 (HAMi v2.8.3 / v2.9.0 ``pkg/device/enflame/device.go``).

v2.10.0 replaced this backend with DRS slices (``EnflameDrsVendor``, #1872). Before, a node's
``status.capacity["enflame.com/gcu-count"]`` named how many GCUs it has, each synthesised as one
device ``<node>-enflame-<i>`` of type ``Enflame`` with 100 slots, 100 memory units (percent of the
card) and 100 cores. A container's ``enflame.com/vgcu`` (limits, else requests) asks that many GCUs,
each the share ``enflame.com/vgcu-percentage`` names (Go ``Value()``; 100 when absent); Fit is the
common sliced loop with ``enflame.com/use-gpuuuid`` / ``nouse-gpuuuid`` selection.

A simulator whose release has ``HamiRules.enflame_drs`` off gets this backend in place of
``EnflameDrsVendor`` (``EnflameDrsVendor.under``). Its resource names are the v2.9 device config's
defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .enflame_drs import quantity_value
from .fit_loop import FitRules, common_fit
from .node_codecs import capacity_devices
from .request_rules import int32, quantity_int

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["EnflameSharedConfig", "EnflameSharedVendor", "GCU_COUNT"]

ENFLAME = "Enflame"
GCU_COUNT = "enflame.com/gcu-count"  # capacity: the node's GCUs
RULES = FitRules("enflame.com/use-gpuuuid", "enflame.com/nouse-gpuuuid")


@dataclass(slots=True, frozen=True)
class EnflameSharedConfig:
    """The v2.9 ``enflame:`` block's shared-GCU names (``resourceNameVGCU``, ``...Percentage``)."""

    resource_count_name: str = "enflame.com/vgcu"
    resource_percentage_name: str = "enflame.com/vgcu-percentage"


class EnflameSharedVendor(Vendor):
    """Shared Enflame GCUs counted in capacity (v2.8.3, v2.9.0)."""

    common_word = ENFLAME
    allocated_annotation = "hami.io/enflame-vgpu-devices-allocated"
    config_class = EnflameSharedConfig
    resource_fields = ("resource_count_name", "resource_percentage_name")

    def node_reads(self) -> NodeReads:
        return NodeReads(capacity=(GCU_COUNT,), name="id")

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        devices = capacity_devices(
            node, GCU_COUNT, ENFLAME, id_infix="enflame", split=100, devmem=100, devcore=100
        )
        return devices, {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """``N`` GCUs, each the percentage asked (as memory units of a 100-unit card), no cores."""
        c = self.config
        raw = resources.get(c.resource_count_name)
        nums = quantity_int(raw) if raw is not None else None
        if nums is None:
            return None
        share = resources.get(c.resource_percentage_name)
        memnum = quantity_value(share) if share is not None else 100
        return ContainerDeviceRequest(int32(nums), ENFLAME, int32(memnum or 0), 0, 0)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        return common_fit(ENFLAME, RULES, devices, request, pod, node, policy, release=self.release_rules)

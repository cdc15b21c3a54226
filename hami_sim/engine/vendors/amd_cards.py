"""AMD before v2.10 (HAMi v2.8.3 / v2.9.0 ``pkg/device/amd``): whole MI300X cards from capacity.

v2.10.0 replaced this backend with AMD vGPU (``amd.py``, #2290). Before, a node's
``status.capacity["amd.com/gpu"]`` named how many cards it has, each synthesised as one slot of
192000 MiB named ``<node>-AMDGPU-<i>``; a container's ``amd.com/gpu`` (limits, else requests) asks
that many whole cards, and Fit takes the last free ones the pod may use by UUID. Neither the memory
nor the cores a container names are read, and no device's health.

A simulator whose release has ``HamiRules.amd_vgpu`` off gets this backend in place of ``AmdVendor``
(``AmdVendor.under``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, uuid_check
from .fit_loop import Rejections, collected_count
from .node_codecs import capacity_devices
from .request_rules import int32, quantity_int
from .selection import UuidCheck

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["AmdCardsVendor", "AMDGPU", "MI300X_MEMORY"]

AMDGPU = "AMDGPU"
MI300X_MEMORY = 192000
USE_UUID = "amd.com/use-gpu-uuid"
NOUSE_UUID = "amd.com/nouse-gpu-uuid"


class AmdCardsVendor(Vendor):
    """Whole AMD cards counted in capacity (v2.8.3, v2.9.0); configured like ``AmdVendor``."""

    common_word = AMDGPU
    allocated_annotation = "hami.io/amd-devices-allocated"
    resource_fields = ("resource_count_name", "resource_memory_name")
    drop_unset_names = True

    def node_reads(self) -> NodeReads:
        return NodeReads(capacity=(self.config.resource_count_name,), name="id")

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        name = self.config.resource_count_name
        devices = capacity_devices(
            node, name, AMDGPU, id_infix=AMDGPU, split=1, devmem=MI300X_MEMORY, devcore=100
        )
        return devices, {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """The card count (limits, else requests), each card whole: its 192000 MiB, no cores."""
        raw = resources.get(self.config.resource_count_name)
        nums = quantity_int(raw) if raw is not None else None
        if nums is None:
            return None
        return ContainerDeviceRequest(int32(nums), AMDGPU, MI300X_MEMORY, 0, 0)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """From the last device: its type must contain the request's, the request must be AMDGPU,
        the UUID lists must allow it and a slot must be free; the chosen card records 192000 MiB."""
        nums = request.nums
        reject = Rejections()
        collected: list[ContainerDevice] = []
        allows = uuid_check(self.release_rules)
        for dev in reversed(devices):
            why = _reason(dev, request, pod.annotations, allows)
            if why:
                reject(dev, why)
                continue
            if nums > 0:
                nums -= 1
                collected.append(ContainerDevice(dev.index, dev.id, AMDGPU, MI300X_MEMORY, 0))
            if nums == 0:
                return FitOutcome(True, collected, "", reject.device_reasons)
        if collected:
            reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = collected_count(
                self.release_rules, collected
            )
        return FitOutcome(False, collected, R.gen_reason(reject.counts, len(devices)), reject.device_reasons)


def _reason(
    dev: DeviceUsage, request: ContainerDeviceRequest, annotations: Mapping[str, str], allows: UuidCheck
) -> str:
    if request.type not in dev.type or request.type != AMDGPU:
        return R.CARD_TYPE_MISMATCH
    if not allows(annotations, dev.id, USE_UUID, NOUSE_UUID):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    return ""

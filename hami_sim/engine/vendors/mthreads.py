"""Moore Threads (HAMi ``pkg/device/mthreads``): sGPU devices synthesised from node capacity.

``status.capacity[mthreads.com/sgpu-core]`` / 16 GPUs (16 cores each, split count 100) sharing
``mthreads.com/sgpu-memory`` x 512 MiB. A request is ``mthreads.com/vgpu`` GPUs with
``sgpu-memory`` (512 MiB units) and ``sgpu-core`` (of 16) **for the whole container**, divided
evenly between its GPUs; no memory means 100 % of each card. A count outside 1..MaxInt32, or a
memory value that is not an integer or above MaxInt32/512, makes the container ask nothing (v2.10's
guards). UUID selection uses the ``mthreads.ai`` domain.

HAMi's ``customFilterRule`` ("Mthreads needs all devices on a device"): once an earlier container
of the pod (init containers among themselves, app containers among themselves) holds Moore Threads
GPUs, a later container may only use a device that equals *every* one of them, so all containers
share one GPU; any other device fails with ``CardNotFoundCustomFilterRule``. ``ScoreNode`` is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor
from .fit_loop import FitRules, common_fit, same_device_rule
from .node_codecs import core_split_devices
from .registry import (
    MEMORY_PANEL,
    SLOTS_PANEL,
    Backend,
    CapacityPanel,
    ProfileFields,
    VendorDescriptor,
    capacity_renderer,
)
from .request_rules import MAX_INT32, count_memory_core_request, go_div, resource_int, resource_int32

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["DESCRIPTOR", "MthreadsConfig", "MthreadsVendor", "MTHREADS"]

MTHREADS = "Mthreads"
CORES_PER_GPU = 16
MEMORY_UNIT = 512  # one sgpu-memory unit is 512 MiB


@dataclass(slots=True, frozen=True)
class MthreadsConfig:
    """The ``mthreads:`` block of HAMi's device config."""

    resource_count_name: str = "mthreads.com/vgpu"
    resource_memory_name: str = "mthreads.com/sgpu-memory"
    resource_core_name: str = "mthreads.com/sgpu-core"


RULES = FitRules("mthreads.ai/use-gpuuuid", "mthreads.ai/nouse-gpuuuid")


class MthreadsVendor(Vendor):
    common_word = MTHREADS
    allocated_annotation = "hami.io/mthreads-vgpu-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    config_class = MthreadsConfig
    resource_fields = ("resource_count_name", "resource_memory_name", "resource_core_name")

    def node_reads(self) -> NodeReads:
        """sgpu-core and sgpu-memory capacity; the GPUs are named after the node."""
        return NodeReads(
            capacity=(self.config.resource_core_name, self.config.resource_memory_name), name="id"
        )

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return core_split_devices(
            node, MTHREADS, self.config, per_card=CORES_PER_GPU, memory_unit=MEMORY_UNIT, id_infix="mthreads"
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """HAMi v2.10 ``GenerateResourceRequests``: the count must be 1..MaxInt32 and a memory value an
        integer in 0..MaxInt32/512, else the container asks nothing; a core value that is not an
        integer is ignored. Before v2.10 (#2285, #2134) the values as written, narrowed to int32
        (``request_range_guards``)."""
        c = self.config
        if not self.release_rules.request_range_guards:
            return count_memory_core_request(
                resources, MTHREADS, c, memory_scale=MEMORY_UNIT, per_device=True
            )
        present, nums = resource_int(resources, c.resource_count_name)
        if not present or nums is None or not 1 <= nums <= MAX_INT32:
            return None
        memnum = 0
        present, memory = resource_int(resources, c.resource_memory_name)
        if present:
            if memory is None or not 0 <= memory <= MAX_INT32 // MEMORY_UNIT:
                return None
            memnum = memory * MEMORY_UNIT
        corenum = resource_int32(resources, c.resource_core_name)
        # not ``sliced_request``: the whole-card default is decided on the container's total memory,
        # before it is divided between the GPUs
        pct = 100 if memnum == 0 else 0
        return ContainerDeviceRequest(nums, MTHREADS, go_div(memnum, nums), pct, go_div(corenum, nums))

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """The common loop with HAMi's "needs all devices on a device" ``customFilterRule``."""
        return common_fit(
            MTHREADS,
            RULES,
            devices,
            request,
            pod,
            node,
            policy,
            accept=same_device_rule(allocated),
            release=self.release_rules,
        )


def _capacity(config: MthreadsConfig, devices: Sequence[DeviceInfo]) -> dict[str, str]:
    """sgpu-core = 16 per GPU; sgpu-memory in 512 MiB units over all GPUs."""
    n = len(devices)
    devmem = devices[0].devmem if devices else 0
    return {
        config.resource_core_name: str(CORES_PER_GPU * n),
        config.resource_memory_name: str(n * devmem // MEMORY_UNIT),
    }


PROFILE = ProfileFields(
    label="Moore Threads (capacity)",
    panels=(MEMORY_PANEL, CapacityPanel("sGPU cores", "devcore", "usedcores"), SLOTS_PANEL),
    codec="capacity",
    help="status.capacity sgpu-core = 16 x GPUs, sgpu-memory = GPUs x devmem / 512",
    render=capacity_renderer(_capacity),
    fixed={"type": "Mthreads", "count": 100, "devcore": 16, "numa": 0},
    devmem_unit=MEMORY_UNIT,
)

DESCRIPTOR = VendorDescriptor(
    block="mthreads",
    order=50,
    config_class=MthreadsConfig,
    backends=(Backend(MthreadsVendor, lambda word: PROFILE),),
)

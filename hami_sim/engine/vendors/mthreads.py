"""Moore Threads (HAMi ``pkg/device/mthreads``): sGPU devices synthesised from node capacity.

``status.capacity[mthreads.com/sgpu-core]`` / 16 GPUs (16 cores each, split count 100) sharing
``mthreads.com/sgpu-memory`` x 512 MiB. A request is ``mthreads.com/vgpu`` GPUs with
``sgpu-memory`` (512 MiB units) and ``sgpu-core`` (of 16) **for the whole container**, divided
evenly between its GPUs; no memory means 100 % of each card. UUID selection uses the
``mthreads.ai`` domain.

HAMi's ``customFilterRule`` ("Mthreads needs all devices on a device"): once an earlier container
of the pod (init containers among themselves, app containers among themselves) holds Moore Threads
GPUs, a later container may only use a device that equals *every* one of them, so all containers
share one GPU; any other device fails with ``CardNotFoundCustomFilterRule``. ``ScoreNode`` is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .base import FitOutcome, ResourceGetter
from .common import (
    CapacityVendor,
    FitRules,
    capacity_int,
    common_fit,
    go_div,
    int32,
    resource_int,
    same_device_rule,
    synthesise,
)

if TYPE_CHECKING:
    from ..policy import GpuPolicy
    from ..requests import PodView

__all__ = ["MthreadsConfig", "MthreadsVendor", "MTHREADS"]

MTHREADS = "Mthreads"
CORES_PER_GPU = 16
MEMORY_UNIT = 512  # one sgpu-memory unit is 512 MiB


@dataclass(slots=True, frozen=True)
class MthreadsConfig:
    """The ``mthreads:`` block of HAMi's device config."""

    resource_count_name: str = "mthreads.com/vgpu"
    resource_memory_name: str = "mthreads.com/sgpu-memory"
    resource_core_name: str = "mthreads.com/sgpu-core"


class MthreadsVendor(CapacityVendor):
    common_word = MTHREADS
    rules = FitRules("mthreads.ai/use-gpuuuid", "mthreads.ai/nouse-gpuuuid")
    needs_allocated = True

    def __init__(self, config: MthreadsConfig | None = None) -> None:
        self.config = config or MthreadsConfig()
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
        gpus = -(-cores // CORES_PER_GPU)  # HAMi loops while i*16 < cores
        devmem = int32(memory * MEMORY_UNIT * CORES_PER_GPU // cores)
        return synthesise(
            node,
            gpus,
            vendor=MTHREADS,
            id_infix="mthreads",
            split=100,
            devmem=devmem,
            devcore=CORES_PER_GPU,
            source=self.config.resource_core_name,
        ), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        present, nums = resource_int(resources, c.resource_count_name)
        if not present or nums is None:
            return None
        nums = int32(nums)
        if nums == 0:  # HAMi would divide by zero; the container asks for nothing
            return None
        _, mem = resource_int(resources, c.resource_memory_name)
        memnum = int32(mem * MEMORY_UNIT) if mem is not None else 0
        _, cores = resource_int(resources, c.resource_core_name)
        corenum = int32(cores) if cores is not None else 0
        pct = 100 if memnum == 0 else 0
        return ContainerDeviceRequest(nums, MTHREADS, go_div(memnum, nums), pct, go_div(corenum, nums))

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: Sequence[Sequence[ContainerDevice]] = (),
    ) -> FitOutcome:
        return common_fit(
            self.common_word, self.rules, devices, request, pod, node, policy, accept=same_device_rule(allocated)
        )

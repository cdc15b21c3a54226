"""AWS Neuron (HAMi ``pkg/device/awsneuron``): Inferentia/Trainium devices from node capacity.

``status.capacity[aws.amazon.com/neuron]`` devices, each with ``neuroncore / neuron`` cores; a
device's ``devcore`` is the core bitmask (2 cores -> 3), its ``count`` the core count and there is no
memory. ``aws.amazon.com/neuron: N`` asks for N whole devices; without it,
``aws.amazon.com/neuroncore: C`` asks for one device's core (C=1) or C/2 whole devices (C>=2).
Several devices are placed contiguously (Inferentia rings at any start, other instance types in
aligned blocks of 1/4/8/16), read from the ``node.kubernetes.io/instance-type`` label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import (
    ContainerDevice,
    ContainerDeviceRequest,
    DeviceInfo,
    DeviceUsage,
    InventoryError,
    NodeState,
)
from .base import FitOutcome, PriorDevices, ResourceGetter
from .common import (
    CapacityVendor,
    ConfiguredVendor,
    FitRules,
    Rejections,
    capacity_int,
    capacity_raw,
    check_device_limit,
    check_uuid_exact,
    int32,
    node_labels,
    node_name,
    resource_int,
    synthesise,
)

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["AwsNeuronConfig", "AwsNeuronVendor", "AWS_NEURON", "INSTANCE_TYPE_LABEL"]

AWS_NEURON = "AWSNeuron"
AWS_USE_UUID = "aws.amazon.com/use-neuron-uuid"
AWS_NOUSE_UUID = "aws.amazon.com/nouse-neuron-uuid"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
NODE_TYPE_KEY = "AWSNodeType"


@dataclass(slots=True, frozen=True)
class AwsNeuronConfig:
    """The ``awsneuron:`` block of HAMi's device config.

    ``cores_per_device`` is what a whole-device request asks for: HAMi reads it from the last node it
    registered (2 on inf2/trn1/trn2); a stateless simulator needs it up front.
    """

    resource_count_name: str = "aws.amazon.com/neuron"
    resource_core_name: str = "aws.amazon.com/neuroncore"
    cores_per_device: int = 2


def _continuous(devices: list[DeviceUsage], start: int, count: int, cordoned: frozenset[str]) -> list[int]:
    if len(devices) < start + count:
        return []
    out = []
    for i in range(start, start + count):
        if devices[i].used > 0 or devices[i].id in cordoned:
            return []
        out.append(i)
    return out


def graph_select(devices: list[DeviceUsage], count: int, cordoned: frozenset[str] = frozenset()) -> list[int]:
    """``graphSelect``: list positions of ``count`` contiguous idle devices, or [].

    HAMi then takes the devices whose *index* equals those positions (the same on template nodes,
    whose devices stay in index order); cordoned devices count as busy.
    """
    if not devices or not isinstance(devices[0].custom_info, dict):
        return []
    node_type = devices[0].custom_info.get(NODE_TYPE_KEY)
    if not isinstance(node_type, str):
        return []
    step = 1 if ("inf" in node_type or "Inf" in node_type) else count
    if step != 1 and count not in (1, 4, 8, 16):
        return []
    start = 0
    while start < len(devices):
        found = _continuous(devices, start, count, cordoned)
        if found:
            return found
        start += step
    return []


def _core_usage(usage: int, require: int) -> int:
    """``addCoreUsage``: the core-mask bits a request takes on a device already using ``usage``."""
    if usage == 0:
        if require == 2:
            return 3
        if require == 1:
            return 1
    return 3 - usage


class AwsNeuronVendor(ConfiguredVendor[AwsNeuronConfig], CapacityVendor):
    common_word = AWS_NEURON
    config_class = AwsNeuronConfig
    resource_fields = ("resource_count_name", "resource_core_name")
    capacity_fields = ("resource_count_name", "resource_core_name")
    rules = FitRules(AWS_USE_UUID, AWS_NOUSE_UUID)

    def inventory_key(self, annotations: Mapping[str, str], node: Mapping) -> tuple:
        count = capacity_raw(node, self.config.resource_count_name)
        if count is None:
            return (AWS_NEURON,)
        cores = capacity_raw(node, self.config.resource_core_name)
        return (AWS_NEURON, node_name(node), count, cores, node_labels(node).get(INSTANCE_TYPE_LABEL))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        counts = capacity_int(node, self.config.resource_count_name)
        if counts <= 0:
            return [], {}
        check_device_limit(counts, AWS_NEURON, self.config.resource_count_name)
        cores_total = capacity_int(node, self.config.resource_core_name)
        per_device = max(cores_total, 0) // counts
        if per_device > 30:  # the core bitmask is an int32 in HAMi
            raise InventoryError(
                f"status.capacity[{self.config.resource_core_name}]",
                f"{per_device} cores per device do not fit HAMi's int32 core mask",
            )
        mask = (1 << per_device) - 1
        instance_type = node_labels(node).get(INSTANCE_TYPE_LABEL)
        custom = {NODE_TYPE_KEY: instance_type if isinstance(instance_type, str) else ""}
        devices = synthesise(
            node,
            counts,
            vendor=AWS_NEURON,
            id_infix=AWS_NEURON,
            split=per_device,
            devmem=0,
            devcore=int32(mask),
            custom_info=custom,
        )
        return devices, {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        c = self.config
        present, nums = resource_int(resources, c.resource_count_name)
        if present:
            if nums is None:
                return None
            return ContainerDeviceRequest(int32(nums), AWS_NEURON, 0, 0, c.cores_per_device)
        present, cores = resource_int(resources, c.resource_core_name)
        if not present or cores is None:
            return None
        num = cores // 2 if cores >= 2 else 1
        corenum = 2 if cores >= 2 else 1
        return ContainerDeviceRequest(int32(num), AWS_NEURON, 0, 0, corenum)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        if request.nums > 1:
            alloc = graph_select(devices, request.nums, node.cordoned)
            if not alloc:
                return FitOutcome(False, [], R.gen_reason({R.NUMA_NOT_FIT: 1}, 1))
            by_index: dict[int, DeviceUsage] = {}
            for dev in devices:
                by_index.setdefault(dev.index, dev)
            chosen = [
                ContainerDevice(dev.index, dev.id, AWS_NEURON, dev.totalmem, dev.totalcore)
                for dev in (by_index.get(pos) for pos in alloc)
                if dev is not None
            ]
            return FitOutcome(True, chosen, "")
        reject = Rejections()
        counts, device_reasons = reject.counts, reject.device_reasons

        for dev in reversed(devices):
            if dev.id in node.cordoned:
                reject(dev, R.CARD_CORDONED)
                continue
            if request.type not in dev.type or request.type != AWS_NEURON:
                reject(dev, R.CARD_TYPE_MISMATCH)
                continue
            if not check_uuid_exact(pod.annotations, dev.id, AWS_USE_UUID, AWS_NOUSE_UUID):
                reject(dev, R.CARD_UUID_MISMATCH)
                continue
            if dev.count <= dev.used:
                reject(dev, R.CARD_TIME_SLICING_EXHAUSTED)
                continue
            if dev.totalcore.bit_count() - max(dev.usedcores, 0).bit_count() < request.coresreq:
                reject(dev, R.CARD_INSUFFICIENT_CORE)
                continue
            taken = _core_usage(dev.usedcores, request.coresreq)
            return FitOutcome(
                True, [ContainerDevice(dev.index, dev.id, AWS_NEURON, 0, taken)], "", device_reasons
            )
        return FitOutcome(False, [], R.gen_reason(counts, len(devices)), device_reasons)

"""AWS Neuron (HAMi ``pkg/device/awsneuron``): Inferentia/Trainium devices from node capacity.

``status.capacity[aws.amazon.com/neuron]`` devices, each with ``neuroncore / neuron`` cores; a
device's ``devcore`` is the core bitmask (2 cores -> 3), its ``count`` the core count and there is no
memory. ``aws.amazon.com/neuron: N`` (1..MaxInt32) asks for N whole devices; without it,
``aws.amazon.com/neuroncore: C`` asks for C cores of one device (C up to the cores per device, at
most 2) or C/2 whole devices (C a multiple of 2); any other value asks nothing (HAMi v2.10).
Several devices are placed contiguously on idle healthy devices (Inferentia rings at any start,
other instance types in aligned blocks of 1/4/8/16), read from the ``node.kubernetes.io/instance-type``
label; one device is the last healthy one passing type, the shared ``CheckUUID``, split count, mutex
and free cores. The device cordon is not read (v2.10: NVIDIA's only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import reasons as R
from ..model import (
    ContainerDevice,
    ContainerDeviceRequest,
    DeviceInfo,
    DeviceUsage,
    InventoryError,
    NodeState,
)
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, uuid_check
from .fit_loop import Rejections
from .node_codecs import capacity_int, check_device_limit, synthesise
from .reads import node_labels
from .registry import (
    Backend,
    CapacityPanel,
    ProfileFields,
    Registration,
    RenderInput,
    Row,
    VendorDescriptor,
    first_extra,
)
from .request_rules import MAX_INT32, int32, resource_int
from .selection import UuidCheck

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "AwsNeuronConfig",
    "AwsNeuronVendor",
    "AWS_NEURON",
    "INSTANCE_TYPE_LABEL",
    "MAX_CORES_PER_DEVICE",
    "cores_per_device_error",
]

AWS_NEURON = "AWSNeuron"
AWS_USE_UUID = "aws.amazon.com/use-neuron-uuid"
AWS_NOUSE_UUID = "aws.amazon.com/nouse-neuron-uuid"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
NODE_TYPE_KEY = "AWSNodeType"
#: HAMi ``maxCoresPerNeuronDevice``: the core mask has two bits, so a device offers at most 2 cores
MAX_CORES_PER_DEVICE = 2


def cores_per_device_error(count: object) -> str:
    """Why ``count`` cannot be a profile's Neuron cores per device ("" when it can): 1 up to
    ``MAX_CORES_PER_DEVICE``, the cap HAMi v2.10.0's requests apply (``container_request``). A node
    registering more is read as HAMi reads it, but HAMi allocates and annotates only two cores of a
    device, so a profile cannot describe one."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_CORES_PER_DEVICE:
        return (
            f"count (Neuron cores per device) must be between 1 and {MAX_CORES_PER_DEVICE} (HAMi v2.10.0 "
            f"maxCoresPerNeuronDevice: it allocates two cores of a device at most), got {count!r}"
        )
    return ""


@dataclass(slots=True, frozen=True)
class AwsNeuronConfig:
    """The ``awsneuron:`` block of HAMi's device config.

    ``cores_per_device`` is what a whole-device request asks for: HAMi reads it from the last node it
    registered (2 on inf2/trn1/trn2); a stateless simulator needs it up front.
    """

    resource_count_name: str = "aws.amazon.com/neuron"
    resource_core_name: str = "aws.amazon.com/neuroncore"
    cores_per_device: int = 2


def _continuous(devices: list[DeviceUsage], start: int, count: int) -> list[int]:
    if len(devices) < start + count:
        return []
    out = []
    for i in range(start, start + count):
        if devices[i].used > 0 or not devices[i].health:
            return []
        out.append(i)
    return out


def graph_select(devices: list[DeviceUsage], count: int) -> list[int]:
    """``graphSelect``: list positions of ``count`` contiguous idle, healthy devices, or [].

    HAMi then takes the devices whose *index* equals those positions (the same on template nodes,
    whose devices stay in index order).
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
        found = _continuous(devices, start, count)
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


class AwsNeuronVendor(Vendor):
    common_word = AWS_NEURON
    allocated_annotation = (
        "hami.io/aws-neuron-devices-allocated"  # SupportDevices: where PatchAnnotations writes the allocation
    )
    config_class = AwsNeuronConfig
    resource_fields = ("resource_count_name", "resource_core_name")

    def node_reads(self) -> NodeReads:
        """Device and core counts in capacity; the instance type fills the custom info, and the
        devices are named after the node."""
        c = self.config
        return NodeReads(
            capacity=(c.resource_count_name, c.resource_core_name),
            labels={INSTANCE_TYPE_LABEL: "custom_info"},
            name="id",
        )

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
        """v2.10 ``GenerateResourceRequests``: ``neuron`` N (1..MaxInt32) whole devices; else ``neuroncore``
        C (1..MaxInt32 x 2): one device's C cores when C fits a device, else C / cores-per-device
        whole devices (C must divide evenly). Anything else asks nothing."""
        c = self.config
        if not self.release_rules.neuron_core_shapes:
            return _request_before_shapes(
                resources, c.resource_count_name, c.resource_core_name, c.cores_per_device
            )
        present, nums = resource_int(resources, c.resource_count_name)
        if present:
            if nums is None or nums <= 0 or nums > MAX_INT32:
                return None
            return ContainerDeviceRequest(nums, AWS_NEURON, 0, 0, int32(c.cores_per_device))
        present, cores = resource_int(resources, c.resource_core_name)
        if not present or cores is None or cores <= 0 or cores > MAX_INT32 * MAX_CORES_PER_DEVICE:
            return None
        per_device = (
            min(c.cores_per_device, MAX_CORES_PER_DEVICE) if c.cores_per_device > 0 else MAX_CORES_PER_DEVICE
        )
        if cores <= per_device:
            return ContainerDeviceRequest(1, AWS_NEURON, 0, 0, cores)
        if cores % per_device or cores // per_device > MAX_INT32:
            return None
        return ContainerDeviceRequest(cores // per_device, AWS_NEURON, 0, 0, per_device)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """v2.10 AWS Neuron ``Fit``: several devices come from ``graph_select`` alone (else
        ``NumaNotFit`` over the node's devices); one device is the last that passes health, type, the
        shared ``CheckUUID``, split count, mutex and the free core bits. No device cordon (NVIDIA's)."""
        if request.nums > 1:
            alloc = graph_select(devices, request.nums)
            if not alloc:
                # before v2.10 (#2292) HAMi counted over the reasons: 1/1
                over = len(devices) if self.release_rules.graph_reason_over_devices else 1
                return FitOutcome(False, [], R.gen_reason({R.NUMA_NOT_FIT: 1}, over))
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
        allows = uuid_check(self.release_rules)
        for dev in reversed(devices):
            why = _device_reason(dev, request, pod, policy, allows)
            if why:
                reject(dev, why)
                continue
            taken = _core_usage(dev.usedcores, request.coresreq)
            return FitOutcome(
                True, [ContainerDevice(dev.index, dev.id, AWS_NEURON, 0, taken)], "", reject.device_reasons
            )
        return FitOutcome(False, [], R.gen_reason(reject.counts, len(devices)), reject.device_reasons)


def _request_before_shapes(
    resources: ResourceGetter, count_name: str, core_name: str, cores_per_device: int
) -> ContainerDeviceRequest | None:
    """``GenerateResourceRequests`` before v2.10 (``HamiRules.neuron_core_shapes`` off): a count as
    written (narrowed to int32); else C cores ask C/2 devices of 2 cores, C below 2 one device's
    single core. A count or core value that is not an integer asks nothing."""
    present, nums = resource_int(resources, count_name)
    if present:
        wanted = int32(nums) if nums is not None else 0
        return (
            ContainerDeviceRequest(wanted, AWS_NEURON, 0, 0, int32(cores_per_device)) if wanted > 0 else None
        )
    cores = resource_int(resources, core_name)[1]
    if cores is None:
        return None
    wanted = int32(cores // 2) if cores >= 2 else 1
    return ContainerDeviceRequest(wanted, AWS_NEURON, 0, 0, 2 if cores >= 2 else 1) if wanted > 0 else None


def _device_reason(
    dev: DeviceUsage, request: ContainerDeviceRequest, pod: PodView, policy: GpuPolicy, allows: UuidCheck
) -> str:
    """The first single-device check ``dev`` fails, "" when it takes the request."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if request.type not in dev.type or request.type != AWS_NEURON:
        return R.CARD_TYPE_MISMATCH
    if not allows(pod.annotations, dev.id, AWS_USE_UUID, AWS_NOUSE_UUID):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    if policy.mutex and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    if dev.totalcore.bit_count() - max(dev.usedcores, 0).bit_count() < request.coresreq:
        return R.CARD_INSUFFICIENT_CORE
    return ""


def _render(vendor: AwsNeuronVendor, data: RenderInput, count_name: str) -> Registration:
    """Devices and cores in capacity, and the instance-type label the backend reads."""
    c = vendor.config
    n = len(data.devices)
    cores = data.devices[0].count if data.devices else 0
    out = Registration()
    out.capacity.update({c.resource_count_name: str(n), c.resource_core_name: str(n * cores)})
    out.capacity.setdefault(count_name, str(data.slots))
    label = first_extra(data.rows, "instance_type") or data.instance_type
    if label:
        out.labels[INSTANCE_TYPE_LABEL] = str(label)
    return out


def _check_row(row: Row, extra: Mapping[str, Any]) -> dict[str, str]:
    errors: dict[str, str] = {}
    it = extra.get("instance_type")
    if "instance_type" in extra and (not isinstance(it, str) or not it.strip()):
        errors["extra"] = "extra.instance_type must be a non-empty string (node.kubernetes.io/instance-type)"
    count = row.get("count")
    problem = cores_per_device_error(count)
    if problem:
        errors["count"] = problem
    elif isinstance(count, int) and row.get("devcore") != (1 << count) - 1:
        errors["devcore"] = (
            f"devcore must be {(1 << count) - 1} (the core mask of {count} cores) for AWSNeuron, got {row.get('devcore')!r}"
        )
    return errors


def _row_extra(dev: DeviceInfo) -> dict[str, Any]:
    info = dev.custom_info if isinstance(dev.custom_info, dict) else {}
    return {"instance_type": info[NODE_TYPE_KEY]} if info.get(NODE_TYPE_KEY) else {}


PROFILE = ProfileFields(
    label="AWS Neuron (capacity)",
    device_noun="Neuron device",
    # no memory registered and ``devcore`` is a core bit mask; ``count`` is the device's
    # NeuronCores, which is what pods ask for (aws.amazon.com/neuroncore)
    panels=(CapacityPanel("NeuronCores", "count", "used"),),
    codec="capacity",
    help="status.capacity aws.amazon.com/neuron = devices, neuroncore = devices x count (count = cores per device)",
    render=_render,
    extras={"instance_type": "node.kubernetes.io/instance-type (defaults to the group's instance_type)"},
    fixed={"type": AWS_NEURON, "devmem": 0, "numa": 0},
    check_row=_check_row,
    row_extra=_row_extra,
)

DESCRIPTOR = VendorDescriptor(
    block="awsneuron",
    order=80,
    config_class=AwsNeuronConfig,
    backends=(Backend(AwsNeuronVendor, lambda word: PROFILE),),
)

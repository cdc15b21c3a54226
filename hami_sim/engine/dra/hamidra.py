"""HAMi on DRA: the claims HAMi's DRA webhook makes of a pod, and the slices a GPU node publishes.

HAMi-DRA's mutating webhook turns each container that asks for ``nvidia.com/gpu`` into one
ResourceClaim named ``<namespace>-<pod>-<container>``: one ``ExactCount`` request ``gpu`` of that
count on DeviceClass ``hami-core-gpu.project-hami.io``, a selector on the device's ``type``
attribute ``hami-gpu``, capacity requests ``cores`` (the ``nvidia.com/gpucores`` limit as written)
and ``memory`` (the ``nvidia.com/gpumem`` limit in MiB, times 1024 x 1024: bytes), and selectors on
``uuid`` and ``productName`` from the pod's ``nvidia.com/use-gpuuuid`` and ``nvidia.com/use-gputype``
annotations. The GPU limits leave the container; ``gpumem-percentage`` and ``priority`` are dropped.

Two kinds of slices describe a node that does not exist yet (scale from zero):
- ``profile_slice``: what HAMi's DRA driver publishes for a node with the profile's GPUs: a
  ``gpu-N`` device per GPU with ``type``, ``uuid`` and ``productName`` attributes and consumable
  ``memory`` (bytes) and ``cores`` capacity, shared (``allowMultipleAllocations``). This is
  hami-sim's template; the driver's real slices are read from the cluster for live nodes.
- ``clusterapi_slice``: what CA's clusterapi provider builds from a MachineSet's ``dra-driver`` and
  ``gpu-count`` annotations (CA 1.36.1, ``clusterapi_unstructured.go`` ``InstanceResourceSlices``):
  ``gpu-N`` devices with a ``type`` attribute ``gpu`` and no capacity at all, in a pool that
  declares no slice count. CA passes it to the allocator with that count unchanged, and the
  allocator reads one slice against none declared as an incomplete pool, from which it allocates
  nothing: such a group never scales from zero for any claim. A HAMi-DRA claim, which asks for
  capacity and selects ``type == "hami-gpu"``, would not fit those devices either.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hami_sim.engine.dra.objects import Claim, DeviceClass, parse_claim, parse_class
from hami_sim.engine.quantity import QuantityError, parse_quantity

__all__ = [
    "HAMI_DRA_DRIVER",
    "HAMI_DRA_CLASS",
    "GpuSpec",
    "hami_dra_class",
    "claims_of_pod",
    "claim_objects_of_pod",
    "profile_slice",
    "clusterapi_slice",
]

HAMI_DRA_DRIVER = "hami-core-gpu.project-hami.io"
HAMI_DRA_CLASS = HAMI_DRA_DRIVER
HAMI_GPU_TYPE = "hami-gpu"
CLUSTERAPI_GPU_TYPE = "gpu"  # CA's clusterapi GpuDeviceType
COUNT, MEMORY, CORES = "nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores"
USE_UUID, USE_TYPE = "nvidia.com/use-gpuuuid", "nvidia.com/use-gputype"
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU of a node-group profile, as a DRA driver would publish it."""

    type: str
    memory_mib: int
    cores: int = 100
    uuid: str = ""


@functools.cache
def hami_dra_class() -> DeviceClass:
    """The DeviceClass HAMi-DRA's chart installs (frozen: parsed once, shared)."""
    return parse_class(
        {
            "metadata": {"name": HAMI_DRA_CLASS},
            "spec": {
                "selectors": [
                    {
                        "cel": {
                            "expression": f'device.driver == "{HAMI_DRA_DRIVER}" && '
                            f'device.attributes["{HAMI_DRA_DRIVER}"].type == "{HAMI_GPU_TYPE}"'
                        }
                    }
                ]
            },
        }
    )


def _limit(container: Mapping, name: str) -> int | None:
    """A container limit as Go's ``Quantity.Value()`` reads it (rounded up), None when absent."""
    resources = container.get("resources") or {}
    limits = resources.get("limits") if isinstance(resources, Mapping) else None
    if not isinstance(limits, Mapping) or name not in limits:
        return None
    try:
        value = parse_quantity(limits[name])
    except QuantityError:
        return None
    return -(-value.numerator // value.denominator)


def _claim_object(namespace: str, pod: str, container: Mapping, annotations: Mapping) -> dict | None:
    count = _limit(container, COUNT)
    if count is None:
        return None
    selectors = [f'device.attributes["{HAMI_DRA_DRIVER}"].type == "{HAMI_GPU_TYPE}"']
    for annotation, attribute in ((USE_UUID, "uuid"), (USE_TYPE, "productName")):
        if annotation in annotations:
            selectors.append(
                f'device.attributes["{HAMI_DRA_DRIVER}"].{attribute} == "{annotations[annotation]}"'
            )
    capacity: dict[str, str] = {}
    cores, memory = _limit(container, CORES), _limit(container, MEMORY)
    if cores is not None:
        capacity["cores"] = str(cores)
    if memory is not None:
        capacity["memory"] = str(memory * MIB)
    name = f"{namespace}-{pod}-{container.get('name', '')}"
    exactly = {
        "deviceClassName": HAMI_DRA_CLASS,
        "allocationMode": "ExactCount",
        "count": count,
        "selectors": [{"cel": {"expression": s}} for s in selectors],
        "capacity": {"requests": capacity},
    }
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
    }


def claim_objects_of_pod(pod: Mapping) -> list[dict]:
    """The ResourceClaim objects HAMi-DRA's webhook would create for the pod (API JSON)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    annotations = meta.get("annotations") or {}
    namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    claims = []
    for container in spec.get("containers") or []:
        if isinstance(container, Mapping):
            claim = _claim_object(
                namespace, name, container, annotations if isinstance(annotations, Mapping) else {}
            )
            if claim is not None:
                claims.append(claim)
    return claims


def claims_of_pod(pod: Mapping) -> tuple[Claim, ...]:
    return tuple(parse_claim(c) for c in claim_objects_of_pod(pod))


def profile_slice(node: str, gpus: Sequence[GpuSpec], *, pool: str = "") -> dict:
    """The ResourceSlice HAMi's DRA driver would publish for a node with these GPUs."""
    devices = []
    for index, gpu in enumerate(gpus):
        devices.append(
            {
                "name": f"gpu-{index}",
                "attributes": {
                    "type": {"string": HAMI_GPU_TYPE},
                    "uuid": {"string": gpu.uuid or f"{node}-gpu-{index}"},
                    "productName": {"string": gpu.type},
                },
                "capacity": {
                    "memory": {"value": str(gpu.memory_mib * MIB)},
                    "cores": {"value": str(gpu.cores)},
                },
                "allowMultipleAllocations": True,
            }
        )
    return _slice(f"{node}-{HAMI_DRA_DRIVER}", HAMI_DRA_DRIVER, node, pool or node, devices)


def clusterapi_slice(node: str, driver: str, gpu_count: int) -> dict | None:
    """The slice CA's clusterapi provider builds for a template node (None without a GPU count),
    field for field: its pool names no slice count (0), as CA 1.36.1 leaves it all the way to the
    allocator, so ``gather_pools`` finds the pool incomplete as CA's allocator does."""
    if not driver or gpu_count <= 0:
        return None
    devices = [
        {"name": f"gpu-{i}", "attributes": {"type": {"string": CLUSTERAPI_GPU_TYPE}}}
        for i in range(gpu_count)
    ]
    return _slice(f"{node}-{driver}", driver, node, node, devices, slice_count=0)


def _slice(
    name: str, driver: str, node: str, pool: str, devices: list[dict], *, slice_count: int = 1
) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": pool, "generation": 0, "resourceSliceCount": slice_count},
            "devices": devices,
        },
    }

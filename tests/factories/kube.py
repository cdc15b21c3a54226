"""Pod and Node JSON as the Kubernetes API (and CA's templates) would send them: one builder per
object, with keyword defaults, so a folder's own helper (``gpu_node`` of the usage tests, ``pod`` of
the vendor tests) is a call with its defaults rather than a second copy of the object's shape.

Plain functions with no Django, so the engine tests import them alone.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = [
    "ALLOCATABLE",
    "ALLOCATED",
    "CAPACITY",
    "NVIDIA_REGISTER",
    "container",
    "extender_args",
    "gpu",
    "gpu_node",
    "hami_pod",
    "hami_workload",
    "node",
    "pod",
    "register",
]

NVIDIA_REGISTER = "hami.io/node-nvidia-register"
ALLOCATED = "hami.io/vgpu-devices-allocated"
#: a node's status.capacity unless given: 32 CPUs, 128 GiB, 110 pods
CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110"}
#: what the kubelet leaves allocatable of ``CAPACITY`` (a node given neither list gets both)
ALLOCATABLE = {"cpu": "31", "memory": "120Gi", "pods": "110"}


def gpu(
    uuid: str,
    *,
    index: int = 0,
    count: int = 10,
    devmem: int = 23028,
    devcore: int = 100,
    type: str = "NVIDIA A10",
    numa: int = 0,
    mode: str = "hami-core",
    health: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """One card of HAMi's NVIDIA registration: an A10 split 10 ways unless told otherwise."""
    dev = {
        "id": uuid,
        "index": index,
        "count": count,
        "devmem": devmem,
        "devcore": devcore,
        "type": type,
        "numa": numa,
        "mode": mode,
        "health": health,
    }
    dev.update(extra)
    return dev


def register(devices: list[dict[str, Any]]) -> dict[str, str]:
    """The annotation HAMi's NVIDIA device plugin writes for ``devices`` (its JSON form)."""
    return {NVIDIA_REGISTER: orjson.dumps(devices).decode()}


def node(
    name: str,
    devices: list[dict[str, Any]] | None = None,
    *,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    capacity: dict[str, str] | None = None,
    allocatable: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Node registering ``devices`` (HAMi's NVIDIA annotation) next to ``annotations``.

    ``labels`` default to the hostname label. ``allocatable`` defaults to ``capacity`` when only that is
    given (a CA template's status: both the same), to ``ALLOCATABLE`` of ``CAPACITY`` when neither is.
    """
    ann = dict(annotations or {})
    if devices is not None:
        ann.update(register(devices))
    if allocatable is None:
        allocatable = ALLOCATABLE if capacity is None else capacity
    return {
        "metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}, "annotations": ann},
        "spec": {},
        "status": {"capacity": dict(capacity or CAPACITY), "allocatable": dict(allocatable)},
    }


def gpu_node(
    name: str, cards: int, *, capacity: dict[str, str] | None = None, **fields: Any
) -> dict[str, Any]:
    """A node of ``cards`` cards ``GPU-<name>-<i>`` (``gpu``'s fields apply to every card; ``labels``,
    ``annotations`` and ``allocatable`` go to ``node``)."""
    node_fields = {key: fields.pop(key) for key in ("labels", "annotations", "allocatable") if key in fields}
    devices = [gpu(f"GPU-{name}-{i}", index=i, **fields) for i in range(cards)]
    return node(name, devices, capacity=capacity, **node_fields)


def pod(
    name: str = "p",
    *,
    gpu_count: int | str | None = 1,
    gpumem: int | str | None = None,
    gpucores: int | str | None = None,
    mem_pct: int | str | None = None,
    annotations: dict[str, str] | None = None,
    init: list[dict[str, Any]] | None = None,
    containers: list[dict[str, Any]] | None = None,
    uid: str = "",
    namespace: str = "default",
) -> dict[str, Any]:
    """A Pod of one container asking for NVIDIA resources (``gpu_count`` cards unless None), or of
    ``containers`` (and ``init`` containers) as given."""
    if containers is None:
        containers = [container(gpu_count=gpu_count, gpumem=gpumem, gpucores=gpucores, mem_pct=mem_pct)]
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": annotations or {}}
    if uid:
        meta["uid"] = uid
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    return {"metadata": meta, "spec": spec}


def container(
    name: str = "c",
    *,
    gpu_count: int | str | None = 1,
    gpumem: int | str | None = None,
    gpucores: int | str | None = None,
    mem_pct: int | str | None = None,
    where: str = "limits",
    resources: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A container asking for the NVIDIA resources given (in its ``where`` list), or with
    ``resources`` as given (another vendor's block, ``requests`` and ``limits`` both)."""
    if resources is None:
        res: dict[str, str] = {}
        for key, value in (
            ("nvidia.com/gpu", gpu_count),
            ("nvidia.com/gpumem", gpumem),
            ("nvidia.com/gpucores", gpucores),
            ("nvidia.com/gpumem-percentage", mem_pct),
        ):
            if value is not None:
                res[key] = str(value)
        resources = {where: res}
    return {"name": name, "image": "busybox", "resources": resources}


def hami_pod(
    name: str,
    node_name: str | None,
    devices: list[tuple[str, int, int]] | str,
    *,
    namespace: str = "ml",
    phase: str = "Running",
    **annotations: str,
) -> dict[str, Any]:
    """A pod as the API server lists it, HAMi bound to ``node_name`` holding ``[(uuid, usedmem,
    usedcores)]`` in one container (or ``devices``, HAMi's allocation annotation as written)."""
    ann = dict(annotations)
    if node_name is not None:
        ann["hami.io/vgpu-node"] = node_name
    if isinstance(devices, str):
        ann[ALLOCATED] = devices
    elif devices:
        ann[ALLOCATED] = "".join(f"{u},NVIDIA,{m},{c}:" for u, m, c in devices) + ";"
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "annotations": ann,
        },
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "nodeName": node_name},
        "status": {"phase": phase},
    }


def hami_workload(
    kind: str = "Deployment",
    image: str = "docker.io/projecthami/hami:v2.10.0",
    *,
    name: str | None = None,
    namespace: str = "kube-system",
    chart_version: str | None = None,
) -> dict[str, Any]:
    """HAMi's scheduler Deployment or device plugin DaemonSet as its Helm chart labels it: the
    ``component`` label, and HAMi's own container running ``image`` (the scheduler's beside
    kube-scheduler's, as the chart runs them)."""
    component = "hami-scheduler" if kind == "Deployment" else "hami-device-plugin"
    labels = {"app.kubernetes.io/component": component, "app.kubernetes.io/name": "hami"}
    if chart_version is not None:
        labels["app.kubernetes.io/version"] = chart_version
    containers = [
        {"name": "device-plugin" if kind == "DaemonSet" else "vgpu-scheduler-extender", "image": image}
    ]
    if kind == "Deployment":
        containers.insert(0, {"name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.32.2"})
    template = {
        "metadata": {"labels": {"app.kubernetes.io/component": component}},
        "spec": {"containers": containers},
    }
    return {
        "kind": kind,
        "apiVersion": "apps/v1",
        "metadata": {"name": name or component, "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/component": component}},
            "template": template,
        },
    }


def extender_args(pod_obj: dict[str, Any], nodes: list[dict[str, Any]], *, casing: str = "go") -> bytes:
    """The body of an extender filter/prioritize call: Go's field names, or the lower-case ones."""
    if casing == "go":
        body = {"Pod": pod_obj, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}
    else:
        body = {"pod": pod_obj, "nodes": {"metadata": {}, "items": nodes}, "nodenames": None}
    return orjson.dumps(body)

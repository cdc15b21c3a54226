"""Every test's rows and objects come from here.

This module: Pod and Node JSON as the Kubernetes API (and CA's templates) would send them, plain
functions with no Django, so the engine tests import them alone. ``tests.factories.models``: one
factory-boy factory per database model (node groups, device profiles, inventories, pod allocations,
decisions, CA events, sessions, users with roles).
"""

from __future__ import annotations

import orjson

NVIDIA_REGISTER = "hami.io/node-nvidia-register"


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
    **extra,
) -> dict:
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


def node(
    name: str,
    devices: list[dict] | None = None,
    *,
    annotations: dict | None = None,
    labels: dict | None = None,
) -> dict:
    ann = dict(annotations or {})
    if devices is not None:
        ann[NVIDIA_REGISTER] = orjson.dumps(devices).decode()
    return {
        "metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}, "annotations": ann},
        "spec": {},
        "status": {
            "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            "allocatable": {"cpu": "31", "memory": "120Gi", "pods": "110"},
        },
    }


def pod(
    name: str = "p",
    *,
    gpu_count: int | str | None = 1,
    gpumem: int | str | None = None,
    gpucores: int | str | None = None,
    mem_pct: int | str | None = None,
    annotations: dict | None = None,
    init: list[dict] | None = None,
    containers: list[dict] | None = None,
    uid: str = "",
    namespace: str = "default",
) -> dict:
    if containers is None:
        containers = [container(gpu_count=gpu_count, gpumem=gpumem, gpucores=gpucores, mem_pct=mem_pct)]
    meta = {"name": name, "namespace": namespace, "annotations": annotations or {}}
    if uid:
        meta["uid"] = uid
    spec = {"containers": containers}
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
) -> dict:
    res: dict[str, str] = {}
    for key, value in (
        ("nvidia.com/gpu", gpu_count),
        ("nvidia.com/gpumem", gpumem),
        ("nvidia.com/gpucores", gpucores),
        ("nvidia.com/gpumem-percentage", mem_pct),
    ):
        if value is not None:
            res[key] = str(value)
    return {"name": name, "image": "busybox", "resources": {where: res}}


def extender_args(pod_obj: dict, nodes: list[dict], *, casing: str = "go") -> bytes:
    if casing == "go":
        body = {"Pod": pod_obj, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}
    else:
        body = {"pod": pod_obj, "nodes": {"metadata": {}, "items": nodes}, "nodenames": None}
    return orjson.dumps(body)

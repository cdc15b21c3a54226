"""Builders for the blind-spot tests: live H100/A10 nodes with their usage, pending HAMi pods."""

from __future__ import annotations

from hami_sim.engine.blindspot import ViewNode
from hami_sim.engine.scheduler_filters import Resources
from hami_sim.engine.simulate import Simulator
from tests.factories import gpu_node, pod

H100_MEM = 81559
GPU, GPUMEM = "nvidia.com/gpu", "nvidia.com/gpumem"


def h100_node(name: str, cards: int = 8, devmem: int = H100_MEM, taints: list | None = None) -> dict:
    """A p5.48xlarge-like node: ``cards`` cards split 10 (device plugin advertises cards x 10)."""
    status = {"cpu": "192", "memory": "2000Gi", "pods": "110", GPU: str(cards * 10)}
    n = gpu_node(name, cards, capacity=status, devmem=devmem, type="NVIDIA H100 80GB HBM3")
    if taints:
        n["spec"]["taints"] = taints
    return n


def live(
    sim: Simulator, obj: dict, used: list[tuple[int, int]], *, cpu: int = 0, group: str = "gpu-h100", **kw
) -> ViewNode:
    """A live node whose card ``i`` holds ``used[i] = (pods, MiB)``; its pods request one card each
    with that memory (kube-scheduler's sums: the count and the memory once per pod)."""
    name = obj["metadata"]["name"]
    state = sim.inventory(obj).state(name)
    pods = gpumem = 0
    for dev, (n, mem) in zip(state.devices, used, strict=False):
        dev.used, dev.usedmem = n, mem
        pods += n
        gpumem += mem
    requested = Resources(cpu=cpu, pods=pods, scalars={GPU: pods, GPUMEM: gpumem} if pods else None)
    return ViewNode(name, obj, requested, state, group, **kw)


def upcoming(sim: Simulator, obj: dict, group: str = "gpu-h100") -> ViewNode:
    name = obj["metadata"]["name"]
    return ViewNode(name, obj, Resources(), sim.inventory(obj).state(name), group, upcoming=True)


def gpu_pod(
    name: str,
    mem: int,
    *,
    count: int = 1,
    priority: int | None = None,
    cpu: str | None = None,
    tolerate: bool = False,
) -> dict:
    p = pod(name, gpu_count=count, gpumem=mem, uid=f"uid-{name}")
    if priority is not None:
        p["spec"]["priority"] = priority
    if cpu:
        p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": cpu}
    if tolerate:
        p["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return p

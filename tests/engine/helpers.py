"""Builders for engine-level tests: HAMi's test tuples as ``DeviceUsage``, requests and pods.

A device is written as the tuple ``(id, count, used, totalmem, usedmem, totalcore, usedcores)``;
upstream tests use device ``type="NVIDIA"`` so request terms count in device scores.
"""

from __future__ import annotations

from hami_sim.engine.model import ContainerDeviceRequest, DeviceUsage, NodeState, PodRequests
from hami_sim.engine.policy import GpuPolicy, resolve_gpu_policy
from hami_sim.engine.requests import PodView
from hami_sim.engine.vendors.nvidia import NvidiaVendor

__all__ = ["dev", "req", "podview", "policy", "node_state", "NVIDIA", "VENDORS"]

NVIDIA = "NVIDIA"
VENDORS = {NVIDIA: NvidiaVendor()}


def dev(
    id: str,
    count: int = 10,
    used: int = 0,
    totalmem: int = 8000,
    usedmem: int = 0,
    totalcore: int = 100,
    usedcores: int = 0,
    *,
    index: int = 0,
    type: str = NVIDIA,
    numa: int = 0,
    mode: str = "hami-core",
    health: bool = True,
    mig_profiles: tuple = (),
) -> DeviceUsage:
    return DeviceUsage(
        id=id,
        index=index,
        count=count,
        totalmem=totalmem,
        totalcore=totalcore,
        type=type,
        numa=numa,
        mode=mode,
        health=health,
        vendor=NVIDIA,
        mig_profiles=mig_profiles,
        used=used,
        usedmem=usedmem,
        usedcores=usedcores,
    )


def req(
    nums: int = 1, mem: int = 0, pct: int = 101, cores: int = 0, type: str = NVIDIA
) -> ContainerDeviceRequest:
    return ContainerDeviceRequest(nums=nums, type=type, memreq=mem, mem_percentage_req=pct, coresreq=cores)


def podview(
    *containers: dict[str, ContainerDeviceRequest] | ContainerDeviceRequest | None,
    init: tuple = (),
    annotations: dict[str, str] | None = None,
    name: str = "p",
) -> PodView:
    """A pod whose containers (init first) hold the given requests; None means no device request."""

    def as_map(item) -> dict[str, ContainerDeviceRequest]:
        if item is None:
            return {}
        if isinstance(item, ContainerDeviceRequest):
            return {item.type: item}
        return dict(item)

    all_containers = tuple(as_map(c) for c in init) + tuple(as_map(c) for c in containers)
    return PodView(name, "default", "", dict(annotations or {}), PodRequests(all_containers, len(init)))


def policy(raw: str = "", annotations: dict[str, str] | None = None, numa_bind: bool = False) -> GpuPolicy:
    return resolve_gpu_policy(annotations or {}, raw, numa_bind)


def node_state(*devices: DeviceUsage, name: str = "node1", pair_scores=None, cordoned=()) -> NodeState:
    return NodeState(name, list(devices), dict(pair_scores or {}), frozenset(cordoned))

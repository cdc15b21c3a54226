"""Fit a pod onto one node's device usage (HAMi ``pkg/scheduler/score.go``).

- ``fit_in_devices``: one container; device scores, policy sort, per-vendor Fit, usage accounting.
- ``fit_pod``: init containers each on a fresh copy of the node (their peak is kept), app containers
  cumulatively on another copy; the node's usage after the pod is max(app usage, init peak).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import reasons as R
from .model import ContainerDevice, ContainerDeviceRequest, DeviceUsage, NodeState
from .policy import GpuPolicy, Weights, compute_device_scores, node_score, sort_devices
from .requests import PodView
from .vendors.base import Vendor

__all__ = ["PodFit", "fit_in_devices", "fit_pod"]


@dataclass(slots=True)
class PodFit:
    """The outcome of fitting one pod on one node."""

    ok: bool
    reason: str = ""
    # per container (init first): the devices chosen for it, every vendor together
    containers: list[list[ContainerDevice]] = field(default_factory=list)
    score_before: float = 0.0
    # the node's devices after the pod is placed (None when it does not fit)
    usage_after: list[DeviceUsage] | None = None
    # for failures: the container that failed and the first rule that rejected each device
    failed_container: int = -1
    device_reasons: dict[str, str] = field(default_factory=dict)


def fit_in_devices(
    node: NodeState,
    requests: Mapping[str, ContainerDeviceRequest],
    pod: PodView,
    vendors: Mapping[str, Vendor],
    policy: GpuPolicy,
    weights: Weights,
    out: list[ContainerDevice],
    device_reasons: dict[str, str],
) -> str:
    """Fit one container on ``node`` (mutating its usage). Returns "" on success, else the reason."""
    devices = node.devices
    compute_device_scores(devices, requests, weights)
    for vtype, request in requests.items():
        sort_devices(devices, policy)
        vendor = vendors.get(vtype)
        if vendor is None:
            return R.DEVICE_TYPE_NOT_FOUND
        needle = vtype.lower()
        type_devices = [dev for dev in devices if needle in dev.type.lower()]
        if request.nums > len(type_devices) and not vendor.is_mig_request(request, type_devices, pod):
            return R.NODE_INSUFFICIENT_DEVICE
        outcome = vendor.fit(type_devices, request, pod, node, policy)
        if not outcome.ok:
            device_reasons.update(outcome.device_reasons)
            return outcome.reason
        by_id = {dev.id: dev for dev in type_devices}
        for chosen in outcome.devices:
            dev = by_id.get(chosen.uuid)
            if dev is None:
                return f'Device with UUID "{chosen.uuid}" not found on node {node.name} after Fit'
            error = vendor.add_usage(dev, chosen)
            if error:
                return error
        out.extend(outcome.devices)
    return ""


def _peak(devices: list[DeviceUsage], peak: dict[str, list[int]]) -> None:
    for dev in devices:
        p = peak.get(dev.id)
        if p is None:
            peak[dev.id] = [dev.used, dev.usedcores, dev.usedmem]
        else:
            p[0] = max(p[0], dev.used)
            p[1] = max(p[1], dev.usedcores)
            p[2] = max(p[2], dev.usedmem)


def fit_pod(
    node: NodeState,
    pod: PodView,
    vendors: Mapping[str, Vendor],
    policy: GpuPolicy,
    weights: Weights,
) -> PodFit:
    """Fit every container of ``pod`` on ``node`` without mutating ``node``."""
    containers = pod.requests.containers
    init_count = pod.requests.init_count
    result = PodFit(ok=False)
    peak: dict[str, list[int]] = {}
    _peak(node.devices, peak)
    chosen: list[list[ContainerDevice]] = []
    for i in range(init_count):
        requests = containers[i]
        picked: list[ContainerDevice] = []
        if requests:
            copy = node.copy()
            reason = fit_in_devices(copy, requests, pod, vendors, policy, weights, picked, result.device_reasons)
            if reason:
                result.reason, result.failed_container = reason, i
                return result
            _peak(copy.devices, peak)
        chosen.append(picked)
    app = node.copy()
    result.score_before = node_score(app.devices)
    for i in range(init_count, len(containers)):
        requests = containers[i]
        picked = []
        if requests:
            reason = fit_in_devices(app, requests, pod, vendors, policy, weights, picked, result.device_reasons)
            if reason:
                result.reason, result.failed_container = reason, i
                return result
        chosen.append(picked)
    # applyPeakUsage: the node keeps its original device order; usage is max(app, init peak)
    app_by_id = {dev.id: dev for dev in app.devices}
    after: list[DeviceUsage] = []
    for dev in node.devices:
        new = app_by_id[dev.id]  # the app copy is ours: finish it in place, in the node's order
        p = peak[dev.id]
        if p[0] > new.used:
            new.used = p[0]
        if p[1] > new.usedcores:
            new.usedcores = p[1]
        if p[2] > new.usedmem:
            new.usedmem = p[2]
        after.append(new)
    result.ok = True
    result.containers = chosen
    result.usage_after = after
    result.device_reasons = {}
    return result

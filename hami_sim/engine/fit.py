"""Fit a pod onto one node's device usage (HAMi ``pkg/scheduler/score.go``).

- ``fit_in_devices``: one container; device scores, policy sort, per-vendor Fit, usage accounting.
- ``fit_pod``: init containers each on a fresh copy of the node (their peak is kept), app containers
  cumulatively on another copy; the node's usage after the pod is max(app usage, init peak). Older
  releases ignore init containers (v2.8) or fit them before the app containers, adding up (v2.9):
  ``HamiRules.init_containers``.
- ``vendor_node_score``: HAMi's ``OverrideScore``, each vendor's ``ScoreNode`` added to the node score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from . import reasons as R
from .hami_releases import INIT_IGNORED, INIT_SUMMED, HamiRules
from .model import ContainerDevice, ContainerDeviceRequest, DeviceUsage, NodeState, PodView
from .policy import GpuPolicy, Weights, compute_device_scores, f32, node_score, sort_devices
from .vendors.base import Vendor

__all__ = ["PodFit", "fit_in_devices", "fit_pod", "vendor_node_score"]

#: per vendor type, the devices each earlier container got (HAMi ``PodDevices``)
Allocated = dict[str, list[list[ContainerDevice]]]


_NO_REASONS: Mapping[str, str] = MappingProxyType({})
_V2_10 = HamiRules()


@dataclass(slots=True, frozen=True)
class PodFit:
    """The outcome of fitting one pod on one node.

    Frozen, with tuples and a read-only mapping: the simulator hands one memoised fit to every
    request that asks the same question, so no reader may change it.
    """

    ok: bool
    reason: str = ""
    # per container (init first): the devices chosen for it, every vendor together
    containers: tuple[tuple[ContainerDevice, ...], ...] = ()
    # HAMi's node score: ComputeDefaultScore (usage before the pod) + OverrideScore (vendor_score)
    score_before: float = 0.0
    # the vendors' ScoreNode sum (OverrideScore); also added to the score after placement
    vendor_score: float = 0.0
    # the node's devices after the pod is placed (None when it does not fit, and in memoised
    # filter verdicts, which need only the score computed from it)
    usage_after: tuple[DeviceUsage, ...] | None = None
    # for failures: the container that failed and the first rule that rejected each device
    failed_container: int = -1
    device_reasons: Mapping[str, str] = field(default_factory=lambda: _NO_REASONS)


def fit_in_devices(
    node: NodeState,
    requests: Mapping[str, ContainerDeviceRequest],
    pod: PodView,
    vendors: Mapping[str, Vendor],
    policy: GpuPolicy,
    weights: Weights,
    out: list[ContainerDevice],
    device_reasons: dict[str, str],
    allocated: Allocated | None = None,
    rules: HamiRules = _V2_10,
) -> str:
    """Fit one container on ``node`` (mutating its usage). Returns "" on success, else the reason.

    ``allocated`` (optional) holds the earlier containers' devices per vendor type; every vendor's
    Fit gets its own type's list (HAMi's ``allocated``), and this container's devices are appended
    to it on success. ``rules``: the release's (``count_by_type``: what the count is checked against).
    """
    devices = node.devices
    compute_device_scores(devices, requests, weights, policy.typed_scores)
    by_type = rules.count_by_type
    for vtype, request in requests.items():
        if not by_type and request.nums > len(devices):  # before v2.10: every device of the node
            return R.NODE_INSUFFICIENT_DEVICE
        sort_devices(devices, policy)
        vendor = vendors.get(vtype)
        if vendor is None:
            return R.DEVICE_TYPE_NOT_FOUND
        needle = vtype.lower()
        type_devices = [dev for dev in devices if needle in dev.type.lower()]
        if (
            by_type
            and request.nums > len(type_devices)
            and not vendor.is_mig_request(request, type_devices, pod)
        ):
            return R.NODE_INSUFFICIENT_DEVICE
        earlier = allocated.get(vtype, ()) if allocated is not None else ()
        outcome = vendor.fit(vendor.fit_devices(type_devices), request, pod, node, policy, earlier)
        if not outcome.ok:
            device_reasons.update(outcome.device_reasons)
            return outcome.reason
        placed: list[ContainerDevice] = []
        if error := _place(vendor, type_devices, outcome.devices, pod, placed):
            return error
        out.extend(placed)
        if allocated is not None:
            allocated.setdefault(vtype, []).append(placed)
    return ""


def _place(
    vendor: Vendor,
    devices: list[DeviceUsage],
    chosen_devices: Sequence[ContainerDevice],
    pod: PodView,
    placed: list[ContainerDevice],
) -> str:
    """``AddResourceUsage`` for each device the Fit chose (into ``placed``); an error text or ""."""
    by_id = {dev.id: dev for dev in devices}
    for chosen in chosen_devices:
        dev = by_id.get(chosen.uuid)
        if dev is None:  # (no node name: verdicts are cached without it and shared by nodes)
            return f'Device with UUID "{chosen.uuid}" not found on the node after Fit'
        if error := vendor.add_pod_usage(dev, chosen, pod):
            return error
        placed.append(vendor.placed(dev, chosen))
    return ""


def vendor_node_score(
    previous: Sequence[DeviceUsage],
    pod: PodView,
    vendors: Mapping[str, Vendor],
    pod_devices: Mapping[str, list[list[ContainerDevice]]],
    node_policy: str,
) -> float:
    """``NodeScore.OverrideScore``: the float32 sum of ``ScoreNode`` over the pod's device types.

    HAMi walks the keys of the pod's ``PodDevices``: every request type that got devices, plus every
    device ``type`` on the node (the empty-container padding), and asks the backend registered under
    that key. A key that names no backend (NVIDIA's model names) contributes nothing.
    """
    keys = list(pod_devices)
    seen = set(keys)
    for dev in previous:
        if dev.type not in seen:
            seen.add(dev.type)
            keys.append(dev.type)
    total = 0.0
    for key in keys:
        vendor = vendors.get(key)
        if vendor is None or type(vendor).score_node is Vendor.score_node:
            continue
        score = vendor.score_node(pod_devices.get(key, ()), previous, node_policy, pod)
        total = f32(total + f32(score))
    return total


def _peak(devices: Sequence[DeviceUsage], peak: dict[str, list[int]]) -> None:
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
    node_policy: str = "binpack",
    *,
    owned: bool = False,
    rules: HamiRules = _V2_10,
) -> PodFit:
    """Fit every container of ``pod`` on ``node`` without mutating ``node``.

    ``node_policy`` only feeds the vendors' ``ScoreNode`` (MetaX scores differ under spread).
    ``owned=True``: the caller built ``node`` for this one fit (the simulator's fresh zero-usage and
    live states), so the app containers are placed on it directly instead of on a copy, and a fit
    that fails costs no copy at all; ``node`` is then reordered and mutated. A vendor that scores
    nodes reads the devices as they were before the pod, so such a pod still works on a copy.
    ``rules``: the release's (``init_containers``: how it counts init containers).
    """
    containers = pod.requests.containers
    init_count, first_app = _init_split(pod.requests.init_count, rules.init_containers)
    device_reasons: dict[str, str] = {}
    previous = tuple(node.devices)  # the node before the pod, in its own order (SnapshotDevice)
    peak: dict[str, list[int]] = {}
    # init containers a release ignores get no devices
    chosen: list[tuple[ContainerDevice, ...]] = [() for _ in range(first_app - init_count)]
    init_allocs: Allocated = {}
    app_allocs: Allocated = {}
    fit = _Fitting(pod, vendors, policy, weights, device_reasons, chosen, rules)
    if init_count:
        _peak(previous, peak)
        failed = fit.init_containers(node, peak, init_allocs)
        if failed is not None:
            return failed
    default_score = node_score(previous)
    in_place = owned and not _scored_by_vendor(previous, containers, vendors)
    # in place without init containers: the usage before, to keep max(before, after) per device
    before = [(d.used, d.usedcores, d.usedmem) for d in previous] if in_place and not init_count else None
    app = node if in_place else node.copy()
    failed = fit.app_containers(app, app_allocs, first_app)
    if failed is not None:
        return failed
    pod_devices = _merged(init_allocs, app_allocs)
    vendor_score = (
        vendor_node_score(previous, pod, vendors, pod_devices, node_policy) if not in_place else 0.0
    )
    score_before = f32(default_score + vendor_score) if vendor_score else default_score
    if before is not None:
        usage_after = _keep_before(previous, before)
    else:
        usage_after = _apply_peak(previous, app, peak if init_count else _usage_of(previous, peak))
    _list_pod(usage_after, pod, vendors, pod_devices)
    return PodFit(True, "", tuple(chosen), score_before, vendor_score, usage_after)


def _init_split(init_count: int, mode: str) -> tuple[int, int]:
    """(how many init containers are fitted apart, the first container fitted with the app ones)
    under a release's ``HamiRules.init_containers``."""
    if mode == INIT_SUMMED:
        return 0, 0
    if mode == INIT_IGNORED:
        return 0, init_count
    return init_count, init_count


def _merged(init_allocs: Allocated, app_allocs: Allocated) -> Allocated:
    """The pod's devices per type for OverrideScore: init containers' first, then the app
    containers' (HAMi merges them so)."""
    pod_devices: Allocated = {key: list(value) for key, value in init_allocs.items()}
    for key, value in app_allocs.items():
        pod_devices.setdefault(key, []).extend(value)
    return pod_devices


class _Fitting:
    """One pod's containers being fitted: what every container's Fit shares (the pod, vendors,
    policies, the device reasons gathered) and the devices chosen so far, in container order."""

    __slots__ = ("pod", "vendors", "policy", "weights", "device_reasons", "chosen", "rules")

    def __init__(
        self,
        pod: PodView,
        vendors: Mapping[str, Vendor],
        policy: GpuPolicy,
        weights: Weights,
        device_reasons: dict[str, str],
        chosen: list[tuple[ContainerDevice, ...]],
        rules: HamiRules,
    ) -> None:
        self.pod = pod
        self.vendors = vendors
        self.policy = policy
        self.weights = weights
        self.device_reasons = device_reasons
        self.chosen = chosen
        self.rules = rules

    def init_containers(
        self, node: NodeState, peak: dict[str, list[int]], allocs: Allocated
    ) -> PodFit | None:
        """HAMi fits each init container alone on a fresh copy of the node (they run one after
        another), keeping each device's peak usage. The failure, or None."""
        containers = self.pod.requests.containers
        for i in range(self.pod.requests.init_count):
            requests = containers[i]
            picked: list[ContainerDevice] = []
            if requests:
                copy = node.copy()
                reason = self._fit(copy, requests, picked, allocs)
                if reason:
                    return _failed(reason, i, self.device_reasons)
                _peak(copy.devices, peak)
            self.chosen.append(tuple(picked))
        return None

    def app_containers(self, app: NodeState, allocs: Allocated, first: int) -> PodFit | None:
        """The containers from ``first`` on (the app containers, and under v2.9 the init containers
        before them), one after another on ``app`` (they run together). The failure, or None."""
        containers = self.pod.requests.containers
        for i in range(first, len(containers)):
            requests = containers[i]
            picked: list[ContainerDevice] = []
            if requests:
                reason = self._fit(app, requests, picked, allocs)
                if reason:
                    return _failed(reason, i, self.device_reasons)
            self.chosen.append(tuple(picked))
        return None

    def _fit(
        self,
        node: NodeState,
        requests: Mapping[str, ContainerDeviceRequest],
        picked: list[ContainerDevice],
        allocs: Allocated,
    ) -> str:
        return fit_in_devices(
            node,
            requests,
            self.pod,
            self.vendors,
            self.policy,
            self.weights,
            picked,
            self.device_reasons,
            allocs,
            self.rules,
        )


def _scored_by_vendor(
    devices: Sequence[DeviceUsage], containers: Sequence[Mapping[str, object]], vendors: Mapping[str, Vendor]
) -> bool:
    """Whether ``vendor_node_score`` could call a vendor's ``ScoreNode`` for this pod on this node
    (its keys are the pod's request types and the node's device types)."""
    for dev in devices:
        vendor = vendors.get(dev.type)
        if vendor is not None and type(vendor).score_node is not Vendor.score_node:
            return True
    for requests in containers:
        for key in requests:
            vendor = vendors.get(key)
            if vendor is not None and type(vendor).score_node is not Vendor.score_node:
                return True
    return False


def _usage_of(devices: Sequence[DeviceUsage], peak: dict[str, list[int]]) -> dict[str, list[int]]:
    _peak(devices, peak)
    return peak


def _keep_before(
    devices: tuple[DeviceUsage, ...], before: list[tuple[int, int, int]]
) -> tuple[DeviceUsage, ...]:
    """``_apply_peak`` for a node fitted in place without init containers: max(before, after)."""
    for dev, (used, cores, mem) in zip(devices, before, strict=True):
        if used > dev.used:
            dev.used = used
        if cores > dev.usedcores:
            dev.usedcores = cores
        if mem > dev.usedmem:
            dev.usedmem = mem
    return devices


def _list_pod(
    after: tuple[DeviceUsage, ...],
    pod: PodView,
    vendors: Mapping[str, Vendor],
    pod_devices: Mapping[str, list[list[ContainerDevice]]],
) -> None:
    """Once placed, the pod is one of the pods on each device it holds (HAMi lists a bound pod in
    their ``PodInfos``; its own containers never see it). Only devices of a vendor that reads
    something of those pods get the entry, and only when the pod carries it (``pod_infos``)."""
    annotations = pod.annotations
    for vtype, containers in pod_devices.items():
        vendor = vendors.get(vtype)
        keys = vendor.pod_info_annotations if vendor is not None else ()
        info = {key: annotations[key] for key in keys if key in annotations}
        if not info:
            continue
        held = {device.uuid for container in containers for device in container}
        for dev in after:
            if dev.id in held:
                dev.pod_infos = (*dev.pod_infos, info)


def _failed(reason: str, container: int, device_reasons: dict[str, str]) -> PodFit:
    return PodFit(False, reason, failed_container=container, device_reasons=MappingProxyType(device_reasons))


def _apply_peak(
    previous: Sequence[DeviceUsage], app: NodeState, peak: dict[str, list[int]]
) -> tuple[DeviceUsage, ...]:
    """HAMi's applyPeakUsage: the node keeps its device order; usage is max(app, init peak)."""
    app_by_id = {dev.id: dev for dev in app.devices}
    after: list[DeviceUsage] = []
    for dev in previous:
        new = app_by_id[dev.id]  # the app copy is ours: finish it in place, in the node's order
        p = peak[dev.id]
        if p[0] > new.used:
            new.used = p[0]
        if p[1] > new.usedcores:
            new.usedcores = p[1]
        if p[2] > new.usedmem:
            new.usedmem = p[2]
        after.append(new)
    return tuple(after)

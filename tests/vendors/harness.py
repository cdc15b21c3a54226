"""The one adapter between HAMi's Go test tables (``hami_v2_8``, ``hami_v2_9``, ``hami_v2_10``) and
the engine's vendor interface.

Every ported table goes through these functions (never the vendor methods directly), so a change of
the vendor interface (``fit``'s arguments, vendor descriptors) is one edit here. Each function that
runs a rule takes ``rules`` (a release's ``HamiRules``, v2.10.0's by default); ``for_release("2.9")``
answers this module's functions bound to that release, so a table reads ``h.fit(...)`` under v2.9.0.

Conventions, matching what the Go tests compare:

- ``usage(...)`` builds a device with Go ``DeviceUsage`` field names (``totalmem``, ``usedcores``...).
- ``request_of`` answers Go's ``ContainerDeviceRequest`` as a tuple
  ``(nums, type, memreq, mem_percentage_req, coresreq)``; ``EMPTY`` is Go's zero request. The engine
  answers "asks nothing" with None, and drops a request of 0 devices when it parses a pod
  (``requests._container_requests``), so both read as ``EMPTY`` here.
- ``fit`` runs a vendor Fit with the pod annotations, the devices earlier containers already got
  (Go's ``allocated *PodDevices``) and a GPU policy read from the pod like HAMi's
  ``GetGPUSchedulerPolicyByPod`` (no default: the Go tests leave ``device.GPUSchedulerPolicy`` unset).
- ``node_devices`` answers Go's ``GetNodeDevices`` result; a registration the engine refuses
  (``InventoryError``) reads as ``[]``: the Go tests compare the device list, errors are only logged.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from hami_sim.engine.fit import PodFit, fit_pod
from hami_sim.engine.fit import fit_in_devices as engine_fit_in_devices
from hami_sim.engine.hami_releases import HamiRules, rules_for
from hami_sim.engine.model import (
    ContainerDevice,
    ContainerDeviceRequest,
    DeviceInfo,
    DeviceUsage,
    InventoryError,
    NodeState,
    PodRequests,
)
from hami_sim.engine.policy import compute_device_scores, pod_weights, resolve_gpu_policy, sort_devices
from hami_sim.engine.reasons import gen_reason, parse_reason
from hami_sim.engine.requests import PodView
from hami_sim.engine.vendors.base import FitOutcome, ResourceGetter, Vendor

__all__ = [
    "EMPTY",
    "for_release",
    "under_release",
    "usage",
    "cdev",
    "pod_view",
    "request",
    "request_of",
    "fit",
    "fit_ids",
    "node_devices",
    "node",
    "add_usage",
    "placed",
    "mig_rules",
    "score_node",
    "registered",
    "gen_reason",
    "parse_reason",
    "fit_in_devices",
    "calc_score",
    "less",
    "compute_score",
]

#: Go's zero ``ContainerDeviceRequest{}``
EMPTY = (0, "", 0, 0, 0)
V2_10 = HamiRules()


class _Release:
    """This module's functions with ``rules`` bound to one release (``for_release``)."""

    def __init__(self, rules: HamiRules) -> None:
        self.rules = rules

    def __getattr__(self, name: str) -> Any:
        fn: Callable = globals()[name]
        if callable(fn) and "rules" in inspect.signature(fn).parameters:
            return functools.partial(fn, rules=self.rules)
        return fn


#: the release ``under_release`` runs the default-rules calls under (innermost last)
_OVERRIDE: list[HamiRules] = []


@contextlib.contextmanager
def under_release(release: str) -> Iterator[None]:
    """Run a v2.10.0 table's test (which leaves ``rules`` at its default) under another release:
    how ``tests/vendors/unchanged.py`` replays the cases whose Go text an older tag shares."""
    _OVERRIDE.append(rules_for(release))
    try:
        yield
    finally:
        _OVERRIDE.pop()


def _rules(rules: HamiRules) -> HamiRules:
    return _OVERRIDE[-1] if _OVERRIDE and rules is V2_10 else rules


def for_release(release: str) -> Any:
    """The harness under ``release`` (``"2.8"``, ``"2.9"``, ``"2.10"``): ``for_release("2.9").fit``."""
    return _Release(rules_of(release))


def rules_of(release: str) -> HamiRules:
    """The rules a table of ``release`` runs under: that release's, unless ``HAMI_SIM_TEST_RULES``
    names another. ``HAMI_SIM_TEST_RULES=2.10`` runs an older release's cases under v2.10.0's rules to
    show which of them the rule differences decide (docs/device-rules.md gives the counts, and
    ``tests/docs/test_release_counts.py`` holds it to them): a case failing then is expected."""
    return rules_for(os.environ.get("HAMI_SIM_TEST_RULES") or release)


def _under(vendor: Vendor, rules: HamiRules) -> Vendor:
    """``vendor`` as ``rules``' release has it (a table of a backend the release lacks is a bug)."""
    twin = vendor.under(rules)
    assert twin is not None, f"HAMi {rules.release} has no {vendor.common_word} backend"
    return twin


def _weights(annotations: Mapping[str, str], rules: HamiRules):
    return pod_weights(annotations) if rules.scoring_weights else pod_weights({})


def usage(
    id: str,
    *,
    type: str = "",
    index: int = 0,
    count: int = 0,
    totalmem: int = 0,
    totalcore: int = 0,
    used: int = 0,
    usedmem: int = 0,
    usedcores: int = 0,
    numa: int = 0,
    health: bool = True,
    mode: str = "",
    vendor: str = "",
    custom_info: dict | None = None,
    pod_infos: Sequence[Mapping[str, str]] = (),
) -> DeviceUsage:
    """A Go ``DeviceUsage`` literal (unset fields are Go zero values, except ``health``);
    ``pod_infos``: the annotations of each pod in Go's ``PodInfos``."""
    return DeviceUsage(
        id,
        index,
        count,
        totalmem,
        totalcore,
        type,
        numa,
        mode,
        health,
        vendor or type,
        (),
        used,
        usedmem,
        usedcores,
        [],
        0.0,
        custom_info,
        tuple(dict(info) for info in pod_infos),
    )


def cdev(uuid: str, type: str = "", *, idx: int = 0, usedmem: int = 0, usedcores: int = 0) -> ContainerDevice:
    """A Go ``ContainerDevice`` literal."""
    return ContainerDevice(idx, uuid, type, usedmem, usedcores)


def pod_view(annotations: Mapping[str, str] | None = None) -> PodView:
    return PodView("pod", "default", "", dict(annotations or {}), PodRequests((), 0))


def request_of(
    vendor: Vendor,
    limits: Mapping[str, str] | None = None,
    requests: Mapping[str, str] | None = None,
    *,
    rules: HamiRules = V2_10,
) -> tuple:
    """``GenerateResourceRequests`` of one container (quantities as strings), as a tuple."""
    rules = _rules(rules)
    req = _under(vendor, rules).container_request(ResourceGetter(dict(limits or {}), dict(requests or {})))
    if req is None or req.nums <= 0:
        return EMPTY
    return (req.nums, req.type, req.memreq, req.mem_percentage_req, req.coresreq)


def request(type: str, nums: int = 1, memreq: int = 0, pct: int = 0, cores: int = 0) -> tuple:
    """A Go ``ContainerDeviceRequest{Type, Nums, Memreq, MemPercentagereq, Coresreq}`` as the tuple
    ``fit`` takes (argument order: the fields the Go tables set most)."""
    return (nums, type, memreq, pct, cores)


def _request(value: ContainerDeviceRequest | tuple) -> ContainerDeviceRequest:
    return value if isinstance(value, ContainerDeviceRequest) else ContainerDeviceRequest(*value)


def _fit_takes_allocated(vendor: Vendor) -> bool:
    return "allocated" in inspect.signature(vendor.fit).parameters


def fit(
    vendor: Vendor,
    devices: list[DeviceUsage],
    request: ContainerDeviceRequest | tuple,
    annotations: Mapping[str, str] | None = None,
    *,
    allocated: Sequence[Sequence[ContainerDevice]] = (),
    cordoned: Sequence[str] = (),
    default_policy: str = "",
    pair_scores: Mapping[str, Mapping[str, int]] | None = None,
    rules: HamiRules = V2_10,
) -> FitOutcome:
    """``Fit(devices, request, pod, nodeInfo, allocated)``; ``request`` as a tuple or a request.

    ``pair_scores`` is what Go's ``NodeInfo`` carries besides the devices (NVIDIA's topology scores);
    a vendor that reads the node object's annotations gets them through ``registered`` devices.
    """
    rules = _rules(rules)
    vendor = _under(vendor, rules)
    pod = pod_view(annotations)
    scores = {uuid: dict(row) for uuid, row in (pair_scores or {}).items()}
    state = NodeState("node", list(devices), scores, frozenset(cordoned))
    policy = resolve_gpu_policy(pod.annotations, default_policy, False, rules)
    seen = vendor.fit_devices(devices)
    if _fit_takes_allocated(vendor):
        return vendor.fit(seen, _request(request), pod, state, policy, allocated=allocated)
    return vendor.fit(seen, _request(request), pod, state, policy)


def fit_ids(outcome: FitOutcome) -> list[str]:
    return [d.uuid for d in outcome.devices]


def node(
    name: str = "node",
    *,
    annotations: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict:
    """A Kubernetes Node object as the engine reads it."""
    return {
        "metadata": {"name": name, "annotations": dict(annotations or {}), "labels": dict(labels or {})},
        "status": {"capacity": dict(capacity or {}), "allocatable": dict(capacity or {})},
    }


def node_devices(vendor: Vendor, node_obj: Mapping, *, rules: HamiRules = V2_10) -> list[DeviceInfo]:
    """``GetNodeDevices``; an inventory the engine refuses reads as no devices."""
    rules = _rules(rules)
    meta = node_obj.get("metadata") or {}
    try:
        devices, _pairs = _under(vendor, rules).node_devices(meta.get("annotations") or {}, node_obj)
    except InventoryError:
        return []
    return devices


def add_usage(
    vendor: Vendor,
    dev: DeviceUsage,
    chosen: ContainerDevice,
    annotations: Mapping[str, str] | None = None,
    *,
    rules: HamiRules = V2_10,
) -> str | None:
    """``AddResourceUsage(pod, device, containerDevice)``: mutates ``dev``; an error text or None."""
    rules = _rules(rules)
    return _under(vendor, rules).add_pod_usage(dev, chosen, pod_view(annotations))


def placed(
    vendor: Vendor, dev: DeviceUsage, chosen: ContainerDevice, *, rules: HamiRules = V2_10
) -> ContainerDevice:
    """Go's container device after ``AddResourceUsage`` rewrote it (call after ``add_usage``)."""
    return _under(vendor, _rules(rules)).placed(dev, chosen)


def mig_rules(vendor: Vendor, *, rules: HamiRules = V2_10) -> Any:
    """NVIDIA's MIG rules under the release (``NvidiaVendor.mig``): Go's private MIG helpers."""
    return _under(vendor, _rules(rules)).mig


def score_node(
    vendor: Vendor,
    pod_devices: Sequence[Sequence[ContainerDevice]],
    previous: Sequence[DeviceUsage],
    policy: str,
    annotations: Mapping[str, str] | None = None,
    *,
    rules: HamiRules = V2_10,
) -> float:
    """``ScoreNode(node, podDevices, previous, policy)``."""
    rules = _rules(rules)
    return _under(vendor, rules).score_node(pod_devices, previous, policy, pod_view(annotations))


def registered(vendor: Vendor, node_obj: Mapping, *, rules: HamiRules = V2_10) -> list[DeviceUsage]:
    """The node's devices of ``vendor`` as the scheduler's usage view (HAMi ``previous``)."""
    rules = _rules(rules)
    return [DeviceUsage.from_info(info) for info in node_devices(vendor, node_obj, rules=rules)]


def _vendor_map(vendors: Sequence[Vendor], rules: HamiRules) -> dict[str, Vendor]:
    followed = (v.under(rules) for v in vendors)
    return {v.common_word: v for v in followed if v is not None}


def fit_in_devices(
    vendors: Sequence[Vendor],
    devices: list[DeviceUsage],
    requests: Mapping[str, ContainerDeviceRequest | tuple],
    annotations: Mapping[str, str] | None = None,
    *,
    gpu_policy: str = "",
    rules: HamiRules = V2_10,
) -> tuple[str, dict[str, list[list[ContainerDevice]]]]:
    """``fitInDevices(node, requests, pod, nodeInfo, devinput, weights)`` for one container: the
    reason ("" = fits) and the devices per vendor type (Go's ``devinput``). Mutates ``devices``."""
    rules = _rules(rules)
    pod = pod_view(annotations)
    state = NodeState("node-1", devices, {}, frozenset())
    policy = resolve_gpu_policy(pod.annotations, gpu_policy, False, rules)
    reqs = {key: _request(value) for key, value in requests.items()}
    allocated: dict[str, list[list[ContainerDevice]]] = {}
    weights = _weights(pod.annotations, rules)
    vendor_map = _vendor_map(vendors, rules)
    reason = engine_fit_in_devices(state, reqs, pod, vendor_map, policy, weights, [], {}, allocated, rules)
    return reason, allocated


def calc_score(
    vendors: Sequence[Vendor],
    nodes: Mapping[str, tuple[list[DeviceUsage], str]],
    containers: Sequence[Mapping[str, ContainerDeviceRequest | tuple]],
    *,
    init_count: int = 0,
    annotations: Mapping[str, str] | None = None,
    pair_scores: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
    node_policy: str = "binpack",
    rules: HamiRules = V2_10,
) -> dict[str, PodFit]:
    """``calcScore(nodes, requests, pod, failedNodes)``: one ``PodFit`` per node.

    ``nodes`` maps a node name to (devices, the node's GPU policy: Go's ``DeviceUsageList.Policy``);
    ``containers`` holds one ``{type: request}`` per container, init containers first (Go's
    ``PodDeviceRequests``). Raises the engine's ``WeightsError`` for a bad weights annotation.
    """
    rules = _rules(rules)
    annotations = dict(annotations or {})
    weights = _weights(annotations, rules)
    vendor_map = _vendor_map(vendors, rules)
    reqs = tuple({key: _request(value) for key, value in c.items()} for c in containers)
    pod = PodView("pod", "default", "", annotations, PodRequests(reqs, init_count))
    out: dict[str, PodFit] = {}
    for name, (devices, gpu_policy) in nodes.items():
        scores = {uuid: dict(row) for uuid, row in ((pair_scores or {}).get(name) or {}).items()}
        state = NodeState(name, list(devices), scores, frozenset())
        policy = resolve_gpu_policy(annotations, gpu_policy, False, rules)
        out[name] = fit_pod(state, pod, vendor_map, policy, weights, node_policy, rules=rules)
    return out


def less(
    policy: str, first: tuple[int, float], second: tuple[int, float], *, rules: HamiRules = V2_10
) -> bool:
    """``DeviceUsageList{Policy}.Less(0, 1)`` for two devices given as (NUMA node, score): whether
    the first sorts before the second (sorting [second, first] stably puts it first)."""
    rules = _rules(rules)
    a, b = usage("first", numa=first[0]), usage("second", numa=second[0])
    a.score, b.score = first[1], second[1]
    devices = [b, a]
    sort_devices(devices, resolve_gpu_policy({}, policy, False, rules))
    return devices[0] is a


def compute_score(
    device: DeviceUsage,
    requests: Mapping[str, ContainerDeviceRequest | tuple],
    *,
    rules: HamiRules = V2_10,
) -> float:
    """``DeviceListsScore{Device}.ComputeScore(requests)`` with the default weights."""
    rules = _rules(rules)
    reqs = {key: _request(value) for key, value in requests.items()}
    policy = resolve_gpu_policy({}, "", False, rules)
    compute_device_scores([device], reqs, _weights({}, rules), policy.typed_scores)
    return device.score

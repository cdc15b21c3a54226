"""Scheduling policies, device and node scores (HAMi ``pkg/scheduler/policy``, ``pkg/util``).

Scores are float32 in HAMi. We compute each operation in double and round to float32: for +, -,
* and / on float32 inputs that gives exactly the float32 result, so orderings match Go's.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .hami_releases import HamiRules
from .model import ContainerDeviceRequest, DeviceUsage

__all__ = [
    "NODE_POLICY_ANNOTATION",
    "GPU_POLICY_ANNOTATION",
    "WEIGHTS_ANNOTATION",
    "WEIGHT",
    "Weights",
    "WeightsError",
    "f32",
    "go_quote",
    "parse_weights",
    "pod_weights",
    "resolve_node_policy",
    "resolve_gpu_policy",
    "GpuPolicy",
    "device_score",
    "compute_device_scores",
    "untyped_device_score",
    "sort_devices",
    "node_score",
]

NODE_POLICY_ANNOTATION = "hami.io/node-scheduler-policy"
GPU_POLICY_ANNOTATION = "hami.io/gpu-scheduler-policy"
WEIGHTS_ANNOTATION = "hami.io/device-scoring-weights"
WEIGHT = 10
_F32 = struct.Struct("f")


def f32(value: float) -> float:
    """Round a double to the nearest float32 (as Go's ``float32(x)``)."""
    rounded: float = _F32.unpack(_F32.pack(value))[0]
    return rounded


def go_quote(text: str) -> str:
    """Go's ``%q`` for the characters annotation values realistically hold."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


@dataclass(slots=True, frozen=True)
class Weights:
    """``hami.io/device-scoring-weights``: slot, core and memory weights (default 1/1/1)."""

    slot: int = 1
    core: int = 1
    memory: int = 1


DEFAULT_WEIGHTS = Weights()


class WeightsError(ValueError):
    """An invalid scoring-weights annotation; the message is HAMi's."""


def _is_go_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isascii() and body.isdigit()


def parse_weights(raw: str) -> Weights:
    """Parse ``slot=<int>,core=<int>,memory=<int>`` with HAMi's exact validation messages."""
    prefix = f"invalid {WEIGHTS_ANNOTATION} annotation {go_quote(raw)}: "
    parts = raw.split(",")
    if len(parts) != 3:
        raise WeightsError(prefix + "expected slot, core, and memory weights")
    values: dict[str, int] = {}
    for part in parts:
        key, eq, value = part.strip().partition("=")
        if not eq:
            raise WeightsError(prefix + "expected key=value entries")
        key = key.strip()
        if key in values:
            raise WeightsError(prefix + f"duplicate {go_quote(key)} weight")
        value = value.strip()
        if not _is_go_int(value) or not -(2**63) <= int(value) < 2**63:
            raise WeightsError(prefix + f"{go_quote(key)} weight must be an integer")
        number = int(value)
        if number < 0:
            raise WeightsError(prefix + f"{go_quote(key)} weight must not be negative")
        if key not in ("slot", "core", "memory"):
            raise WeightsError(prefix + f"unknown weight {go_quote(key)}")
        values[key] = number
    if not any(values.values()):
        raise WeightsError(prefix + "at least one weight must be positive")
    return Weights(values["slot"], values["core"], values["memory"])


def pod_weights(annotations: Mapping[str, str]) -> Weights:
    raw = annotations.get(WEIGHTS_ANNOTATION)
    return DEFAULT_WEIGHTS if raw is None else parse_weights(raw)


def resolve_node_policy(annotations: Mapping[str, str], default: str) -> str:
    """The pod's ``hami.io/node-scheduler-policy`` exactly as written, else the configured one.

    HAMi v2.10 (``resolveNodeSchedulerPolicy``) takes the annotation verbatim and sorts nodes by
    ``policy == "spread"``, so an unknown or padded value behaves like binpack, not like the default.
    """
    value = annotations.get(NODE_POLICY_ANNOTATION)
    return default if value is None else value


@dataclass(slots=True, frozen=True)
class GpuPolicy:
    """A resolved GPU policy: the raw value, the sort chain, and the Fit flags it implies."""

    raw: str
    chain: tuple[str, ...] | None  # None: single-value ordering; else comma-chain ordering
    topology: bool
    mutex: bool
    numa_bind: bool
    # NUMA node first, then score, whatever the policy (HAMi before v2.10: ``score_first_sort``)
    numa_first: bool = False
    # device scores count the requests of the device's type only (before v2.9: every request)
    typed_scores: bool = True


_RULES = HamiRules()


def resolve_gpu_policy(
    annotations: Mapping[str, str], default: str, numa_bind: bool, rules: HamiRules = _RULES
) -> GpuPolicy:
    """The pod's ``hami.io/gpu-scheduler-policy`` (else ``default``) under a release's rules."""
    raw = annotations.get(GPU_POLICY_ANNOTATION, default)
    if not rules.policy_combinations:  # one value; topology-aware the only Fit flag
        mutex = rules.mutex_policy and raw == "mutex"
        return GpuPolicy(
            raw,
            None,
            raw == "topology-aware",
            mutex,
            numa_bind,
            not rules.score_first_sort,
            rules.typed_device_score,
        )
    tokens = [t.strip() for t in raw.split(",")]
    chain: tuple[str, ...] | None = None
    if "," in raw or raw.strip() == "numa":
        ordered: list[str] = []
        for token in tokens:
            if token in ("binpack", "spread", "numa") and token not in ordered:
                ordered.append(token)
        if not ordered:
            ordered = ["spread"]
        if numa_bind and ordered[0] != "numa":
            if "numa" in ordered:
                ordered.remove("numa")
            ordered.insert(0, "numa")
        chain = tuple(ordered)
    return GpuPolicy(
        raw=raw,
        chain=chain,
        topology="topology-aware" in tokens,
        mutex="mutex" in tokens,
        numa_bind=numa_bind,
    )


def device_score(dev: DeviceUsage, requests: Mapping[str, ContainerDeviceRequest], weights: Weights) -> float:
    """``DeviceListsScore.ComputeScore``; request terms count only when request Type == device type."""
    if dev.count == 0 or dev.totalcore == 0 or dev.totalmem == 0:
        return 0.0
    request = core = mem = 0
    for req in requests.values():
        if req.type != dev.type:
            continue
        request += 1
        core += req.coresreq
        if req.mem_percentage_req not in (0, 101):
            mem += dev.totalmem * req.mem_percentage_req // 100
        else:
            mem += req.memreq
    used = request + dev.used
    cores = core + dev.usedcores
    memory = mem + dev.usedmem
    if not (used or cores or memory):
        return 0.0
    slot_term = f32(f32(weights.slot) * f32(f32(used) / f32(dev.count)))
    core_term = f32(f32(weights.core) * f32(f32(cores) / f32(dev.totalcore)))
    mem_term = f32(f32(weights.memory) * f32(f32(memory) / f32(dev.totalmem)))
    return f32(WEIGHT * f32(f32(slot_term + core_term) + mem_term))


def _go_div32(a: float, b: float) -> float:
    """Go's float32 division, by zero included (+Inf, -Inf or NaN)."""
    if b == 0:
        return math.copysign(math.inf, a) if a else math.nan
    return f32(f32(a) / f32(b))


def untyped_device_score(dev: DeviceUsage, requests: Mapping[str, ContainerDeviceRequest]) -> float:
    """``ComputeScore`` before v2.9 (``HamiRules.typed_device_score`` off): every request counts on
    every device, with its device count as slots and its percentage in whole cards (Go's int32
    ``pct / 100``); no guard against a device without slots, cores or memory."""
    request = core = mem = 0
    for req in requests.values():
        request += req.nums
        core += req.coresreq
        if req.mem_percentage_req not in (0, 101):
            mem += dev.totalmem * (req.mem_percentage_req // 100)
        else:
            mem += req.memreq
    used = _go_div32(request + dev.used, dev.count)
    cores = _go_div32(core + dev.usedcores, dev.totalcore)
    memory = _go_div32(mem + dev.usedmem, dev.totalmem)
    return f32(WEIGHT * f32(f32(used + cores) + memory))


def compute_device_scores(
    devices: list[DeviceUsage],
    requests: Mapping[str, ContainerDeviceRequest],
    weights: Weights,
    typed: bool = True,
) -> None:
    """Every device's ``score`` for this container (``device_score``; ``untyped_device_score`` for
    a release before v2.9)."""
    if not typed:
        for dev in devices:
            dev.score = untyped_device_score(dev, requests)
        return
    # devices in one state score alike (a fresh node's cards, or cards the same pods share): a node's
    # cards are scored once per distinct state, about half of them on a big estimate
    scores: dict[tuple, float] = {}
    for dev in devices:
        key = (dev.type, dev.count, dev.totalcore, dev.totalmem, dev.used, dev.usedcores, dev.usedmem)
        score = scores.get(key)
        if score is None:
            score = scores[key] = device_score(dev, requests, weights)
        dev.score = score


def _chain_key(chain: tuple[str, ...]) -> Callable[[DeviceUsage], tuple[float, ...]]:
    def key(dev: DeviceUsage) -> tuple[float, ...]:
        parts: list[float] = []
        for token in chain:
            if token == "binpack":
                parts.append(dev.score)
            elif token == "spread":
                parts.append(-dev.score)
            else:
                parts.append(dev.numa)
        parts.append(dev.index)
        return tuple(parts)

    return key


def sort_devices(devices: list[DeviceUsage], policy: GpuPolicy) -> None:
    """``DeviceUsageList.Less`` as a stable sort (HAMi is stable only up to 12 devices; we always are)."""
    if policy.chain is not None:
        devices.sort(key=_chain_key(policy.chain))
        return
    raw = policy.raw
    if policy.numa_first and not policy.mutex:
        if raw == "binpack":
            devices.sort(key=lambda d: (-d.numa, d.score))
        else:
            devices.sort(key=lambda d: (d.numa, -d.score))
    elif policy.mutex and raw == "mutex":
        devices.sort(key=lambda d: (-d.used, d.numa))
    elif policy.numa_bind:
        if raw == "binpack":
            devices.sort(key=lambda d: (-d.numa, d.score))
        else:
            devices.sort(key=lambda d: (d.numa, -d.score))
    elif raw == "binpack":
        devices.sort(key=lambda d: (d.score, d.numa))
    else:
        devices.sort(key=lambda d: (-d.score, d.numa))


def node_score(devices: Sequence[DeviceUsage]) -> float:
    """``ComputeDefaultScore``: ``10 x (sum used/sum count + sum cores/sum totalcore + sum mem/sum totalmem)``."""
    used = count = cores = totalcore = mem = totalmem = 0
    for dev in devices:
        used += dev.used
        count += dev.count
        cores += dev.usedcores
        totalcore += dev.totalcore
        mem += dev.usedmem
        totalmem += dev.totalmem
    if count == 0 or totalcore == 0 or totalmem == 0:
        return 0.0
    if not (used or cores or mem):
        return 0.0
    total = f32(f32(f32(used) / f32(count)) + f32(f32(cores) / f32(totalcore)))
    return f32(WEIGHT * f32(total + f32(f32(mem) / f32(totalmem))))

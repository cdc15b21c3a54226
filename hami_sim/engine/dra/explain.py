"""Why a claim does or does not fit a node, device by device.

The scheduler's allocator answers a claim with a device list or a bare "cannot allocate all
claims". Operators need what the device-plugin pod page gives: for every device the node sees, the
first thing that rules it out for the request (the pool's state, the class's or the request's
selector, a capacity the device does not publish or has too little of left, a request policy, or
another claim holding it). ``judge`` runs the allocator and, when it fails, explains.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hami_sim.engine.dra.allocator import InUse, Placement, allocate
from hami_sim.engine.dra.capacity import consumed_by, fits_capacity, missing_capacity
from hami_sim.engine.dra.objects import ALL, Claim, Device, DeviceClass, DeviceRequest, DraError
from hami_sim.engine.dra.pools import Pool, gather_pools
from hami_sim.engine.dra.selectors import device_activation, selector_matches

__all__ = [
    "DeviceReason",
    "DraVerdict",
    "explain",
    "judge",
    "quantity_text",
    "placement_text",
    "request_text",
]

_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class DeviceReason:
    claim: str
    request: str
    device: str  # driver/pool/device
    reason: str  # "" when the device alone would serve the request


@dataclass(frozen=True, slots=True)
class DraVerdict:
    """One node's answer for a pod's claims: the devices given, or why not (``error`` for a claim
    the scheduler rejects outright, ``reasons`` per device otherwise)."""

    fits: bool
    placements: tuple[tuple[Placement, ...], ...] = ()
    reasons: tuple[DeviceReason, ...] = ()
    error: str = ""


def quantity_text(value: Fraction) -> str:
    """A quantity as Kubernetes writes it: whole MiB as ``Mi`` (memory in bytes reads badly)."""
    if value.denominator != 1:
        return f"{float(value):g}"
    if value and value.numerator % _MIB == 0:
        return f"{value.numerator // _MIB}Mi"
    return str(value.numerator)


def request_text(request: DeviceRequest) -> str:
    """``gpu: 4 device(s) of class hami-core-gpu.project-hami.io, memory 10000Mi``."""
    what = "all devices" if request.mode == ALL else f"{request.count} device(s)"
    asks = "".join(
        f", {name} {quantity_text(v)}"
        for name, v in sorted((request.capacity or {}).items(), key=_memory_first)
    )
    return f"{request.name}: {what} of class {request.class_name}{asks}"


def placement_text(placement: Placement) -> str:
    """``gpu-0`` for a whole device, ``gpu-0 (memory 8000Mi, cores 30)`` for a share of one."""
    if not placement.consumed:
        return placement.device
    shares = ", ".join(
        f"{name} {quantity_text(v)}" for name, v in sorted(placement.consumed.items(), key=_memory_first)
    )
    return f"{placement.device} ({shares})"


def _memory_first(item: tuple[str, Fraction]) -> tuple[bool, str]:
    return (item[0] != "memory", item[0])


def _capacity_reason(request: DeviceRequest, device: Device, held: tuple) -> str:
    missing = missing_capacity(request.capacity, device)
    if missing:
        return f"publishes no capacity {missing!r}"
    if fits_capacity(request.capacity, device, *held):
        return ""
    wanted = consumed_by(request.capacity, device)
    for name, capacity in device.capacity.items():
        used = sum((h.get(name, Fraction(0)) for h in held), Fraction(0))
        if wanted[name] + used > capacity.value:
            return f"{name}: asks {quantity_text(wanted[name])}, {quantity_text(capacity.value - used)} of {quantity_text(capacity.value)} free"
    return "the request is not a value the device's request policy admits"


def _selector_reason(expressions: Sequence[str], activation: Any, owner: str) -> str:
    for expression in expressions:
        try:
            if not selector_matches(expression, activation):
                return f"{owner} selector is false: {expression}"
        except DraError as error:
            return f"{owner} selector fails: {error}"
    return ""


def _pool_state(pool: Pool) -> str:
    if pool.incomplete:
        # not "fewer": CA's clusterapi template publishes one slice in a pool that declares none
        return "its pool is incomplete (the slices published are not the number the pool declares): nothing in it is allocatable"
    if pool.invalid:
        return f"its pool is invalid: {pool.invalid}"
    return ""


def _device_reason(
    request: DeviceRequest, device_class: DeviceClass | None, pool: Pool, device: Device, in_use: InUse
) -> str:
    """Every reason the device cannot serve the request alone, most basic first ('' = it can)."""
    key = (pool.driver, pool.name, device.name)
    if device_class is None:
        return f"device class {request.class_name!r} does not exist"
    activation = device_activation(device, pool.driver)
    reasons = [
        _pool_state(pool),
        _selector_reason(device_class.selectors, activation, f"class {device_class.name}"),
        _selector_reason(request.selectors, activation, "request"),
    ]
    if key in in_use.dedicated:
        reasons.append("allocated to another claim")
    held = in_use.shares.get(key, ())
    if held and not device.allow_multiple:
        reasons.append("shared by other claims, and no longer allows multiple allocations")
    reasons.append(_capacity_reason(request, device, held))
    return "; ".join(r for r in reasons if r)


def explain(
    node: Mapping,
    claims: Sequence[Claim],
    classes: Mapping[str, DeviceClass],
    slices: Sequence[Any],
    in_use: InUse,
) -> tuple[DeviceReason, ...]:
    """Per claim request and device the node sees, the first reason it cannot serve the request alone."""
    pools = gather_pools(slices, node)
    reasons = []
    for claim in claims:
        for request in claim.requests:
            for pool in pools:
                devices: list[Device | None] = [device for _, device in pool.devices()]
                for device in devices or [None]:
                    name = f"{pool.driver}/{pool.name}/{device.name if device else '-'}"
                    reason = (
                        _device_reason(request, classes.get(request.class_name), pool, device, in_use)
                        if device is not None
                        else "the pool has no devices"
                    )
                    reasons.append(DeviceReason(claim.name, request.name, name, reason))
    return tuple(reasons)


def _holding(in_use: InUse, placements: Sequence[Sequence[Placement]]) -> InUse:
    """``in_use`` plus the devices earlier claims of the same pod were given."""
    dedicated = set(in_use.dedicated)
    shares = {k: list(v) for k, v in in_use.shares.items()}
    for claim in placements:
        for p in claim:
            key = (p.driver, p.pool, p.device)
            if p.consumed is None:
                dedicated.add(key)
            else:
                shares.setdefault(key, []).append(p.consumed)
    return InUse(frozenset(dedicated), {k: tuple(v) for k, v in shares.items()})


def _first_failing(
    node: Mapping,
    claims: Sequence[Claim],
    classes: Mapping[str, DeviceClass],
    slices: Sequence[Any],
    in_use: InUse,
) -> tuple[int, InUse]:
    """The first claim that cannot join the ones before it, and what those before it hold."""
    held = in_use
    for index in range(1, len(claims) + 1):
        placements = allocate(node, claims[:index], classes, slices, in_use)
        if placements is None:
            return index - 1, held
        held = _holding(in_use, placements)
    return len(claims) - 1, held


def judge(
    node: Mapping,
    claims: Sequence[Claim],
    classes: Mapping[str, DeviceClass],
    slices: Sequence[Any],
    in_use: InUse | None = None,
) -> DraVerdict:
    """Allocate the claims on the node; when they do not all fit, explain the first claim that
    cannot join the ones before it, device by device, beside what those hold."""
    held = in_use or InUse()
    try:
        placements = allocate(node, claims, classes, slices, held)
    except DraError as error:
        return DraVerdict(False, error=str(error), reasons=explain(node, claims, classes, slices, held))
    if placements is not None:
        return DraVerdict(True, placements)
    failing, before = _first_failing(node, claims, classes, slices, held)
    reasons = explain(node, claims[failing : failing + 1], classes, slices, before)
    if not reasons:
        reasons = tuple(
            DeviceReason(c.name, r.name, "-", "the node publishes no devices")
            for c in claims
            for r in c.requests
        )
    return DraVerdict(False, reasons=reasons, error=_shortfall(claims[failing], reasons))


def _shortfall(claim: Claim, reasons: Sequence[DeviceReason]) -> str:
    """When enough devices could each serve a request alone but not together, say how many it asks."""
    for request in claim.requests:
        servable = sum(1 for r in reasons if r.request == request.name and not r.reason)
        if request.mode != ALL and 0 < servable < request.count:
            return f"request {request.name} asks {request.count} device(s); {servable} of the node's can serve it"
    return ""

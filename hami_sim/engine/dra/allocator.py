"""The DRA structured allocator for one node, simulated (Kubernetes' ``structured`` package).

Claims are allocated in order, each request in order, each device of an ``ExactCount`` request from
the first matching device on (pools by driver and name, slices by name, devices as listed), with
backtracking when a later request cannot be met: the same search, in the same order, as the
scheduler's allocator, so the devices chosen are the ones it would choose. An ``All`` request takes
every matching device the node sees, and fails when the node's pools are incomplete or invalid.

The allocator's own answer is an ``Outcome``: the devices each claim gets, or why none fit. A claim
the scheduler would reject with an error (an unknown class, a CEL error, too many devices) raises
``DraError`` with the scheduler's wording.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from hami_sim.engine.dra.capacity import Consumption, consumed_by, fits_capacity
from hami_sim.engine.dra.objects import (
    ALL,
    AllocatedDevice,
    Claim,
    Device,
    DeviceClass,
    DeviceRequest,
    DraError,
)
from hami_sim.engine.dra.pools import Pool, gather_pools
from hami_sim.engine.dra.selectors import device_activation, selector_matches

__all__ = ["MAX_RESULTS", "DeviceId", "Placement", "InUse", "allocate", "in_use_by"]

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize
DeviceId = tuple[str, str, str]  # driver, pool, device


@dataclass(frozen=True, slots=True)
class Placement:
    """One device given to one request: whole, or a share (``consumed``) of a shared device."""

    request: str
    driver: str
    pool: str
    device: str
    consumed: Mapping[str, Fraction] | None = None


@dataclass(frozen=True, slots=True)
class InUse:
    """What other claims already hold: whole devices, and the shares taken of shared ones."""

    dedicated: frozenset[DeviceId] = frozenset()
    shares: Mapping[DeviceId, tuple[Consumption, ...]] = field(default_factory=dict)


def in_use_by(allocated: Iterable[AllocatedDevice]) -> InUse:
    """The allocator's view of allocated claims' devices (``AllocatedState``)."""
    dedicated: set[DeviceId] = set()
    shares: dict[DeviceId, list[Consumption]] = {}
    for held in allocated:
        key = (held.driver, held.pool, held.device)
        if held.consumed is None:
            dedicated.add(key)
        else:
            shares.setdefault(key, []).append(held.consumed)
    return InUse(frozenset(dedicated), {k: tuple(v) for k, v in shares.items()})


@dataclass(slots=True)
class _Candidate:
    pool: Pool
    device: Device
    key: DeviceId


@dataclass(slots=True)
class _Search:
    """The state of one allocation: which devices are being given, and to which claim."""

    claims: Sequence[Claim]
    classes: Mapping[str, DeviceClass]
    in_use: InUse
    candidates: tuple[_Candidate, ...]
    all_devices: dict[tuple[int, int], list[_Candidate]] = field(default_factory=dict)
    giving: dict[DeviceId, int] = field(default_factory=dict)  # dedicated device -> claim index
    sharing: dict[DeviceId, list[Consumption]] = field(default_factory=dict)
    results: list[list[Placement]] = field(default_factory=list)
    matches: dict[tuple[DeviceId, int, int], bool] = field(default_factory=dict)
    activations: dict[DeviceId, Any] = field(default_factory=dict)

    def selectable(self, claim: int, index: int, candidate: _Candidate) -> bool:
        """Class selectors, then the request's own (memoised per device and request, as upstream)."""
        key = (candidate.key, claim, index)
        known = self.matches.get(key)
        if known is None:
            request = self.claims[claim].requests[index]
            activation = self.activations.get(candidate.key)
            if activation is None:
                activation = device_activation(candidate.device, candidate.pool.driver)
                self.activations[candidate.key] = activation
            wanted = self.classes[request.class_name].selectors + request.selectors
            known = all(selector_matches(expression, activation) for expression in wanted)
            self.matches[key] = known
        return known

    def capacity_fits(self, request: DeviceRequest, candidate: _Candidate) -> bool:
        held = self.in_use.shares.get(candidate.key, ()) + tuple(self.sharing.get(candidate.key, ()))
        return fits_capacity(request.capacity, candidate.device, *held)

    def take(self, claim: int, request: DeviceRequest, candidate: _Candidate) -> Placement | None:
        """Give one device to a request, or None when it is taken or its capacity is used up."""
        key = candidate.key
        shared = candidate.device.allow_multiple
        if key in self.in_use.dedicated or key in self.giving:
            return None
        if not shared and key in self.sharing:
            return None
        if not self.capacity_fits(request, candidate):
            return None
        if not shared:
            self.giving[key] = claim
            return Placement(request.name, key[0], key[1], key[2])
        consumed = consumed_by(request.capacity, candidate.device)
        self.sharing.setdefault(key, []).append(consumed)
        return Placement(request.name, key[0], key[1], key[2], consumed)

    def give_back(self, placement: Placement) -> None:
        key = (placement.driver, placement.pool, placement.device)
        if placement.consumed is None:
            self.giving.pop(key, None)
        else:
            self.sharing[key].remove(placement.consumed)
            if not self.sharing[key]:
                del self.sharing[key]


def _check_request(search: _Search, claim: Claim, request: DeviceRequest) -> None:
    if not request.class_name:
        raise DraError(
            f"claim {claim.name}, request {request.name}: missing device class name (unsupported request type?)"
        )
    if request.class_name not in search.classes:
        raise DraError(
            f"claim {claim.name}, request {request.name}: could not retrieve device class {request.class_name}"
        )


def _all_devices(search: _Search, pools: Sequence[Pool], claim: int, index: int) -> list[_Candidate]:
    """The devices an ``All`` request takes: every selectable one whose capacity admits it."""
    request = search.claims[claim].requests[index]
    for pool in pools:
        state = "being updated" if pool.incomplete else "invalid" if pool.invalid else ""
        if state:
            raise DraError(
                f"claim {search.claims[claim].name}, request {request.name}: asks for all devices, "
                f"but resource pool {pool.driver}/{pool.name} is currently {state}"
            )
    return [
        c
        for c in search.candidates
        if search.selectable(claim, index, c) and search.capacity_fits(request, c)
    ]


def _prepare(search: _Search, pools: Sequence[Pool]) -> None:
    """Validate every request and count what each claim asks, before any search (as upstream)."""
    for claim_index, claim in enumerate(search.claims):
        wanted = 0
        for index, request in enumerate(claim.requests):
            _check_request(search, claim, request)
            if request.mode == ALL:
                search.all_devices[(claim_index, index)] = _all_devices(search, pools, claim_index, index)
                wanted += len(search.all_devices[(claim_index, index)])
            else:
                wanted += request.count
        if wanted > MAX_RESULTS:
            raise DraError(
                f"claim {claim.name}: number of requested devices {wanted} exceeds the claim limit of {MAX_RESULTS}"
            )
        search.results.append([])


def _place(search: _Search, claim: int, index: int, done: int, start: int) -> bool:
    """Depth-first: device ``done`` of request ``index`` of ``claim``, trying candidates from ``start``."""
    if claim == len(search.claims):
        return True
    requests = search.claims[claim].requests
    if index == len(requests):
        return _place(search, claim + 1, 0, 0, 0)
    request = requests[index]
    chosen = search.all_devices.get((claim, index))
    if chosen is not None:
        return _place_all(search, claim, index, chosen)
    if done == request.count:
        return _place(search, claim, index + 1, 0, 0)
    for position in range(start, len(search.candidates)):
        candidate = search.candidates[position]
        if candidate.key in search.in_use.dedicated or candidate.key in search.giving:
            continue
        if not search.selectable(claim, index, candidate):
            continue
        placement = search.take(claim, request, candidate)
        if placement is None:
            continue
        search.results[claim].append(placement)
        if _place(search, claim, index, done + 1, position + 1):
            return True
        search.results[claim].pop()
        search.give_back(placement)
    return False


def _place_all(search: _Search, claim: int, index: int, chosen: list[_Candidate]) -> bool:
    if not chosen:
        return False
    request = search.claims[claim].requests[index]
    taken: list[Placement] = []
    for candidate in chosen:
        placement = search.take(claim, request, candidate)
        if placement is None:
            break
        taken.append(placement)
        search.results[claim].append(placement)
    if len(taken) == len(chosen) and _place(search, claim, index + 1, 0, 0):
        return True
    for placement in reversed(taken):
        search.results[claim].pop()
        search.give_back(placement)
    return False


def allocate(
    node: Mapping,
    claims: Sequence[Claim],
    classes: Mapping[str, DeviceClass],
    slices: Sequence[Any],
    in_use: InUse | None = None,
) -> tuple[tuple[Placement, ...], ...] | None:
    """The devices each claim gets on ``node`` (in claim order), or None when they do not all fit."""
    pools = gather_pools(slices, node)
    candidates = tuple(
        _Candidate(pool, device, (pool.driver, pool.name, device.name))
        for pool in pools
        if not pool.incomplete and not pool.invalid
        for _, device in pool.devices()
    )
    search = _Search(claims, classes, in_use or InUse(), candidates)
    _prepare(search, pools)
    if _place(search, 0, 0, 0, 0):
        return tuple(tuple(result) for result in search.results)
    if any(pool.invalid for pool in pools):
        raise DraError("invalid resource pools were encountered")
    return None

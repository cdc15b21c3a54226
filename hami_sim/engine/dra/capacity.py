"""Consumable capacity (``DRAConsumableCapacity``): how much of a shared device one request uses.

A device with ``allowMultipleAllocations`` can serve several claims at once; each takes a share of
its capacity. What a request takes follows the device's ``requestPolicy``: an absent request takes
the policy's default (or the whole capacity), a present one is rounded up to the next valid value or
range step, and a value the policy does not admit fails the device. The sum over every claim holding
or being given the device may not exceed its capacity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from hami_sim.engine.dra.objects import Capacity, Device, RequestPolicy

__all__ = ["Consumption", "consumed_by", "fits_capacity", "missing_capacity"]

Consumption = Mapping[str, Fraction]


def _round_up_range(requested: Fraction, policy: RequestPolicy) -> Fraction:
    assert policy.range_min is not None
    if requested < policy.range_min:
        return policy.range_min
    if policy.range_step is None:
        return requested
    step, low = math.ceil(policy.range_step), math.ceil(policy.range_min)
    steps = -(-(math.ceil(requested) - low) // step)  # Go's Value(): integers rounded up
    return Fraction(low + step * steps)


def _round_up_values(requested: Fraction, valid: tuple[Fraction, ...]) -> Fraction:
    for value in valid:
        if requested <= value:
            return value
    return requested


def _consumed(requested: Fraction | None, capacity: Capacity) -> Fraction:
    """What one request takes of one capacity, after the policy's default and rounding."""
    policy = capacity.policy
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else capacity.value
    if policy is None:
        return requested
    if policy.has_range:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        return _round_up_values(requested, policy.valid_values)
    return requested


def _violates(value: Fraction, policy: RequestPolicy | None) -> bool:
    if policy is None or (policy.default is not None and value == policy.default):
        return False
    if policy.has_range:
        if policy.range_max is not None and value > policy.range_max:
            return True
        if policy.range_step is not None and policy.range_min is not None:
            return (math.ceil(value) - math.ceil(policy.range_min)) % math.ceil(policy.range_step) != 0
        return False
    if policy.valid_values:
        return value not in policy.valid_values
    return False


def missing_capacity(requests: Consumption | None, device: Device) -> str:
    """The first requested capacity the device does not define ('' when it defines them all)."""
    for name in requests or {}:
        if name not in device.capacity:
            return name
    return ""


def consumed_by(requests: Consumption | None, device: Device) -> dict[str, Fraction]:
    """The share of each of the device's capacities one request takes."""
    wanted = requests or {}
    return {name: _consumed(wanted.get(name), capacity) for name, capacity in device.capacity.items()}


def fits_capacity(requests: Consumption | None, device: Device, *held: Consumption | None) -> bool:
    """Whether one more request fits beside what ``held`` (other claims' shares) already uses."""
    if missing_capacity(requests, device):
        return False
    wanted = requests or {}
    for name, capacity in device.capacity.items():
        share = _consumed(wanted.get(name), capacity)
        if _violates(share, capacity.policy):
            return False
        used = share + sum((h.get(name, Fraction(0)) for h in held if h), Fraction(0))
        if used > capacity.value:
            return False
    return True

"""Kubernetes resource quantities, parsed exactly.

HAMi reads device requests with ``resource.Quantity.AsInt64()``, which succeeds only for values that
are exact integers inside int64. We parse to a ``Fraction`` so ``16Gi``, ``500m`` and ``1e3`` are exact
and the integer test is the same as Go's.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["QuantityError", "parse_quantity", "as_int64"]

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)

_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}

_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<int>\d*)(?:\.(?P<frac>\d*))?"
    r"(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity (the API server would have rejected the object)."""


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity string (or a JSON number) into an exact ``Fraction``. (Not memoised: pods
    are parsed once per distinct pod, ``Simulator.pod_context``.)"""
    if not isinstance(value, str):
        return _json_number(value)
    text = value  # Kubernetes' ParseQuantity does not trim: " 1" is not a quantity
    if len(text) > 64:
        raise QuantityError(f"quantity {value[:40]!r}... is too long")
    match = _QUANTITY.match(text)
    if not match or not (match.group("int") or match.group("frac")):
        raise QuantityError(f"quantities must match the regular expression of Kubernetes, got {value!r}")
    digits = (match.group("int") or "0") + "." + (match.group("frac") or "0")
    number = Fraction(digits)
    if match.group("exp"):
        exponent = int(match.group("exp")[1:])
        if abs(exponent) > 40:
            raise QuantityError(f"quantity {value!r} is out of range")
        number *= Fraction(10) ** exponent
    else:
        number *= _SUFFIXES[match.group("suffix") or ""]
    return -number if match.group("sign") == "-" else number


def _json_number(value: object) -> Fraction:
    """A JSON number as a quantity (exactly as written, for a float); booleans and the rest refused."""
    if isinstance(value, bool):
        raise QuantityError(f"quantities must be strings or numbers, not {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"quantities must be finite, not {value!r}")
        return Fraction(repr(value))
    raise QuantityError(f"quantities must be strings or numbers, not {type(value).__name__}")


def as_int64(value: Fraction) -> int | None:
    """``Quantity.AsInt64``: the integer value, or None when it is fractional or outside int64."""
    if value.denominator != 1:
        return None
    number = value.numerator
    if number < _INT64_MIN or number > _INT64_MAX:
        return None
    return number

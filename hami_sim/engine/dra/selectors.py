"""CEL device selectors, evaluated as the DRA scheduler plugin evaluates them.

A selector sees one ``device``: ``driver``, ``attributes`` and ``capacity`` (maps of domain to
maps of name to value) and ``allowMultipleAllocations``. The CEL itself is evaluated by
``common-expression-language`` (a compiled CEL interpreter from PyPI); Kubernetes' own extension
functions that selectors use are supplied here: ``quantity()`` with ``compareTo``,
``isGreaterThan``, ``isLessThan``, ``asInteger``, and ``semver()`` with ``compareTo``. Other
Kubernetes extensions (``isQuantity``, list and regex libraries beyond CEL's standard ones) are not
defined, so an expression using them fails to evaluate and the claim gets a clear CEL error,
never a silent mismatch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import cel

from hami_sim.engine.dra.objects import Device, DraError, Semver, qualified
from hami_sim.engine.quantity import QuantityError, parse_quantity
from hami_sim.engine.stores import MAX_CEL_PROGRAMS

__all__ = ["SelectorError", "compile_selector", "device_activation", "selector_matches"]

_SEMVER_KEY = "__semver__"
_programs: dict[str, Any] = {}


class SelectorError(DraError):
    """A selector that does not compile, fails at run time, or does not yield a bool."""


def _number(value: Fraction) -> int | float:
    return value.numerator if value.denominator == 1 else float(value)


def _quantity(text: object) -> int | float:
    try:
        return _number(parse_quantity(text))
    except QuantityError as error:
        raise ValueError(str(error)) from None


def _semver(text: object) -> dict[str, str]:
    if not isinstance(text, str):
        raise ValueError("semver() takes a string")
    _semver_key(text)
    return {_SEMVER_KEY: text}


def _semver_key(text: str) -> tuple:
    """Semantic-version order: numeric core, then a release above any pre-release of it."""
    core, _, pre = text.partition("-")
    core = core.partition("+")[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"{text!r} is not a semantic version")
    return (
        *map(int, parts),
        not pre,
        tuple(int(p) if p.isdigit() else p for p in pre.split(".")) if pre else (),
    )


def _comparable(value: object) -> tuple:
    if isinstance(value, Mapping) and _SEMVER_KEY in value:
        return (1, _semver_key(str(value[_SEMVER_KEY])))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"cannot compare {value!r}")
    return (0, value)


def _compare(left: object, right: object) -> int:
    """``compareTo``: -1, 0 or 1, for two quantities or two versions (never one of each)."""
    a, b = _comparable(left), _comparable(right)
    if a[0] != b[0]:
        raise ValueError("cannot compare a quantity with a version")
    return int(a > b) - int(a < b)


_FUNCTIONS: Mapping[str, Callable[..., object]] = {
    "quantity": _quantity,
    "semver": _semver,
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "asInteger": lambda a: int(a),
}


def compile_selector(expression: str) -> Any:
    """The compiled program of one expression, compiled once per process: the memo ``cel programs``
    of ``stores.PROCESS_MEMOS`` (a pure function of the text, reached without a simulator)."""
    program = _programs.get(expression)
    if program is None:
        try:
            program = cel.compile(expression)
        except Exception as error:  # the binding raises ValueError, or others for odd input
            raise SelectorError(f"CEL compile error: {error}") from None
        undeclared = sorted(set(program.variables()) - {"device"})
        if undeclared:  # Kubernetes type-checks selectors: the only variable is ``device``
            raise SelectorError(f"CEL compile error: undeclared reference to {undeclared[0]!r}")
        if len(_programs) >= MAX_CEL_PROGRAMS:
            _programs.clear()
        _programs[expression] = program
    return program


def _attribute_value(value: object) -> object:
    return {_SEMVER_KEY: value.text} if isinstance(value, Semver) else value


def device_activation(device: Device, driver: str) -> Any:
    """The ``device`` variable one selector sees, as a CEL context with our functions."""
    attributes: dict[str, dict[str, object]] = {}
    for name, value in device.attributes.items():
        domain, _, ident = name.rpartition("/")
        attributes.setdefault(domain, {})[ident] = _attribute_value(value)
    capacity: dict[str, dict[str, object]] = {}
    for name, entry in device.capacity.items():
        domain, _, ident = qualified(name, driver).rpartition("/")
        capacity.setdefault(domain, {})[ident] = _number(entry.value)
    context = cel.Context()
    for name, function in _FUNCTIONS.items():
        context.add_function(name, function)
    context.add_variable(
        "device",
        {
            "driver": driver,
            "attributes": attributes,
            "capacity": capacity,
            "allowMultipleAllocations": device.allow_multiple,
        },
    )
    return context


def selector_matches(expression: str, activation: Any) -> bool:
    """Whether one selector admits the device; errors are the claim's, as in the scheduler."""
    program = compile_selector(expression)
    try:
        result = program.execute(activation)
    except KeyError as error:
        raise SelectorError(f"CEL runtime error: no such key: {error.args[0]}") from None
    except Exception as error:  # a failed function or a type mismatch is CEL's runtime error
        raise SelectorError(f"CEL runtime error: {error}") from None
    if not isinstance(result, bool):
        raise SelectorError(f"CEL runtime error: the expression returned {type(result).__name__}, not bool")
    return result

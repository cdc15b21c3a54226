"""Replaying v2.10.0's ported cases under an older release, where the older tag's Go test holds the
same case: the same table row (whitespace aside) and the same assertions after the table.

Which cases those are was read from HAMi's sources at both tags and is written down, per Go file,
in ``hami_v2_9/test_unchanged.py`` and ``hami_v2_8/test_unchanged.py``; each case then runs the
v2.10.0 module's own test function with the harness under the older release
(``harness.under_release``), named ``<Go file>::<test>/<case>``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping

import pytest

from tests.vendors.harness import under_release

__all__ = ["replay_cases", "replay"]


def _parametrized(fn: Callable) -> tuple[list[str], list] | None:
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    if len(marks) != 1:
        return None
    names, values = marks[0].args[0], marks[0].args[1]
    argnames = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    if list(inspect.signature(fn).parameters) != argnames:
        return None  # a test taking fixtures too is not replayed
    return argnames, list(values)


def replay_cases(table: Mapping[str, tuple[str, Iterable[str]]]) -> list:
    """``{v2.10 module: (Go file, case ids)}`` -> ``pytest.param(test, kwargs)`` per case."""
    out = []
    for module_name, (go_file, ids) in table.items():
        wanted = set(ids)
        module = importlib.import_module(f"tests.vendors.hami_v2_10.{module_name}")
        for name, fn in vars(module).items():
            if not name.startswith("test_") or not callable(fn):
                continue
            spec = _parametrized(fn)
            if spec is None:
                continue
            argnames, values = spec
            for param in values:
                if getattr(param, "id", None) in wanted:
                    kwargs = dict(zip(argnames, param.values, strict=True))
                    out.append(pytest.param(fn, kwargs, id=f"{go_file}::{param.id}"))
                    wanted.discard(param.id)
        assert not wanted, f"{module_name}: no v2.10 case {sorted(wanted)}"
    return out


def replay(release: str, test: Callable, kwargs: dict) -> None:
    with under_release(release):
        test(**kwargs)

"""The DRA allocator against Kubernetes' own allocator tests (``tests/dra/upstream_allocator.py``)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from hami_sim.engine.dra.allocator import InUse, allocate
from hami_sim.engine.dra.objects import DraError, parse_claim, parse_class, parse_slice
from tests.dra.builders import Case
from tests.dra.upstream_allocator import CASES, ORIGIN

pytestmark = pytest.mark.engine


def _in_use(case: Case) -> InUse:
    def key(text: str) -> tuple[str, str, str]:
        driver, pool, name = text.split("/")
        return driver, pool, name

    shares = {key(k): ({n: Fraction(v) for n, v in used.items()},) for k, used in case.shares.items()}
    return InUse(frozenset(map(key, case.dedicated)), shares)


def _run(case: Case) -> object:
    classes = {c.name: c for c in map(parse_class, case.classes)}
    answer = allocate(
        case.node,
        [parse_claim(c) for c in case.claims],
        classes,
        [parse_slice(s) for s in case.slices],
        _in_use(case),
    )
    if answer is None:
        return None
    return [
        [
            (
                p.request,
                f"{p.driver}/{p.pool}/{p.device}",
                None if p.consumed is None else {k: int(v) for k, v in p.consumed.items()},
            )
            for p in claim
        ]
        for claim in answer
    ]


def test_every_case_names_its_origin_once() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)) >= 60
    assert ORIGIN.endswith("TestAllocator/")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_case(case: Case) -> None:
    if case.error:
        with pytest.raises(DraError) as raised:
            _run(case)
        assert case.error.lower() in str(raised.value).lower()
        return
    assert _run(case) == ([list(c) for c in case.expect] if case.expect is not None else None)

"""The ``TestDevices_Fit`` table HAMi repeats, nearly verbatim, for its sliced vendors.

v2.8.3 and v2.9.0 hold its first twelve cases (``V2_9_NAMES``) with the same values; v2.10.0 adds
the mutex, partial-allocation and unhealthy-device cases.

Hygon, Moore Threads and MetaX GPU (``pkg/device/<vendor>/device_test.go``) each test their copy of
the NVIDIA-derived Fit loop with the same cases: only the device type, the UUID annotation keys and a
few values differ. ``sliced_fit_cases`` builds that table once for a vendor; a module picks the cases
its Go file has (``names``), states the values its Go file changes (``overrides``), and marks the cases
the engine does not follow yet (``xfail``: case name -> which v2.10.0 rule differs).

Each case is ``(devices, request (nums, type, memreq, mem%, cores), annotations, fits, collected,
chosen ids, reason)``; the Go test checks the chosen ids only when the Fit succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pytest

from tests.vendors.harness import usage

__all__ = ["sliced_fit_cases", "ALL_NAMES", "V2_9_NAMES"]

MUTEX = {"hami.io/gpu-scheduler-policy": "mutex"}


def _table(
    vtype: str, use_key: str, nouse_key: str
) -> dict[str, tuple[Callable[[], list], tuple, dict, bool, int, list, str]]:
    def dev(id="dev-0", **kw):
        base = {"type": vtype, "count": 100, "totalcore": 100, "totalmem": 1280}
        base.update(kw)
        return usage(id, **base)

    return {
        "fit success": (
            lambda: [dev("dev-0", totalmem=128), dev("dev-1", totalmem=128)],
            (1, vtype, 64, 0, 50), {}, True, 1, ["dev-1"], "",
        ),
        "fit fail: memory not enough": (
            lambda: [dev(totalmem=128)], (1, vtype, 512, 0, 50), {}, False, 0, [], "1/1 CardInsufficientMemory",
        ),
        "fit fail: core not enough": (
            lambda: [dev(totalmem=1024, usedcores=100)],
            (1, vtype, 512, 0, 50), {}, False, 0, [], "1/1 CardInsufficientCore",
        ),
        "fit fail: type mismatch": (
            lambda: [dev(totalmem=128)], (1, "OtherType", 512, 0, 50), {}, False, 0, [], "1/1 CardTypeMismatch",
        ),
        "fit fail: user assign use uuid mismatch": (
            lambda: [dev("dev-1")], (2, vtype, 512, 0, 50), {use_key: "dev-0"}, False, 0, [], "1/1 CardUuidMismatch",
        ),
        "fit fail: user assign no use uuid match": (
            lambda: [dev("dev-0")], (2, vtype, 512, 0, 50), {nouse_key: "dev-0"}, False, 0, [], "1/1 CardUuidMismatch",
        ),
        "fit fail: card overused": (
            lambda: [dev(used=100)], (1, vtype, 512, 0, 50), {}, False, 0, [], "1/1 CardTimeSlicingExhausted",
        ),
        "fit success: but core limit can't exceed 100": (
            lambda: [dev()], (1, vtype, 512, 0, 120), {}, True, 1, ["dev-0"], "",
        ),
        "fit fail:  card exclusively": (
            lambda: [dev(used=20)], (1, vtype, 512, 0, 100), {}, False, 0, [], "1/1 ExclusiveDeviceAllocateConflict",
        ),
        "fit fail:  CardComputeUnitsExhausted": (
            lambda: [dev(used=20, usedcores=100)],
            (1, vtype, 512, 0, 0), {}, False, 0, [], "1/1 CardComputeUnitsExhausted",
        ),
        "fit fail:  AllocatedCardsInsufficientRequest": (
            lambda: [dev(used=20, usedcores=10)],
            (2, vtype, 512, 0, 20), {}, False, 1, [], "1/1 AllocatedCardsInsufficientRequest",
        ),
        "fit success:  memory percentage": (
            lambda: [dev(used=20, usedcores=10)], (1, vtype, 0, 10, 20), {}, True, 1, ["dev-0"], "",
        ),
        "mutex policy rejects used device": (
            lambda: [dev(used=1, count=2, totalmem=128)],
            (1, vtype, 64, 0, 50), MUTEX, False, 0, [], "1/1 ExclusiveDeviceAllocateConflict",
        ),
        "fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards": (
            lambda: [dev("dev-0"), dev("dev-1", index=1)],
            (3, vtype, 512, 0, 20), {}, False, 2, [], "2/2 AllocatedCardsInsufficientRequest",
        ),
        "fit fail: CardNotHealth": (
            lambda: [dev(health=False)], (1, vtype, 512, 0, 50), {}, False, 0, [], "1/1 CardNotHealth",
        ),
    }  # fmt: skip


ALL_NAMES = tuple(_table("", "", ""))
#: the cases of the v2.8.3 and v2.9.0 tables (the same values)
V2_9_NAMES = ALL_NAMES[:12]


def sliced_fit_cases(
    test: str,
    vtype: str,
    use_key: str,
    nouse_key: str,
    *,
    names: Iterable[str] = ALL_NAMES,
    overrides: Mapping[str, Callable[[], list]] | None = None,
    xfail: Mapping[str, str] | None = None,
    go_file: str = "",
) -> list:
    """The table for one vendor as ``pytest.param``s named ``<test>/<case name>``.

    ``overrides``: case name -> a devices builder replacing the common one (a Go file's own values);
    ``go_file``: the Go file, named before the test in each id (``<file>::<test>/<case name>``).
    """
    table = _table(vtype, use_key, nouse_key)
    overrides = overrides or {}
    xfail = xfail or {}
    params = []
    for name in names:
        build, *rest = table[name]
        build = overrides.get(name, build)
        marks = [pytest.mark.xfail(strict=True, reason=xfail[name])] if name in xfail else []
        params.append(
            pytest.param(
                build(), *rest, id=f"{go_file}::{test}/{name}" if go_file else f"{test}/{name}", marks=marks
            )
        )
    unknown = (set(overrides) | set(xfail)) - set(names)
    assert not unknown, f"cases not in the table: {unknown}"
    return params

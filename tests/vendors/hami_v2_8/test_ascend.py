"""HAMi v2.8.3 ``pkg/device/ascend/device_test.go`` as data, under the 2.8 rules.

``Test_GenerateResourceRequestsFactor``: the scheduler rounds a memory request up to the vNPU
template (128 x 10 MiB asks vir02's 2184), as v2.9.0 does and v2.10.0 no longer does; the test reads
the same at v2.8.3 and v2.9.0. ``TestDevices_Fit``: its thirteen cases are v2.9.0's but for the two
hami-vnpu-core ``ModeNotFit`` cases v2.8.3 lacks (it has no soft slicing, #1771), with the same
device config; they are taken from ``hami_v2_10/test_ascend.py``'s table (health aside, which
v2.8.3's Ascend Fit never read) and run on every configured chip. v2.8.3's other Ascend tests are not
ported.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.ascend import AscendVendor
from tests.vendors.hami_v2_10 import test_ascend as v2_10
from tests.vendors.harness import for_release, under_release

GO = "pkg/device/ascend/device_test.go"
LIMITS = v2_10.lim("Ascend910A", "1", "128")


@pytest.mark.parametrize(
    ("factor", "memreq"),
    [
        pytest.param(10, 2184, id=f"{GO}::Test_GenerateResourceRequestsFactor/factor 10"),
        pytest.param(100, 17476, id=f"{GO}::Test_GenerateResourceRequestsFactor/factor 100"),
        pytest.param(0, 2184, id=f"{GO}::Test_GenerateResourceRequestsFactor/factor 0"),
    ],
)
def test_generate_resource_requests_factor(factor, memreq):
    vendor = AscendVendor(v2_10.with_factor(factor))
    assert for_release("2.8").request_of(vendor, LIMITS, LIMITS) == (1, "Ascend910A", memreq, 0, 0)


FIT_NAMES = (
    "fit success",
    "fit fail: memory not enough",
    "fit fail: core not enough",
    "fit fail: type mismatch",
    "fit fail: user assign use uuid mismatch",
    "fit fail: user assign no use uuid match",
    "fit fail: card overused",
    "fit success: but core limit can't exceed 100",
    "fit fail:  card exclusively",
    "fit fail:  CardComputeUnitsExhausted",
    "fit fail:  AllocatedCardsInsufficientRequest",
    "fit success:  memory percentage",
    "fit success. schedule by NetworkID",
)
TABLE = [row for row in v2_10.FIT_TABLE if row[0] in FIT_NAMES]
assert len(TABLE) == len(FIT_NAMES)


def _fit_cases():
    seen: dict[str, int] = {}
    for config in v2_10.FIT_CHIPS:
        cw = config.common_word
        seen[cw] = seen.get(cw, 0) + 1
        label = cw if seen[cw] == 1 else f"{cw}#{seen[cw]}"
        for row in TABLE:
            yield pytest.param(config, *row, id=f"{GO}::TestDevices_Fit/{label}:{row[0]}")


@pytest.mark.parametrize(
    ("config", "name", "devices", "req", "annos", "node_annos", "ok", "ids", "reason"), list(_fit_cases())
)
def test_fit(config, name, devices, req, annos, node_annos, ok, ids, reason):
    with under_release("2.8"):
        v2_10.test_fit(config, name, devices, req, annos, node_annos, ok, ids, reason)


def test_a_hami_core_pod_is_no_different_under_v2_8():
    """v2.9.0's "hami-core pod on legacy node (ModeNotFit)" row under 2.8: v2.8.3 reads no vNPU mode,
    so the pod fits where v2.9.0 refuses it."""
    [row] = [r for r in v2_10.FIT_TABLE if r[0] == "fit fail: hami-core pod on legacy node (ModeNotFit)"]
    name, devices, req, annos, node_annos, *_ = row
    with under_release("2.8"):
        v2_10.test_fit(v2_10.FIT_CHIPS[0], name, devices, req, annos, node_annos, True, ["dev-0"], "")

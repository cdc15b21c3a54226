"""HAMi v2.9.0 ``pkg/device/ascend/device_test.go`` ``TestDevices_Fit`` as data, under the v2.9
rules: every configured chip (the same chips as v2.10.0's test) on the test's fifteen cases.

Fourteen cases read as at v2.10.0 (the devices' health aside, which v2.9.0's Ascend Fit never
read) and come from ``hami_v2_10/test_ascend.py``'s table; "legacy pod on hami-core reserved node"
is v2.9.0's own: a pod without ``huawei.com/vnpu-mode`` asking for part of a card is refused by a
node that runs hami-vnpu-core (v2.10.0 lets it in, #2035).

Also v2.9.0's ``Test_GenerateResourceRequestsFactor`` (its scheduler rounds a hard-sliced memory up
to the vNPU template: 128 x 10 MiB asks vir02's 2184; v2.10.0 expects 1280),
``Test_GenerateResourceRequests_VNPUCoreMode`` (a ``-core`` request keeps its memory as asked; the Go
test compares memory, cores and type) and ``Test_GenerateResourceRequests``'s case with memory
(8738 is vir08's size, so rounding keeps it).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.ascend import AscendVendor
from tests.vendors.hami_v2_10 import test_ascend as v2_10
from tests.vendors.harness import fit_ids, for_release, under_release
from tests.vendors.helpers import BY_WORD

GO = "pkg/device/ascend/device_test.go"
SAME = (
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
    "fit fail: hami-core pod on legacy node (ModeNotFit)",
)
LEGACY_ON_CORE = (
    "fit fail: legacy pod on hami-core reserved node (ModeNotFit)",
    [v2_10.npu("dev-0", totalmem=32768)],
    (1, 8738, 0, 0),
    {},
    v2_10.CORE_NODE,
    False,
    [],
    "1/1 ModeNotFit",
)
TABLE = [row for row in v2_10.FIT_TABLE if row[0] in SAME] + [LEGACY_ON_CORE]
assert len(TABLE) == len(SAME) + 1


def _cases():
    seen: dict[str, int] = {}
    for config in v2_10.FIT_CHIPS:
        cw = config.common_word
        seen[cw] = seen.get(cw, 0) + 1
        label = cw if seen[cw] == 1 else f"{cw}#{seen[cw]}"
        for row in TABLE:
            yield pytest.param(config, *row, id=f"{GO}::TestDevices_Fit/{label}:{row[0]}")


@pytest.mark.parametrize(
    ("config", "name", "devices", "req", "annos", "node_annos", "ok", "ids", "reason"), list(_cases())
)
def test_fit(config, name, devices, req, annos, node_annos, ok, ids, reason):
    with under_release("2.9"):
        v2_10.test_fit(config, name, devices, req, annos, node_annos, ok, ids, reason)


REQUEST_GO = "pkg/device/ascend/device_test.go"
FACTOR_LIMITS = v2_10.lim("Ascend910A", "1", "128")


@pytest.mark.parametrize(
    ("config", "limits", "requests", "want"),
    [
        pytest.param(v2_10.with_factor(10), FACTOR_LIMITS, FACTOR_LIMITS, (1, "Ascend910A", 2184, 0, 0),
                     id=f"{REQUEST_GO}::Test_GenerateResourceRequestsFactor/factor 10"),
        pytest.param(v2_10.with_factor(100), FACTOR_LIMITS, FACTOR_LIMITS, (1, "Ascend910A", 17476, 0, 0),
                     id=f"{REQUEST_GO}::Test_GenerateResourceRequestsFactor/factor 100"),
        pytest.param(v2_10.with_factor(0), FACTOR_LIMITS, FACTOR_LIMITS, (1, "Ascend910A", 2184, 0, 0),
                     id=f"{REQUEST_GO}::Test_GenerateResourceRequestsFactor/factor 0"),
        pytest.param(v2_10.B3_CORE, v2_10.lim("Ascend910B3", "1", "15360", "10"), {},
                     (1, "Ascend910B3", 15360, 0, 10),
                     id=f"{REQUEST_GO}::Test_GenerateResourceRequests_VNPUCoreMode/"
                     "parse custom vNPU core and memory resources"),
    ],
)  # fmt: skip
def test_generate_resource_requests(config, limits, requests, want):
    assert for_release("2.9").request_of(AscendVendor(config), limits, requests) == want


# -- Ascend910C modules (#2369, ``HamiRules.ascend_910c_modules``) --------------------------------------
def test_fit_910c_full_modules_only():
    """v2.9.0's TestDevices_Fit_910C/fit success: Ascend910C topology-aware allocation (full modules
    only): three NPUs on one network fit a 2-NPU request; the whole module {0, 1} is taken."""
    with under_release("2.9"):
        v2_10.test_fit_910c_full_modules_only()


@pytest.mark.parametrize(
    ("devices", "nums", "taken"),
    [
        # a NetworkID node where more NPUs fit than asked: the one whole module found, 2 of 4 NPUs
        pytest.param(v2_10.pairing(0, 1, 2, 4, 6), 4, ["dev-1", "dev-0"], id="TestAscend910C_FitPartialAllocationBug"),
        # exactly as many as asked: taken without looking for modules
        pytest.param(v2_10.pairing(0, 2), 2, ["dev-2", "dev-0"], id="TestAscend910C_FitExactCountBypassBug"),
        pytest.param(v2_10.pairing(0, 1), 2, ["dev-1", "dev-0"], id="TestAscend910C_FitFullPairSucceeds"),
        # no NetworkID: the NPUs of any modules, walking from the last
        pytest.param(v2_10.pairing(0, 2, net=False), 2, ["dev-2", "dev-0"],
                     id="TestAscend910C_FitWithoutNetworkID_ValidatesPairing/split modules"),
        pytest.param(v2_10.pairing(0, 1, net=False), 2, ["dev-1", "dev-0"],
                     id="TestAscend910C_FitWithoutNetworkID_ValidatesPairing/one module"),
        pytest.param(v2_10.pairing(0, 2, 4, 6, net=False), 4, ["dev-6", "dev-4", "dev-2", "dev-0"],
                     id="TestComputeBestCombination910C_NoFullPairsReturnsEmpty"),
    ],
)  # fmt: skip
def test_v2_10_pairing_cases_as_v2_9_answers_them(devices, nums, taken):
    """v2.10.0's ``device_910c_pairing_test.go`` (added with #2369; v2.9.0 has no such test) with the
    answer v2.9.0's Fit gives, read from its source: it fits, with these NPUs."""
    out = for_release("2.9").fit(AscendVendor(v2_10.A910C), devices, (nums, "Ascend910C", 0, 0, 0))
    assert out.ok and fit_ids(out) == taken


# -- Ascend910C's default config has no vNPU template (v2.9.0's Helm chart lists none) -------------------
@pytest.mark.parametrize(
    ("release", "memory", "want"),
    [
        # hard slicing under 2.9: no template holds it, so the whole NPU's allocatable memory
        pytest.param("2.9", "16384", (1, "Ascend910C", 65536, 0, 0), id="2.9 16384 MiB asks the whole NPU"),
        pytest.param("2.9", "70000", (1, "Ascend910C", 0, 100, 0), id="2.9 past the card asks no memory"),
        pytest.param("2.10", "16384", (1, "Ascend910C", 16384, 0, 0), id="2.10 takes the memory as asked"),
    ],
)
def test_910c_default_config_rounds_to_the_whole_npu(release, memory, want):
    limits = {"huawei.com/Ascend910C": "1", "huawei.com/Ascend910C-memory": memory}
    assert for_release(release).request_of(BY_WORD["Ascend910C"], limits) == want

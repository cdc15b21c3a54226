"""HAMi v2.8.3 ``pkg/device/ascend/device_test.go`` ``Test_GenerateResourceRequestsFactor`` as data,
under the 2.8 rules: the scheduler rounds a memory request up to the vNPU template (128 x 10 MiB
asks vir02's 2184), as v2.9.0 does and v2.10.0 no longer does. The test reads the same at v2.8.3
and v2.9.0; v2.8.3's other Ascend tests are not ported.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.ascend import AscendVendor
from tests.vendors.hami_v2_10 import test_ascend as v2_10
from tests.vendors.harness import for_release

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

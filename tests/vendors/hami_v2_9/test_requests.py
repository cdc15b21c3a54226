"""HAMi v2.9.0's request tables of Cambricon and MetaX sGPU as data, under the 2.9 rules: read through
v2.9's request reading (no int32 guards, ``HamiRules.request_range_guards``).

``pkg/device/metax/sdevice_test.go`` ``TestGenerateResourceRequests`` (its seven cases) and
``pkg/device/cambricon/device_test.go`` ``Test_GenerateResourceRequests`` (the two cases with
memory or cores that ``test_unchanged.py`` does not replay). The values are v2.9.0's; they are the
same as v2.10.0's for these containers, so they show the unguarded reading agrees with the guarded
one wherever the values fit int32.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.cambricon import CambriconConfig, CambriconVendor
from hami_sim.engine.vendors.metax import MetaxSgpuVendor
from tests.vendors.harness import for_release

v2_9 = for_release("2.9")
SGPU_GO = "pkg/device/metax/sdevice_test.go::TestGenerateResourceRequests"
MLU_GO = "pkg/device/cambricon/device_test.go::Test_GenerateResourceRequests"
SGPU = "Metax-SGPU"
COUNT, CORE, MEM = "metax-tech.com/sgpu", "metax-tech.com/vcore", "metax-tech.com/vmemory"
CAMBRICON = CambriconVendor(
    CambriconConfig("cambricon.com/mlu", "cambricon.com/mlu.smlu.vmemory", "cambricon.com/mlu.smlu.vcore")
)
MLU_ALL = {
    "cambricon.com/mlu": "1",
    "cambricon.com/mlu.smlu.vmemory": "1000",
    "cambricon.com/mlu.smlu.vcore": "2",
}
MLU_CORE = {"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vcore": "2"}


@pytest.mark.parametrize(
    ("vendor", "limits", "requests", "want"),
    [
        pytest.param(MetaxSgpuVendor(), {COUNT: "1"}, {}, (1, SGPU, 0, 100, 100),
                     id=f"{SGPU_GO}/one full sgpu test"),
        pytest.param(MetaxSgpuVendor(), {COUNT: "2"}, {}, (2, SGPU, 0, 100, 100),
                     id=f"{SGPU_GO}/two full sgpu test"),
        pytest.param(MetaxSgpuVendor(), {COUNT: "1", CORE: "30"}, {}, (1, SGPU, 0, 100, 30),
                     id=f"{SGPU_GO}/one sgpu test set vcore"),
        pytest.param(MetaxSgpuVendor(), {COUNT: "1", MEM: "16"}, {}, (1, SGPU, 16 * 1024, 0, 100),
                     id=f"{SGPU_GO}/one sgpu test set vmemory"),
        pytest.param(MetaxSgpuVendor(), {COUNT: "1", CORE: "60", MEM: "16"}, {}, (1, SGPU, 16 * 1024, 0, 60),
                     id=f"{SGPU_GO}/one sgpu test set vcore&vmemory"),
        pytest.param(MetaxSgpuVendor(), {COUNT: "1", CORE: "60", MEM: "1024Mi"}, {}, (1, SGPU, 1024, 0, 60),
                     id=f"{SGPU_GO}/one sgpu test set vcore&vmemory, mem unit Mi"),
        pytest.param(MetaxSgpuVendor(), {COUNT: "1", CORE: "60", MEM: "16Gi"}, {}, (1, SGPU, 16 * 1024, 0, 60),
                     id=f"{SGPU_GO}/one sgpu test set vcore&vmemory, mem unit Gi"),
        pytest.param(CAMBRICON, MLU_ALL, MLU_ALL, (1, "MLU", 256000, 0, 2),
                     id=f"{MLU_GO}/resourcecoresname,resourcecountname and resourcememoryname set to limits and request"),
        pytest.param(CAMBRICON, MLU_CORE, MLU_CORE, (1, "MLU", 0, 100, 2),
                     id=f"{MLU_GO}/resourcecoresname don't set to limits and requests"),
    ],
)  # fmt: skip
def test_generate_resource_requests(vendor, limits, requests, want):
    assert v2_9.request_of(vendor, limits, requests) == want

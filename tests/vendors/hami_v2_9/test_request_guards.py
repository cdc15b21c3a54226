"""The int32 request guards v2.10 added (``HamiRules.request_range_guards``; #2285, #2388, #2134,
#2601).

v2.9.0's own ``Test_GenerateResourceRequests`` cases of Iluvatar, Cambricon, Mthreads, Hygon,
MetaX sGPU and Ascend read as at v2.10.0 and are replayed under the 2.9 rules (``test_unchanged.py``), so they
run through v2.9's request reading too. v2.9.0 has no case past int32: the rows here are the cases
v2.10.0 added with its guards (named by their Go file, test and case at v2.10.0, where they give no
request), each with the request v2.9.0's ``GenerateResourceRequests`` makes of the same container,
read from its source at the tag: the value multiplied as a 64-bit int, "no memory" decided on it,
then narrowed to int32. Ascend's also round a memory asked without ``-core`` up to a vNPU template
(``ascend_memory_as_asked``): past the card, to no memory, which reads as the whole card.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.ascend import AscendVendor
from hami_sim.engine.vendors.cambricon import CambriconConfig, CambriconVendor
from hami_sim.engine.vendors.hygon import HygonConfig, HygonVendor
from hami_sim.engine.vendors.iluvatar import IluvatarConfig, IluvatarVendor
from hami_sim.engine.vendors.metax import MetaxSgpuVendor
from hami_sim.engine.vendors.mthreads import MthreadsVendor
from tests.vendors.hami_v2_10 import test_ascend as ascend
from tests.vendors.harness import EMPTY, for_release, request_of, usage

v2_9 = for_release("2.9")
ILUVATAR = IluvatarVendor(
    IluvatarConfig(
        "MR-V100", "iluvatar.ai/MR-V100-vgpu", "iluvatar.ai/MR-V100.vMem", "iluvatar.ai/MR-V100.vCore"
    )
)
ILU = {"iluvatar.ai/MR-V100-vgpu": "1"}
# the Go test's device config names the count cambricon.com/mlu
CAMBRICON = CambriconVendor(
    CambriconConfig("cambricon.com/mlu", "cambricon.com/mlu.smlu.vmemory", "cambricon.com/mlu.smlu.vcore")
)
MLU = {"cambricon.com/mlu": "1"}
MTH = {"mthreads.com/vgpu": "1", "mthreads.com/sgpu-core": "1"}
DCU = {"hygon.com/dcunum": "1"}
SGPU = {"metax-tech.com/sgpu": "1"}
B3 = AscendVendor(ascend.B3_OUT_OF_RANGE)  # 64 GiB NPUs, no vNPU template
B3_TIMES_10 = AscendVendor(ascend.with_factor(10, ascend.B3_OUT_OF_RANGE))
A910A_TIMES_10 = AscendVendor(ascend.with_factor(10))
WRAP = -(2**32)  # what int32 narrowing takes off a value just past MaxInt32


def case(go_file: str, test: str, name: str = "") -> str:
    return f"pkg/device/{go_file}::{test}/{name}" if name else f"pkg/device/{go_file}::{test}"


GUARDED = [
    pytest.param(ILUVATAR, {**ILU, "iluvatar.ai/MR-V100.vMem": "16Gi"}, (1, "MR-V100", 0, 0, 0),
                 id=case("iluvatar/device_test.go", "Test_GenerateResourceRequests",
                         "memory overflowing int32 is rejected, not truncated to zero")),
    pytest.param(ILUVATAR, {**ILU, "iluvatar.ai/MR-V100.vMem": "16.0Gi"}, (1, "MR-V100", 0, 0, 0),
                 id=case("iluvatar/device_test.go", "Test_GenerateResourceRequests",
                         "decimal-form memory request is rejected, not treated as zero")),
    pytest.param(CAMBRICON, {**MLU, "cambricon.com/mlu.smlu.vmemory": "16Gi"}, (1, "MLU", 0, 0, 100),
                 id=case("cambricon/device_test.go", "Test_GenerateResourceRequests",
                         "memory overflowing int32 is rejected, not truncated to zero")),
    pytest.param(CAMBRICON, {**MLU, "cambricon.com/mlu.smlu.vmemory": "16.0Gi"}, (1, "MLU", 0, 0, 100),
                 id=case("cambricon/device_test.go", "Test_GenerateResourceRequests",
                         "decimal-form memory request is rejected, not treated as zero")),
    pytest.param(MthreadsVendor(), {**MTH, "mthreads.com/sgpu-memory": "16Gi"}, (1, "Mthreads", 0, 0, 1),
                 id=case("mthreads/device_test.go", "Test_GenerateResourceRequests",
                         "memory overflowing int32 is rejected, not truncated to zero")),
    pytest.param(MthreadsVendor(), {**MTH, "mthreads.com/sgpu-memory": "16.0Gi"}, (1, "Mthreads", 0, 0, 1),
                 id=case("mthreads/device_test.go", "Test_GenerateResourceRequests",
                         "decimal-form memory request is rejected, not treated as zero")),
    pytest.param(HygonVendor(), {**DCU, "hygon.com/dcumem": "16Gi"}, (1, "DCU", 0, 0, 100),
                 id=case("hygon/device_test.go", "Test_GenerateResourceRequests",
                         "oversized dcu memory request exceeds int32 range")),
    # the count narrows to a negative int32: no request in both releases
    pytest.param(HygonVendor(), {"hygon.com/dcunum": "2200000000"}, EMPTY,
                 id=case("hygon/device_test.go", "Test_GenerateResourceRequests",
                         "oversized dcu count exceeds int32 range")),
    pytest.param(HygonVendor(), {**DCU, "hygon.com/dcucores": "-1"}, (1, "DCU", 0, 100, -1),
                 id=case("hygon/device_test.go", "Test_GenerateResourceRequests", "negative dcu cores")),
    pytest.param(HygonVendor(HygonConfig(memory_factor=1024)), {**DCU, "hygon.com/dcumem": "3000000"},
                 (1, "DCU", 3000000 * 1024 + WRAP, 0, 100),
                 id=case("hygon/device_test.go", "Test_GenerateResourceRequests_MemoryFactorOverflow")),
    pytest.param(MetaxSgpuVendor(), {**SGPU, "metax-tech.com/vmemory": "2100001"},
                 (1, "Metax-SGPU", 2100001 * 1024 + WRAP, 0, 100),
                 id=case("metax/sdevice_test.go", "TestGenerateResourceRequests",
                         "oversized memory request exceeds int32 range (no unit, pre-multiply guard)")),
    pytest.param(MetaxSgpuVendor(), {"metax-tech.com/sgpu": "2200000000"}, EMPTY,
                 id=case("metax/sdevice_test.go", "TestGenerateResourceRequests",
                         "oversized sgpu count exceeds int32 range")),
    pytest.param(MetaxSgpuVendor(), {**SGPU, "metax-tech.com/vcore": "2200000000"},
                 (1, "Metax-SGPU", 0, 100, 2200000000 + WRAP),
                 id=case("metax/sdevice_test.go", "TestGenerateResourceRequests",
                         "oversized vcore exceeds int32 range")),
    pytest.param(B3, ascend.lim("Ascend910B3", "1", "16Gi", "10"), (1, "Ascend910B3", 0, 0, 10),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "memory in bytes exceeds int32 on soft-partitioning path")),
    pytest.param(B3, ascend.lim("Ascend910B3", "1", "16Gi"), (1, "Ascend910B3", 0, 100, 0),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "memory in bytes exceeds int32 range on trim path")),
    pytest.param(B3, ascend.lim("Ascend910B3", "1", "-1m"), (1, "Ascend910B3", 0, 100, 0),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "negative fractional memory request")),
    pytest.param(B3, ascend.lim("Ascend910B3", "1", "-100"), (1, "Ascend910B3", 65536, 0, 0),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "negative whole memory request")),
    pytest.param(B3, ascend.lim("Ascend910B3", "2200000000"), EMPTY,
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "oversized device count exceeds int32 range")),
    pytest.param(B3, ascend.lim("Ascend910B3", "1", core="-1"), (1, "Ascend910B3", 0, 100, -1),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "negative core request")),
    pytest.param(B3, ascend.lim("Ascend910B3", "1", core="2200000000"), (1, "Ascend910B3", 0, 100, 2200000000 + WRAP),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_OutOfRangeValues",
                         "oversized core request exceeds int32 range")),
    pytest.param(B3_TIMES_10, ascend.lim("Ascend910B3", "1", "300000000", "10"),
                 (1, "Ascend910B3", 3000000000 + WRAP, 0, 10),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_MemoryFactorOverflow",
                         "scaled memory overflows on soft-partitioning path")),
    pytest.param(A910A_TIMES_10, ascend.lim("Ascend910A", "1", "300000000"), (1, "Ascend910A", 0, 100, 0),
                 id=case("ascend/device_test.go", "Test_GenerateResourceRequests_MemoryFactorOverflow",
                         "scaled memory overflows int32 on trim path")),
]  # fmt: skip


@pytest.mark.parametrize(("vendor", "limits", "v2_9_request"), GUARDED)
def test_v2_10_guarded_request_as_v2_9_reads_it(vendor, limits, v2_9_request):
    assert request_of(vendor, limits) == EMPTY  # v2.10.0's case: no request
    assert v2_9.request_of(vendor, limits) == v2_9_request


def test_v2_9_memory_past_int32_lands_on_a_full_card():
    """What a v2.9 cluster sees: 16Gi of Iluvatar memory wraps to a request of no memory, so a card
    whose memory is all used still takes the container; v2.10 gives the container no request."""
    full = [usage("ilu-0", type="MR-V100", count=100, totalmem=128, totalcore=100, used=1, usedmem=128)]
    request = v2_9.request_of(ILUVATAR, {**ILU, "iluvatar.ai/MR-V100.vMem": "16Gi"})
    outcome = v2_9.fit(ILUVATAR, full, request, {})
    assert outcome.ok and [d.uuid for d in outcome.devices] == ["ilu-0"]

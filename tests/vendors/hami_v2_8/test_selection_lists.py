"""v2.8.3's own UUID checks, one per backend (``Test_checkUUID`` of each ``pkg/device/<vendor>/device_test.go``),
and NVIDIA's ``Test_checkType``, under the 2.8 rules.

At v2.8.3 every backend wrote its own ``checkUUID`` (Enflame's walks the entries one by one instead
of splitting them into a list; the answer is the same): a present use list alone decides, its entries
as written; else a present nouse list must not name the device. hami-sim has one check, chosen by
the release (``uuid_check``, ``HamiRules.uuid_lists_both``): each backend's table runs against it
with that backend's annotation names. v2.8.3's MetaX GPU ``checkUUID`` always passes (hami-sim's
MetaX GPU Fit reads no list), Kunlunxin's is never called (``kunlun_uuid_selection``); MetaX sGPU
has no such test at v2.8.3. ``tests/vendors/test_uuid_lists.py`` runs the same rule through every
backend's Fit.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.hami_releases import rules_for
from hami_sim.engine.vendors import NvidiaVendor
from hami_sim.engine.vendors.base import uuid_check
from tests.vendors.harness import for_release, request, usage

V2_8 = rules_for("2.8")
KEYS = {
    "amd": ("amd.com/use-gpu-uuid", "amd.com/nouse-gpu-uuid"),
    "ascend": ("hami.io/use-Ascend910A-uuid", "hami.io/no-use-Ascend910A-uuid"),
    "awsneuron": ("aws.amazon.com/use-neuron-uuid", "aws.amazon.com/nouse-neuron-uuid"),
    "cambricon": ("cambricon.com/use-gpuuuid", "cambricon.com/nouse-gpuuuid"),
    "enflame": ("enflame.com/use-gpuuuid", "enflame.com/nouse-gpuuuid"),
    "hygon": ("hygon.com/use-gpuuuid", "hygon.com/nouse-gpuuuid"),
    "iluvatar": ("hami.io/use-MR-V100-uuid", "hami.io/no-use-MR-V100-uuid"),
    "mthreads": ("mthreads.ai/use-gpuuuid", "mthreads.ai/nouse-gpuuuid"),
    "nvidia": ("nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid"),
}


@pytest.mark.parametrize(
    ("backend", "lists", "dev_id", "want"),
    [
        pytest.param("amd", {}, "", True, id="amd/Test_checkUUID/no annos"),
        pytest.param("amd", {"use": "test1"}, "test1", True, id="amd/Test_checkUUID/use id the same as device id"),
        pytest.param("amd", {"use": "test1"}, "test2", False, id="amd/Test_checkUUID/use id the different from device id"),
        pytest.param("amd", {"nouse": "test1"}, "test1", False, id="amd/Test_checkUUID/no use id the same as device id"),
        pytest.param("amd", {"nouse": "test1"}, "test2", True, id="amd/Test_checkUUID/no use id the different from device id"),
        pytest.param("ascend", {}, "", True, id="ascend/Test_checkUUID/don't set GPUUseUUID,GPUNoUseUUID and annotation"),
        pytest.param("ascend", {"use": "test123,111"}, "test123", True, id="ascend/Test_checkUUID/set GPUUseUUID,don't set GPUNoUseUUID,annotation and device match"),
        pytest.param("ascend", {"nouse": "test123,222"}, "test123", False, id="ascend/Test_checkUUID/don't set GPUUseUUID, set GPUNoUseUUID,annotation and device match"),
        pytest.param("ascend", {"use": "test123,222"}, "test456", False, id="ascend/Test_checkUUID/set GPUUseUUID, don't set GPUNoUseUUID,annotation and device not match"),
        pytest.param("ascend", {"nouse": "test123,222"}, "test456", True, id="ascend/Test_checkUUID/don't set GPUUseUUID, set GPUNoUseUUID,annotation and device not match"),
        pytest.param("awsneuron", {}, "", True, id="awsneuron/Test_checkUUID/no annos"),
        pytest.param("awsneuron", {"use": "test1"}, "test1", True, id="awsneuron/Test_checkUUID/use id the same as device id"),
        pytest.param("awsneuron", {"use": "test1"}, "test2", False, id="awsneuron/Test_checkUUID/use id the different from device id"),
        pytest.param("awsneuron", {"nouse": "test1"}, "test1", False, id="awsneuron/Test_checkUUID/no use id the same as device id"),
        pytest.param("awsneuron", {"nouse": "test1"}, "test2", True, id="awsneuron/Test_checkUUID/no use id the different from device id"),
        pytest.param("cambricon", {}, "", True, id="cambricon/Test_checkUUID/don't set UserUUID,NoUserUUID and annotation"),
        pytest.param("cambricon", {"use": "test123,111"}, "test123", True, id="cambricon/Test_checkUUID/set UserUUID and annotation, don't set NoUserUUID"),
        pytest.param("cambricon", {"nouse": "test123,111"}, "test123", False, id="cambricon/Test_checkUUID/don't set UserUUID, set NoUserUUID and annotation"),
        pytest.param("cambricon", {"nouse": "test123,111"}, "test456", True, id="cambricon/Test_checkUUID/set UserUUID, don't set NoUserUUID,annotation and device not match"),
        pytest.param("cambricon", {"use": "test123,111"}, "test456", False, id="cambricon/Test_checkUUID/don't set UserUUID,set NoUserUUID,annotation and device not match"),
        pytest.param("enflame", {"use": "test1"}, "test1", True, id="enflame/Test_checkUUID/useid is same as the device id"),
        pytest.param("enflame", {"use": "test2"}, "test1", False, id="enflame/Test_checkUUID/useid is different from the device id"),
        pytest.param("enflame", {}, "test3", True, id="enflame/Test_checkUUID/no annos"),
        pytest.param("enflame", {"nouse": "test1"}, "test1", False, id="enflame/Test_checkUUID/nouseid is same as the device id"),
        pytest.param("enflame", {"nouse": "test1"}, "test2", True, id="enflame/Test_checkUUID/nouseid is different from the device id"),
        pytest.param("hygon", {"use": "123"}, "123", True, id="hygon/Test_checkUUID/device id the same as the dcu in use uuid"),
        pytest.param("hygon", {"use": "123"}, "456", False, id="hygon/Test_checkUUID/device id the different from the dcu in use uuid"),
        pytest.param("hygon", {}, "456", True, id="hygon/Test_checkUUID/no dcu in use uuid annos"),
        pytest.param("hygon", {"nouse": "123"}, "123", False, id="hygon/Test_checkUUID/device id the same as the dcu no use uuid"),
        pytest.param("hygon", {"nouse": "123"}, "456", True, id="hygon/Test_checkUUID/device id the different from the dcu no use uuid"),
        pytest.param("iluvatar", {"use": "test1"}, "test1", True, id="iluvatar/Test_checkUUID/useid is same as the device id"),
        pytest.param("iluvatar", {"use": "test2"}, "test1", False, id="iluvatar/Test_checkUUID/useid is different from the device id"),
        pytest.param("iluvatar", {}, "test3", True, id="iluvatar/Test_checkUUID/no annos"),
        pytest.param("iluvatar", {"nouse": "test1"}, "test1", False, id="iluvatar/Test_checkUUID/nouseid is same as the device id"),
        pytest.param("iluvatar", {"nouse": "test1"}, "test2", True, id="iluvatar/Test_checkUUID/nouseid is different from the device id"),
        pytest.param("mthreads", {}, "", True, id="mthreads/Test_checkUUID/no annos"),
        pytest.param("mthreads", {"use": "test1"}, "test1", True, id="mthreads/Test_checkUUID/use id the same as device id"),
        pytest.param("mthreads", {"use": "test1"}, "test2", False, id="mthreads/Test_checkUUID/use id the different from device id"),
        pytest.param("mthreads", {"nouse": "test1"}, "test1", False, id="mthreads/Test_checkUUID/no use id the same as device id"),
        pytest.param("mthreads", {"nouse": "test1"}, "test2", True, id="mthreads/Test_checkUUID/no use id the different from device id"),
        pytest.param("nvidia", {}, "", True, id="nvidia/Test_checkUUID/don't set GPUUseUUID and GPUNoUseUUID annotation"),
        pytest.param("nvidia", {"use": "abc,123"}, "abc", True, id="nvidia/Test_checkUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device match"),
        pytest.param("nvidia", {"use": "abc,123"}, "1abc", False, id="nvidia/Test_checkUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device don't match"),
        pytest.param("nvidia", {"nouse": "abc,123"}, "abc", False, id="nvidia/Test_checkUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device match"),
        pytest.param("nvidia", {"nouse": "abc,123"}, "1abc", True, id="nvidia/Test_checkUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device  don't match"),
    ],
)  # fmt: skip
def test_check_uuid(backend, lists, dev_id, want):
    use_key, nouse_key = KEYS[backend]
    annotations = {use_key if which == "use" else nouse_key: value for which, value in lists.items()}
    assert uuid_check(V2_8)(annotations, dev_id, use_key, nouse_key) is want


USE_TYPE, NOUSE_TYPE = "nvidia.com/use-gputype", "nvidia.com/nouse-gputype"


@pytest.mark.parametrize(
    ("annotations", "card_type", "ok"),
    [
        pytest.param(
            {USE_TYPE: "A10"}, "NVIDIA A100", True,
            id="nvidia/Test_checkType/use set GPUInUse don't set GPUNoUse annotation,device match",
        ),
        pytest.param(
            {USE_TYPE: "A10", NOUSE_TYPE: "A100"}, "NVIDIA A100", False,
            id="nvidia/Test_checkType/use set GPUInUse set GPUNoUse annotation,device don't match",
        ),
        pytest.param(
            {USE_TYPE: "A10", NOUSE_TYPE: "A100"}, "NVIDIA A10", True,
            id="nvidia/Test_checkType/use set GPUInUse set GPUNoUse annotation,device match",
        ),
    ],
)  # fmt: skip
def test_nvidia_check_type(annotations, card_type, ok):
    """Through Fit: a card the type lists refuse is one ``CardTypeMismatch``."""
    gpu = usage("d", type=card_type, count=10, totalmem=1000, totalcore=100)
    out = for_release("2.8").fit(NvidiaVendor(), [gpu], request("NVIDIA", 1, 100), annotations)
    assert out.ok is ok
    assert out.reason == ("" if ok else "1/1 CardTypeMismatch")

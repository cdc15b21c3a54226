"""The UUID and card-type lists under v2.9.0's rules (``uuid_lists_both``, ``type_lists_trimmed`` off).

v2.9.0's ``pkg/device/devices_test.go`` ``TestCheckUUID`` (its four cases beyond the unchanged
first one, which ``test_unchanged.py`` replays) runs as written. v2.9.0 has no test of the cases
v2.10.0 added with the change (``TestCheckUUID``'s both-lists, trimming and blank-list cases,
``TestCheckType``, Hygon's blank ``Test_checkDCUtype`` cases, ``TestCheckGPUtype_EmptyAnnotation``):
they are v2.10.0's cases with the answer v2.9.0's source gives (``device.CheckUUID``: the use list
alone when present, entries as written; NVIDIA's ``checkGPUtype`` and Hygon's ``checkDCUtype``:
entries as written, an empty one a substring of every type, Hygon reading the use list alone).
Where the answer differs from v2.10.0's, the id says ``(v2.9)``.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.hami_releases import rules_for
from hami_sim.engine.vendors import HygonVendor, NvidiaVendor
from hami_sim.engine.vendors.base import type_allows, uuid_check
from tests.vendors.harness import for_release, request, usage

V2_9 = rules_for("2.9")
H = for_release("2.9")
USE_UUID, NOUSE_UUID = "hami.io/gpu-use-uuid", "hami.io/gpu-no-use-uuid"
USE_TYPE, NOUSE_TYPE = "example.com/use-gputype", "example.com/nouse-gputype"


@pytest.mark.parametrize(
    ("annotations", "dev_id", "want"),
    [
        pytest.param(
            {USE_UUID: "abc,123"},
            "abc",
            True,
            id="TestCheckUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device match",
        ),
        pytest.param(
            {USE_UUID: "abc,123"},
            "1abc",
            False,
            id="TestCheckUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device don't match",
        ),
        pytest.param(
            {NOUSE_UUID: "abc,123"},
            "abc",
            False,
            id="TestCheckUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device match",
        ),
        pytest.param(
            {NOUSE_UUID: "abc,123"},
            "1abc",
            True,
            id="TestCheckUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device  don't match",
        ),
        # v2.10.0's cases, with v2.9.0's answers
        pytest.param({USE_UUID: "abc,123", NOUSE_UUID: "abc"}, "abc", True, id="v2.10 TestCheckUUID/in both (v2.9)"),
        pytest.param({USE_UUID: "abc,123", NOUSE_UUID: "456"}, "abc", True, id="v2.10 TestCheckUUID/in use, not nouse"),
        pytest.param({USE_UUID: " abc , 123 "}, "abc", False, id="v2.10 TestCheckUUID/spaces around uuids (v2.9)"),
        pytest.param({USE_UUID: ""}, "abc", False, id="v2.10 TestCheckUUID/empty GPUUseUUID (v2.9)"),
        pytest.param({USE_UUID: "   "}, "abc", False, id="v2.10 TestCheckUUID/whitespace-only GPUUseUUID (v2.9)"),
        pytest.param({NOUSE_UUID: ""}, "abc", True, id="v2.10 TestCheckUUID/empty GPUNoUseUUID"),
    ],
)  # fmt: skip
def test_check_uuid(annotations, dev_id, want):
    assert uuid_check(V2_9)(annotations, dev_id, USE_UUID, NOUSE_UUID) is want


@pytest.mark.parametrize(
    ("annotations", "card_type", "want"),
    [
        pytest.param({}, "NVIDIA-A100", True, id="v2.10 TestCheckType/no annotation is no constraint"),
        pytest.param({USE_TYPE: "A100,V100"}, "NVIDIA-A100", True, id="v2.10 TestCheckType/use list matches"),
        pytest.param({USE_TYPE: "V100"}, "NVIDIA-A100", False, id="v2.10 TestCheckType/use list does not match"),
        pytest.param({NOUSE_TYPE: "A100"}, "NVIDIA-A100", False, id="v2.10 TestCheckType/nouse list matches"),
        pytest.param({NOUSE_TYPE: "V100"}, "NVIDIA-A100", True, id="v2.10 TestCheckType/nouse does not match"),
        pytest.param({USE_TYPE: ""}, "NVIDIA-A100", True, id="v2.10 TestCheckType/empty use value"),
        pytest.param({NOUSE_TYPE: "   "}, "NVIDIA-A100", True, id="v2.10 TestCheckType/whitespace-only nouse"),
        pytest.param(
            {USE_TYPE: "A100", NOUSE_TYPE: "A100"}, "NVIDIA-A100", False, id="v2.10 TestCheckType/use and nouse"
        ),
        pytest.param({NOUSE_TYPE: "V100,"}, "NVIDIA-A100", False, id="v2.10 TestCheckType/nouse trailing comma (v2.9)"),
        pytest.param({NOUSE_TYPE: ",V100"}, "NVIDIA-A100", False, id="v2.10 TestCheckType/nouse leading comma (v2.9)"),
        pytest.param({USE_TYPE: "V100,"}, "NVIDIA-A100", True, id="v2.10 TestCheckType/use trailing comma (v2.9)"),
    ],
)  # fmt: skip
def test_check_type(annotations, card_type, want):
    """NVIDIA's ``checkGPUtype`` at v2.9.0 (both lists read, entries as written)."""
    assert type_allows(V2_9, annotations, card_type, USE_TYPE, NOUSE_TYPE) is want


GPU_USE, GPU_NOUSE = "nvidia.com/use-gputype", "nvidia.com/nouse-gputype"


@pytest.mark.parametrize(
    ("annotations", "ok"),
    [
        pytest.param({GPU_USE: ""}, True, id="v2.10 TestCheckGPUtype_EmptyAnnotation/use empty"),
        pytest.param({GPU_USE: "   "}, False, id="v2.10 TestCheckGPUtype_EmptyAnnotation/use blank (v2.9)"),
        pytest.param({GPU_NOUSE: ""}, False, id="v2.10 TestCheckGPUtype_EmptyAnnotation/nouse empty (v2.9)"),
        pytest.param({GPU_NOUSE: "   "}, True, id="v2.10 TestCheckGPUtype_EmptyAnnotation/nouse blank"),
    ],
)
def test_nvidia_type_lists_through_fit(annotations, ok):
    gpu = usage("d", type="NVIDIA-A100", count=10, totalmem=1000, totalcore=100)
    out = H.fit(NvidiaVendor(), [gpu], request("NVIDIA", 1, 100), annotations)
    assert out.ok is ok
    assert out.reason == ("" if ok else "1/1 CardTypeMismatch")


DCU_USE, DCU_NOUSE = "hygon.com/use-dcutype", "hygon.com/nouse-dcutype"


@pytest.mark.parametrize(
    ("annotations", "card_type", "ok"),
    [
        pytest.param({DCU_USE: ""}, "dcu", True, id="v2.10 Test_checkDCUtype/empty use type annotation"),
        pytest.param({DCU_NOUSE: ""}, "dcu", False, id="v2.10 Test_checkDCUtype/empty nouse type annotation (v2.9)"),
        pytest.param({DCU_NOUSE: "   "}, "dcu", True, id="v2.10 Test_checkDCUtype/whitespace-only nouse"),
        # v2.9.0's checkDCUtype returns on a present use list (no Go case sets both lists)
        pytest.param({DCU_USE: "dcu", DCU_NOUSE: "dcu"}, "dcu", True, id="use and nouse name the card (v2.9)"),
    ],
)  # fmt: skip
def test_hygon_type_lists_through_fit(annotations, card_type, ok):
    dcu = usage("dev-0", type=card_type, count=100, totalcore=100, totalmem=1280)
    out = H.fit(HygonVendor(), [dcu], (1, "DCU", 0, 100, 0), annotations)
    assert out.ok is ok
    assert out.reason == ("" if ok else "1/1 CardTypeMismatch")

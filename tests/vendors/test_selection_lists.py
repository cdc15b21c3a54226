"""HAMi's own tests of a pod's UUID and card-type lists, under the release each was written for.

The rule changed in v2.10 (``HamiRules.uuid_lists_both``, ``type_lists_trimmed``): v2.10 reads the
use and nouse lists alike, trims entries and takes a blank list as no constraint; v2.9 and v2.8 let
a present use list decide alone, its entries as written. hami-sim has one check per list kind,
chosen by the release (``uuid_check(release)``, ``type_allows(release, ...)``), so every table
below is keyed by ``(release, source)``: the HAMi release whose rule answers it and the Go test
file it ports (``devices``: ``pkg/device/devices_test.go``; a vendor: its
``pkg/device/<vendor>/device_test.go``), which also gives the annotation names. A case is named
``<release>/<source>/<Go test>/<case>``.

- v2.8.3: every backend wrote its own ``checkUUID`` (Enflame's walks the entries one by one instead
  of splitting them into a list; the answer is the same), each with its ``Test_checkUUID``, run
  against the shared check with that backend's annotation names. v2.8.3's MetaX GPU ``checkUUID``
  always passes (hami-sim's MetaX GPU Fit reads no list), Kunlunxin's is never called
  (``kunlun_uuid_selection``); MetaX sGPU has no such test at v2.8.3. NVIDIA's ``Test_checkType``
  runs through Fit.
- v2.9.0: ``TestCheckUUID`` as written (its first case reads as at v2.10.0). v2.9.0 has no test of
  the cases v2.10.0 added with the change (``TestCheckUUID``'s both-lists, trimming and blank-list
  cases, ``TestCheckType``, Hygon's blank ``Test_checkDCUtype`` cases,
  ``TestCheckGPUtype_EmptyAnnotation``): they are v2.10.0's cases with the answer v2.9.0's source
  gives (``device.CheckUUID``: the use list alone when present, entries as written; NVIDIA's
  ``checkGPUtype`` and Hygon's ``checkDCUtype``: entries as written, an empty one a substring of
  every type, Hygon reading the use list alone). Where the answer differs from v2.10.0's, the id
  says ``(v2.9)``.
- v2.10.0: ``TestCheckUUID`` and ``TestCheckType`` of ``devices_test.go``. Its vendors' type-list
  cases through Fit stay with the rest of their Go file (``hami_v2_10/test_nvidia.py``,
  ``test_hygon.py``).

``tests/vendors/test_uuid_lists.py`` runs the UUID rule through every backend's Fit.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import HygonVendor, NvidiaVendor
from hami_sim.engine.vendors.base import type_allows, uuid_check
from tests.vendors.harness import for_release, request, rules_of, usage

# (use key, nouse key) of the UUID lists, by the Go test file a table ports
UUID_KEYS = {
    "devices": ("hami.io/gpu-use-uuid", "hami.io/gpu-no-use-uuid"),
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
# (use key, nouse key) of the card-type lists
TYPE_KEYS = {
    "devices": ("example.com/use-gputype", "example.com/nouse-gputype"),
    "nvidia": ("nvidia.com/use-gputype", "nvidia.com/nouse-gputype"),
    "hygon": ("hygon.com/use-dcutype", "hygon.com/nouse-dcutype"),
}

# A row: (lists as {"use": value, "nouse": value}, device ID or card type, answer, Go test/case).

# v2.8.3's AMD, AWS Neuron and MThreads ``Test_checkUUID``: the same five cases
V2_8_USE_ID = [
    ({}, "", True, "Test_checkUUID/no annos"),
    ({"use": "test1"}, "test1", True, "Test_checkUUID/use id the same as device id"),
    ({"use": "test1"}, "test2", False, "Test_checkUUID/use id the different from device id"),
    ({"nouse": "test1"}, "test1", False, "Test_checkUUID/no use id the same as device id"),
    ({"nouse": "test1"}, "test2", True, "Test_checkUUID/no use id the different from device id"),
]
# v2.8.3's Enflame and Iluvatar ``Test_checkUUID``: the same five cases
V2_8_USEID = [
    ({"use": "test1"}, "test1", True, "Test_checkUUID/useid is same as the device id"),
    ({"use": "test2"}, "test1", False, "Test_checkUUID/useid is different from the device id"),
    ({}, "test3", True, "Test_checkUUID/no annos"),
    ({"nouse": "test1"}, "test1", False, "Test_checkUUID/nouseid is same as the device id"),
    ({"nouse": "test1"}, "test2", True, "Test_checkUUID/nouseid is different from the device id"),
]

UUID_TABLES = {
    ("2.8", "amd"): V2_8_USE_ID,
    ("2.8", "ascend"): [
        ({}, "", True, "Test_checkUUID/don't set GPUUseUUID,GPUNoUseUUID and annotation"),
        ({"use": "test123,111"}, "test123", True, "Test_checkUUID/set GPUUseUUID,don't set GPUNoUseUUID,annotation and device match"),
        ({"nouse": "test123,222"}, "test123", False, "Test_checkUUID/don't set GPUUseUUID, set GPUNoUseUUID,annotation and device match"),
        ({"use": "test123,222"}, "test456", False, "Test_checkUUID/set GPUUseUUID, don't set GPUNoUseUUID,annotation and device not match"),
        ({"nouse": "test123,222"}, "test456", True, "Test_checkUUID/don't set GPUUseUUID, set GPUNoUseUUID,annotation and device not match"),
    ],
    ("2.8", "awsneuron"): V2_8_USE_ID,
    ("2.8", "cambricon"): [
        ({}, "", True, "Test_checkUUID/don't set UserUUID,NoUserUUID and annotation"),
        ({"use": "test123,111"}, "test123", True, "Test_checkUUID/set UserUUID and annotation, don't set NoUserUUID"),
        ({"nouse": "test123,111"}, "test123", False, "Test_checkUUID/don't set UserUUID, set NoUserUUID and annotation"),
        ({"nouse": "test123,111"}, "test456", True, "Test_checkUUID/set UserUUID, don't set NoUserUUID,annotation and device not match"),
        ({"use": "test123,111"}, "test456", False, "Test_checkUUID/don't set UserUUID,set NoUserUUID,annotation and device not match"),
    ],
    ("2.8", "enflame"): V2_8_USEID,
    ("2.8", "hygon"): [
        ({"use": "123"}, "123", True, "Test_checkUUID/device id the same as the dcu in use uuid"),
        ({"use": "123"}, "456", False, "Test_checkUUID/device id the different from the dcu in use uuid"),
        ({}, "456", True, "Test_checkUUID/no dcu in use uuid annos"),
        ({"nouse": "123"}, "123", False, "Test_checkUUID/device id the same as the dcu no use uuid"),
        ({"nouse": "123"}, "456", True, "Test_checkUUID/device id the different from the dcu no use uuid"),
    ],
    ("2.8", "iluvatar"): V2_8_USEID,
    ("2.8", "mthreads"): V2_8_USE_ID,
    ("2.8", "nvidia"): [
        ({}, "", True, "Test_checkUUID/don't set GPUUseUUID and GPUNoUseUUID annotation"),
        ({"use": "abc,123"}, "abc", True, "Test_checkUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device match"),
        ({"use": "abc,123"}, "1abc", False, "Test_checkUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device don't match"),
        ({"nouse": "abc,123"}, "abc", False, "Test_checkUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device match"),
        ({"nouse": "abc,123"}, "1abc", True, "Test_checkUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device  don't match"),
    ],
    ("2.9", "devices"): [
        ({}, "abc", True, "TestCheckUUID/don't set GPUUseUUID and GPUNoUseUUID annotation"),
        ({"use": "abc,123"}, "abc", True, "TestCheckUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device match"),
        ({"use": "abc,123"}, "1abc", False, "TestCheckUUID/use set GPUUseUUID don't set GPUNoUseUUID annotation,device don't match"),
        ({"nouse": "abc,123"}, "abc", False, "TestCheckUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device match"),
        ({"nouse": "abc,123"}, "1abc", True, "TestCheckUUID/use don't set GPUUseUUID set GPUNoUseUUID annotation,device  don't match"),
        # v2.10.0's cases, with v2.9.0's answers
        ({"use": "abc,123", "nouse": "abc"}, "abc", True, "v2.10 TestCheckUUID/in both (v2.9)"),
        ({"use": "abc,123", "nouse": "456"}, "abc", True, "v2.10 TestCheckUUID/in use, not nouse"),
        ({"use": " abc , 123 "}, "abc", False, "v2.10 TestCheckUUID/spaces around uuids (v2.9)"),
        ({"use": ""}, "abc", False, "v2.10 TestCheckUUID/empty GPUUseUUID (v2.9)"),
        ({"use": "   "}, "abc", False, "v2.10 TestCheckUUID/whitespace-only GPUUseUUID (v2.9)"),
        ({"nouse": ""}, "abc", True, "v2.10 TestCheckUUID/empty GPUNoUseUUID"),
    ],
    ("2.10", "devices"): [
        ({}, "abc", True, "TestCheckUUID/don't set GPUUseUUID and GPUNoUseUUID annotation"),
        ({"use": "abc,123"}, "abc", True, "TestCheckUUID/use set, device match"),
        ({"use": "abc,123"}, "1abc", False, "TestCheckUUID/use set, device don't match"),
        ({"nouse": "abc,123"}, "abc", False, "TestCheckUUID/nouse set, device match"),
        ({"nouse": "abc,123"}, "1abc", True, "TestCheckUUID/nouse set, device don't match"),
        ({"use": "abc,123", "nouse": "abc"}, "abc", False, "TestCheckUUID/in use list and in nouse list"),
        ({"use": "abc,123", "nouse": "456"}, "abc", True, "TestCheckUUID/in use list, not in nouse list"),
        ({"use": " abc , 123 "}, "abc", True, "TestCheckUUID/use list with spaces around uuids"),
        ({"use": ""}, "abc", True, "TestCheckUUID/empty GPUUseUUID annotation"),
        ({"use": "   "}, "abc", True, "TestCheckUUID/whitespace-only GPUUseUUID annotation"),
        ({"nouse": ""}, "abc", True, "TestCheckUUID/empty GPUNoUseUUID annotation"),
    ],
}  # fmt: skip

# v2.10.0's ``devices_test.go`` ``TestCheckType``; under v2.9 the answer of NVIDIA's ``checkGPUtype`` at
# v2.9.0 (both lists read, entries as written)
TYPE_TABLES = {
    ("2.9", "devices"): [
        ({}, "NVIDIA-A100", True, "v2.10 TestCheckType/no annotation is no constraint"),
        ({"use": "A100,V100"}, "NVIDIA-A100", True, "v2.10 TestCheckType/use list matches"),
        ({"use": "V100"}, "NVIDIA-A100", False, "v2.10 TestCheckType/use list does not match"),
        ({"nouse": "A100"}, "NVIDIA-A100", False, "v2.10 TestCheckType/nouse list matches"),
        ({"nouse": "V100"}, "NVIDIA-A100", True, "v2.10 TestCheckType/nouse does not match"),
        ({"use": ""}, "NVIDIA-A100", True, "v2.10 TestCheckType/empty use value"),
        ({"nouse": "   "}, "NVIDIA-A100", True, "v2.10 TestCheckType/whitespace-only nouse"),
        ({"use": "A100", "nouse": "A100"}, "NVIDIA-A100", False, "v2.10 TestCheckType/use and nouse"),
        ({"nouse": "V100,"}, "NVIDIA-A100", False, "v2.10 TestCheckType/nouse trailing comma (v2.9)"),
        ({"nouse": ",V100"}, "NVIDIA-A100", False, "v2.10 TestCheckType/nouse leading comma (v2.9)"),
        ({"use": "V100,"}, "NVIDIA-A100", True, "v2.10 TestCheckType/use trailing comma (v2.9)"),
    ],
    ("2.10", "devices"): [
        ({}, "NVIDIA-A100", True, "TestCheckType/no annotation is no constraint"),
        ({"use": "A100,V100"}, "NVIDIA-A100", True, "TestCheckType/use list matches by substring"),
        ({"use": "V100"}, "NVIDIA-A100", False, "TestCheckType/use list does not match"),
        ({"nouse": "A100"}, "NVIDIA-A100", False, "TestCheckType/nouse list matches excludes"),
        ({"nouse": "V100"}, "NVIDIA-A100", True, "TestCheckType/nouse list does not match keeps"),
        ({"use": ""}, "NVIDIA-A100", True, "TestCheckType/empty use value is no constraint"),
        ({"nouse": "   "}, "NVIDIA-A100", True, "TestCheckType/whitespace-only nouse excludes nothing"),
        ({"use": "A100", "nouse": "A100"}, "NVIDIA-A100", False, "TestCheckType/use satisfied and nouse matches still excludes"),
        ({"nouse": "V100,"}, "NVIDIA-A100", True, "TestCheckType/nouse with trailing comma"),
        ({"nouse": ",V100"}, "NVIDIA-A100", True, "TestCheckType/nouse with leading comma"),
        ({"use": "V100,"}, "NVIDIA-A100", False, "TestCheckType/use with trailing comma"),
    ],
}  # fmt: skip

# A vendor's type lists through its Fit: a card the lists refuse is one ``CardTypeMismatch``
TYPE_FIT_TABLES = {
    ("2.8", "nvidia"): [
        ({"use": "A10"}, "NVIDIA A100", True, "Test_checkType/use set GPUInUse don't set GPUNoUse annotation,device match"),
        ({"use": "A10", "nouse": "A100"}, "NVIDIA A100", False, "Test_checkType/use set GPUInUse set GPUNoUse annotation,device don't match"),
        ({"use": "A10", "nouse": "A100"}, "NVIDIA A10", True, "Test_checkType/use set GPUInUse set GPUNoUse annotation,device match"),
    ],
    ("2.9", "nvidia"): [
        ({"use": ""}, "NVIDIA-A100", True, "v2.10 TestCheckGPUtype_EmptyAnnotation/use empty"),
        ({"use": "   "}, "NVIDIA-A100", False, "v2.10 TestCheckGPUtype_EmptyAnnotation/use blank (v2.9)"),
        ({"nouse": ""}, "NVIDIA-A100", False, "v2.10 TestCheckGPUtype_EmptyAnnotation/nouse empty (v2.9)"),
        ({"nouse": "   "}, "NVIDIA-A100", True, "v2.10 TestCheckGPUtype_EmptyAnnotation/nouse blank"),
    ],
    ("2.9", "hygon"): [
        ({"use": ""}, "dcu", True, "v2.10 Test_checkDCUtype/empty use type annotation"),
        ({"nouse": ""}, "dcu", False, "v2.10 Test_checkDCUtype/empty nouse type annotation (v2.9)"),
        ({"nouse": "   "}, "dcu", True, "v2.10 Test_checkDCUtype/whitespace-only nouse"),
        # v2.9.0's checkDCUtype returns on a present use list (no Go case sets both lists)
        ({"use": "dcu", "nouse": "dcu"}, "dcu", True, "use and nouse name the card (v2.9)"),
    ],
}  # fmt: skip

# A vendor's Fit setup for its type-list cases: (vendor, device fields but the type, request)
FIT_SETUP = {
    "nvidia": (NvidiaVendor(), ("d", {"count": 10, "totalmem": 1000, "totalcore": 100}), request("NVIDIA", 1, 100)),
    "hygon": (HygonVendor(), ("dev-0", {"count": 100, "totalcore": 100, "totalmem": 1280}), (1, "DCU", 0, 100, 0)),
}  # fmt: skip


def _annotations(lists: dict[str, str], keys: tuple[str, str]) -> dict[str, str]:
    """A row's ``{"use": ..., "nouse": ...}`` under the source's annotation names."""
    use_key, nouse_key = keys
    return {use_key if which == "use" else nouse_key: value for which, value in lists.items()}


def _cases(tables: dict, keys_by_source: dict) -> list:
    """One ``pytest.param(release, source, annotations, subject, want)`` per row of ``tables``."""
    return [
        pytest.param(
            release, source, _annotations(lists, keys_by_source[source]), subject, want,
            id=f"{release}/{source}/{case}",
        )
        for (release, source), rows in tables.items()
        for lists, subject, want, case in rows
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("release", "source", "annotations", "dev_id", "want"), _cases(UUID_TABLES, UUID_KEYS)
)
def test_check_uuid(release, source, annotations, dev_id, want):
    use_key, nouse_key = UUID_KEYS[source]
    assert uuid_check(rules_of(release))(annotations, dev_id, use_key, nouse_key) is want


@pytest.mark.parametrize(
    ("release", "source", "annotations", "card_type", "want"), _cases(TYPE_TABLES, TYPE_KEYS)
)
def test_check_type(release, source, annotations, card_type, want):
    use_key, nouse_key = TYPE_KEYS[source]
    assert type_allows(rules_of(release), annotations, card_type, use_key, nouse_key) is want


@pytest.mark.parametrize(
    ("release", "vendor", "annotations", "card_type", "ok"), _cases(TYPE_FIT_TABLES, TYPE_KEYS)
)
def test_type_lists_through_fit(release, vendor, annotations, card_type, ok):
    backend, (dev_id, fields), ask = FIT_SETUP[vendor]
    out = for_release(release).fit(backend, [usage(dev_id, type=card_type, **fields)], ask, annotations)
    assert out.ok is ok
    assert out.reason == ("" if ok else "1/1 CardTypeMismatch")

"""Every backend's UUID lists under each HAMi release (``HamiRules.uuid_lists_both``).

v2.10 reads a pod's use and nouse UUID lists alike for every backend: both apply, entries are
trimmed and a blank list is no constraint. v2.9 and v2.8 let a present use list decide alone (the
nouse list unread), matched its entries as written and took an empty use list as naming no device.
Each case is one container asking one device of a fresh two-device node (``D-0``, ``D-1``), so the
answer (fits or not) does not depend on which device a walk tries first. Kunlunxin reads no list
before v2.10 (``kunlun_uuid_selection``).
"""

from __future__ import annotations

import pytest

from tests.vendors import harness as h
from tests.vendors.helpers import BY_WORD

NODE = ("D-0", "D-1")

# (backend, device type, request type per release or one for all, use key, nouse key, releases)
BACKENDS = [
    ("NVIDIA", "NVIDIA-A10", "NVIDIA", "nvidia.com/use-gpuuuid", "nvidia.com/nouse-gpuuuid", ("2.8", "2.9", "2.10")),
    ("MLU", "MLU", "MLU", "cambricon.com/use-gpuuuid", "cambricon.com/nouse-gpuuuid", ("2.8", "2.9", "2.10")),
    ("DCU", "DCU", "DCU", "hygon.com/use-gpuuuid", "hygon.com/nouse-gpuuuid", ("2.8", "2.9", "2.10")),
    ("Mthreads", "Mthreads", "Mthreads", "mthreads.ai/use-gpuuuid", "mthreads.ai/nouse-gpuuuid", ("2.8", "2.9", "2.10")),
    ("Metax-SGPU", "Metax-SGPU", "Metax-SGPU", "metax-tech.com/use-gpuuuid", "metax-tech.com/nouse-gpuuuid", ("2.8", "2.9", "2.10")),
    ("AWSNeuron", "AWSNeuron", "AWSNeuron", "aws.amazon.com/use-neuron-uuid", "aws.amazon.com/nouse-neuron-uuid", ("2.8", "2.9", "2.10")),
    ("Ascend910A", "Ascend910A", "Ascend910A", "hami.io/use-Ascend910A-uuid", "hami.io/no-use-Ascend910A-uuid", ("2.8", "2.9", "2.10")),
    ("MR-V100", "MR-V100", "MR-V100", "hami.io/use-MR-V100-uuid", "hami.io/no-use-MR-V100-uuid", ("2.8", "2.9", "2.10")),
    # AMD: whole MI300X cards before v2.10, vGPU slices from v2.10 (amd_vgpu)
    ("AMD", "AMDGPU", "AMDGPU", "amd.com/use-gpu-uuid", "amd.com/nouse-gpu-uuid", ("2.8", "2.9")),
    ("AMD", "AMD-MI300X", "AMD", "amd.com/use-gpu-uuid", "amd.com/nouse-gpu-uuid", ("2.10",)),
    # Enflame: GCUs shared by percentage before v2.10 (its own list check at v2.8.3, the shared one at v2.9.0)
    ("Enflame", "Enflame", "Enflame", "enflame.com/use-gpuuuid", "enflame.com/nouse-gpuuuid", ("2.8", "2.9")),
    ("Vastai", "Vastai", "Vastai", "vastaitech.com/use-gpuuuid", "vastaitech.com/nouse-gpuuuid", ("2.9", "2.10")),
    ("Biren", "Biren", "Biren", "birentech.com/use-gpuuuid", "birentech.com/nouse-gpuuuid", ("2.10",)),
    ("kunlun", "kunlun", "kunlun", "baidu.com/use-gpuuuid", "baidu.com/nouse-gpuuuid", ("2.8", "2.9", "2.10")),
]  # fmt: skip

# (case, lists as {use, nouse} values, fits under v2.10, fits under v2.9 and v2.8)
CASES = [
    ("no lists", {}, True, True),
    ("listed in both", {"use": "D-0,D-1", "nouse": "D-0,D-1"}, False, True),
    ("empty use list", {"use": ""}, True, False),
    ("blank use list", {"use": "  "}, True, False),
    ("spaces around entries", {"use": " D-0 , D-1 "}, True, False),
    ("empty nouse list", {"nouse": ""}, True, True),
    ("nouse names both", {"nouse": "D-1,D-0"}, False, False),
    ("use names another", {"use": "D-9"}, False, False),
]


def _params():
    for word, dev_type, req_type, use_key, nouse_key, releases in BACKENDS:
        for release in releases:
            for case, lists, new, old in CASES:
                keys = {"use": use_key, "nouse": nouse_key}
                annotations = {keys[k]: v for k, v in lists.items()}
                want = new if release == "2.10" else old
                # before v2.10 Kunlunxin reads no list at all (kunlun_uuid_selection)
                want = want or (word == "kunlun" and release != "2.10")
                yield pytest.param(
                    word, dev_type, req_type, release, annotations, want, id=f"{word}-{release}-{case}"
                )


@pytest.mark.parametrize(("word", "dev_type", "req_type", "release", "annotations", "fits"), list(_params()))
def test_uuid_lists_by_release(word, dev_type, req_type, release, annotations, fits):
    cores = 3 if word == "AWSNeuron" else 100  # Neuron cores are a bitmask: two free cores
    devices = [
        h.usage(uuid, type=dev_type, index=i, count=10, totalmem=1000, totalcore=cores)
        for i, uuid in enumerate(NODE)
    ]
    ask = h.request(req_type, 1, 100, 0, 1 if word == "AWSNeuron" else 10)
    outcome = h.for_release(release).fit(BY_WORD[word], devices, ask, annotations)
    assert outcome.ok is fits, outcome.reason
    if not fits:
        assert "CardUuidMismatch" in outcome.reason

"""Each vendor's Fit checks and HAMi reason strings, and its request-parsing edge cases."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from hami_sim.engine.model import ContainerDevice, ContainerDeviceRequest, DeviceUsage, NodeState, PodRequests
from hami_sim.engine.policy import resolve_gpu_policy
from hami_sim.engine.requests import PodView
from hami_sim.engine.vendors import (
    AmdVendor,
    AscendVendor,
    AwsNeuronVendor,
    BirenVendor,
    CambriconVendor,
    EnflameDrsVendor,
    HygonVendor,
    IluvatarConfig,
    IluvatarVendor,
    KunlunVendor,
    KunlunVxpuVendor,
    MetaxSgpuVendor,
    MthreadsVendor,
    VastaiVendor,
)
from hami_sim.engine.vendors.ascend import DEFAULT_ASCEND_CONFIGS
from hami_sim.engine.vendors.kunlun import trim_vxpu_memory
from hami_sim.engine.vendors.metax_sgpu import vmemory_mib
from tests.vendors.helpers import limits, pod, requests_of

SPREAD = resolve_gpu_policy({}, "spread", False)
MUTEX = resolve_gpu_policy({}, "mutex", False)
ASCEND = {c.common_word: c for c in DEFAULT_ASCEND_CONFIGS}


def dev(
    uid,
    *,
    type,
    index=0,
    count=10,
    mem=16384,
    core=100,
    used=0,
    usedmem=0,
    usedcores=0,
    health=True,
    custom=None,
):
    return DeviceUsage(
        uid, index, count, mem, core, type, 0, "", health, type, (), used, usedmem, usedcores, [], 0.0, custom
    )


def view(annotations=None) -> PodView:
    return PodView("p", "default", "", dict(annotations or {}), PodRequests((), 0))


def node(cordon=()) -> NodeState:
    return NodeState("n", [], {}, frozenset(cordon))


def req(type, nums=1, mem=0, pct=0, cores=0) -> ContainerDeviceRequest:
    return ContainerDeviceRequest(nums, type, mem, pct, cores)


# -- Hygon DCU ---------------------------------------------------------------------------------------
HYGON = HygonVendor()


def dcus(**kw):
    return [dev("DCU-0", type="DCU-K100_AI", index=0, **kw), dev("DCU-1", type="DCU-Z100L", index=1, **kw)]


@pytest.mark.parametrize(
    ("annotations", "request_", "devices", "reason"),
    [
        ({}, req("DCU", mem=20000), dcus(), "2/2 CardInsufficientMemory"),
        ({}, req("DCU", mem=1000, cores=60), dcus(usedcores=50), "2/2 CardInsufficientCore"),
        ({}, req("DCU", mem=1000), dcus(used=10), "2/2 CardTimeSlicingExhausted"),
        (
            {"hygon.com/use-dcutype": "K100"},
            req("DCU", nums=2, mem=1000),
            dcus(),
            "1/2 AllocatedCardsInsufficientRequest, 1/2 CardTypeMismatch",
        ),
        ({"hygon.com/nouse-gpuuuid": "DCU-0,DCU-1"}, req("DCU", mem=1000), dcus(), "2/2 CardUuidMismatch"),
        ({}, req("DCU", mem=1000, cores=100), dcus(used=1), "2/2 ExclusiveDeviceAllocateConflict"),
        ({}, req("DCU", mem=1000), dcus(used=1, usedcores=100), "2/2 CardComputeUnitsExhausted"),
    ],
)
def test_hygon_fit_reasons(annotations, request_, devices, reason):
    outcome = HYGON.fit(devices, request_, view(annotations), node(), SPREAD)
    assert not outcome.ok
    assert outcome.reason == reason


def test_hygon_fit_takes_last_device_and_honours_type_selection():
    outcome = HYGON.fit(dcus(), req("DCU", mem=2000, cores=60), view(), node(), SPREAD)
    assert [(d.uuid, d.usedmem, d.usedcores) for d in outcome.devices] == [("DCU-1", 2000, 60)]
    picked = HYGON.fit(dcus(), req("DCU", mem=2000), view({"hygon.com/use-dcutype": "k100"}), node(), SPREAD)
    assert [d.uuid for d in picked.devices] == ["DCU-0"]
    whole = HYGON.fit(dcus(), req("DCU", pct=100), view(), node(), SPREAD)
    assert whole.devices[0].usedmem == 16384  # no dcumem: 100 % of the card


@pytest.mark.parametrize(
    ("annotations", "allowed"),
    [
        ({"hygon.com/use-dcutype": "k100"}, ["DCU-0"]),
        ({"hygon.com/use-dcutype": "Z100L,K100_AI"}, ["DCU-1", "DCU-0"]),
        ({"hygon.com/use-dcutype": "K100, Z100L"}, ["DCU-1", "DCU-0"]),  # entries are trimmed
        ({"hygon.com/use-dcutype": "K100", "hygon.com/nouse-dcutype": "K100"}, []),  # in both lists: rejected
        ({"hygon.com/nouse-dcutype": "K100"}, ["DCU-1"]),
        ({"hygon.com/use-dcutype": "  "}, ["DCU-1", "DCU-0"]),  # blank: no constraint
        ({"hygon.com/use-dcutype": ","}, []),  # only commas: constrains, and no entry matches
    ],
)
def test_hygon_type_selection(annotations, allowed):
    """v2.10: Hygon's ``checkDCUtype`` is the shared ``device.CheckType``."""
    outcome = HYGON.fit(dcus(), req("DCU", nums=2, mem=10), view(annotations), node(), SPREAD)
    assert [d.uuid for d in outcome.devices] == allowed  # a failed Fit still reports what it collected


def test_hygon_uuid_lists_use_the_shared_check():
    """v2.10: Hygon uses ``device.CheckUUID``: entries are trimmed, a blank list is no constraint."""
    outcome = HYGON.fit(
        dcus(), req("DCU", nums=2, mem=1000), view({"hygon.com/use-gpuuuid": "DCU-0, DCU-1"}), node(), SPREAD
    )
    assert [d.uuid for d in outcome.devices] == ["DCU-1", "DCU-0"]
    empty = HYGON.fit(dcus(), req("DCU", mem=1000), view({"hygon.com/use-gpuuuid": ""}), node(), SPREAD)
    assert empty.ok
    both = HYGON.fit(
        dcus(),
        req("DCU", mem=1000),
        view({"hygon.com/use-gpuuuid": "DCU-0", "hygon.com/nouse-gpuuuid": "DCU-0"}),
        node(),
        SPREAD,
    )
    assert both.reason == "2/2 CardUuidMismatch"


def test_device_cordon_is_read_by_nvidia_only():
    """v2.10: only NVIDIA's Fit reads ``hami.io/device-cordon``; a Hygon card listed there still fits."""
    outcome = HYGON.fit(dcus(), req("DCU", mem=1000), view(), node({"DCU-1"}), SPREAD)
    assert [d.uuid for d in outcome.devices] == ["DCU-1"]


def test_unhealthy_devices_are_rejected_first():
    """v2.10: the shared Fit loop skips a device registered unhealthy before any other check."""
    outcome = HYGON.fit(dcus(health=False), req("OtherType", mem=1000), view(), node(), SPREAD)
    assert outcome.reason == "2/2 CardNotHealth"


def test_mutex_policy_rejects_used_devices():
    outcome = HYGON.fit(dcus(used=1), req("DCU", mem=10), view(), node(), MUTEX)
    assert outcome.reason == "2/2 ExclusiveDeviceAllocateConflict"


def test_hygon_request_parsing():
    assert requests_of(pod(limits(**{"hygon.com/dcunum": 1}))) == [{"DCU": (1, 0, 100, 100)}]
    assert requests_of(pod({"requests": {"hygon.com/dcunum": "2", "hygon.com/dcumem": "1024"}})) == [
        {"DCU": (2, 1024, 0, 100)}
    ]
    assert requests_of(pod(limits(**{"hygon.com/dcunum": 1, "hygon.com/dcucores": 0}))) == [
        {"DCU": (1, 0, 100, 0)}
    ]
    assert requests_of(pod(limits(**{"hygon.com/dcunum": "0.5"}))) == [{}]  # not an integer: no request
    assert requests_of(pod(limits(**{"hygon.com/dcumem": 100}))) == [{}]  # no count: no request


# -- Cambricon MLU ------------------------------------------------------------------------------------
def test_cambricon_request_and_fit():
    assert requests_of(pod(limits(**{"cambricon.com/vmlu": 1, "cambricon.com/mlu.smlu.vmemory": 4}))) == [
        {"MLU": (1, 1024, 0, 100)}
    ]
    mlus = [
        dev("m-0", type="MLU", count=100, mem=23552),
        dev("m-1", type="MLU", count=100, mem=23552, index=1),
    ]
    vendor = CambriconVendor()
    assert (
        vendor.fit(mlus, req("MLU", mem=30000, cores=10), view(), node(), SPREAD).reason
        == "2/2 CardInsufficientMemory"
    )
    # the default 100 cores make an MLU request exclusive
    busy = [dev("m-0", type="MLU", count=100, mem=23552, used=1, usedcores=10)]
    assert (
        vendor.fit(busy, req("MLU", mem=256, cores=100), view(), node(), SPREAD).reason
        == "1/1 CardInsufficientCore"
    )
    ok = vendor.fit(
        mlus, req("MLU", mem=256, cores=10), view({"cambricon.com/use-gpuuuid": "m-0"}), node(), SPREAD
    )
    assert [d.uuid for d in ok.devices] == ["m-0"]


# -- Iluvatar ------------------------------------------------------------------------------------------
def test_iluvatar_uuid_annotations_are_per_chip():
    vendor = IluvatarVendor(IluvatarConfig.for_chip("MR-V100"))
    chips = [dev("il-0", type="MR-V100"), dev("il-1", type="MR-V100", index=1)]
    picked = vendor.fit(
        chips, req("MR-V100", mem=256), view({"hami.io/use-MR-V100-uuid": "il-0"}), node(), SPREAD
    )
    assert [d.uuid for d in picked.devices] == ["il-0"]
    refused = vendor.fit(
        chips, req("MR-V100", mem=256), view({"hami.io/no-use-MR-V100-uuid": "il-0,il-1"}), node(), SPREAD
    )
    assert refused.reason == "2/2 CardUuidMismatch"
    assert vendor.register_key == "hami.io/node-MR-V100-register"


# -- Ascend ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("chip", "memory", "expected"),
    [
        ("Ascend310P", 0, 3072),
        ("Ascend310P", 3073, 6144),
        ("Ascend310P", 12289, 21527),  # above every template: the whole card's allocatable memory
        ("Ascend310P", 24576, 21527),
        ("Ascend310P", 24577, 0),  # above capacity: 0, which the request turns into 100 %
        ("Ascend910B3", 16385, 32768),
        ("Ascend910B3", 40000, 65536),
        ("Ascend910A", 4000, 4369),
    ],
)
def test_ascend_vnpu_templates_round_up(chip, memory, expected):
    """The admission webhook's rounding (``trimMemory``), kept for the docs; requests do not apply it."""
    assert ASCEND[chip].trim_memory(memory)[0] == expected


def test_ascend_requests_and_fit():
    assert requests_of(
        pod(limits(**{"huawei.com/Ascend310P": 1, "huawei.com/Ascend310P-memory": 30000}))
    ) == [{"Ascend310P": (1, 30000, 0, 0)}]  # v2.10: as written, not rounded to a template
    assert requests_of(pod(limits(**{"huawei.com/Ascend910B3": 2}))) == [{"Ascend910B3": (2, 0, 100, 0)}]
    vendor = AscendVendor(ASCEND["Ascend910B4"])
    npus = [dev("npu-0", type="Ascend910B4", count=4, mem=32768, core=20)]
    half = vendor.fit(npus, req("Ascend910B4", mem=16384), view(), node(), SPREAD)
    assert [(d.uuid, d.usedmem) for d in half.devices] == [("npu-0", 16384)]
    full = [dev("npu-0", type="Ascend910B4", count=4, mem=32768, core=20, used=1, usedmem=16384)]
    assert (
        vendor.fit(full, req("Ascend910B4", pct=100), view(), node(), SPREAD).reason
        == "1/1 CardInsufficientMemory"
    )
    uuid = vendor.fit(
        npus, req("Ascend910B4", mem=8192), view({"hami.io/no-use-Ascend910B4-uuid": "npu-0"}), node(), SPREAD
    )
    assert uuid.reason == "1/1 CardUuidMismatch"


def test_ascend_network_topology_picks_the_biggest_network_group():
    vendor = AscendVendor(ASCEND["Ascend910B3"])
    npus = [
        dev(
            f"npu-{i}",
            type="Ascend910B3",
            index=i,
            count=4,
            mem=65536,
            core=20,
            custom={"NetworkID": float(net)},
        )
        for i, net in enumerate([0, 1, 1, 0, 1])
    ]
    outcome = vendor.fit(npus, req("Ascend910B3", nums=2, mem=65536), view(), node(), SPREAD)
    assert outcome.ok
    assert sorted(d.uuid for d in outcome.devices) == ["npu-2", "npu-4"]  # network 1 has three fitting NPUs


@pytest.mark.parametrize(
    ("config_default", "node_annotation", "fits"),
    [
        (False, None, False),  # no annotation: the config's hamiVnpuCore (off)
        (True, None, True),
        (False, "true", True),  # the node annotation wins over the config
        (True, "false", False),
    ],
)
def test_ascend_hami_core_pods_need_a_hami_vnpu_core_node(config_default, node_annotation, fits):
    """A ``huawei.com/vnpu-mode: hami-core`` pod fits only where hami-vnpu-core runs; there its
    ``-core`` percentage is counted against 100 per NPU."""
    config = dataclasses.replace(ASCEND["Ascend910B3"], hami_vnpu_core=config_default)
    vendor = AscendVendor(config)
    register = orjson.dumps(
        [{"id": "npu-0", "count": 4, "devmem": 65536, "devcore": 20, "type": "Ascend910B3", "health": True}]
    ).decode()
    annotations = {vendor.register_key: register}
    if node_annotation is not None:
        annotations["hami-vnpu-core"] = node_annotation
    infos, _ = vendor.node_devices(annotations, {})
    devices = [DeviceUsage.from_info(i) for i in infos]
    hami_core = view({"huawei.com/vnpu-mode": "hami-core"})
    outcome = vendor.fit(devices, req("Ascend910B3", mem=15360, cores=50), hami_core, node(), SPREAD)
    assert outcome.ok is fits
    if not fits:
        assert outcome.reason == "1/1 ModeNotFit"
    else:
        # 50 % of an NPU whose 20 AI cores count as 100: a template pod could not ask for 50
        plain = vendor.fit(devices, req("Ascend910B3", mem=15360, cores=50), view(), node(), SPREAD)
        assert plain.reason == "1/1 CardInsufficientCore"


def test_ascend_910c_takes_whole_modules():
    vendor = AscendVendor(ASCEND["Ascend910C"])
    npus = [
        dev(f"npu-{i}", type="Ascend910C", index=i, count=4, mem=65536, core=20, custom={"NetworkID": 0.0})
        for i in (0, 1, 2, 4, 6)
    ]
    ok = vendor.fit(npus, req("Ascend910C", nums=2, mem=65536), view(), node(), SPREAD)
    assert sorted(d.uuid for d in ok.devices) == ["npu-0", "npu-1"]
    short = vendor.fit(npus, req("Ascend910C", nums=4, mem=65536), view(), node(), SPREAD)
    # v2.10: the modules found (one pair) are counted over the request
    assert not short.ok and short.reason == "2/4 AllocatedCardsInsufficientRequest"


# -- Kunlunxin ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("memory", "template"), [(1, 24576), (24576, 24576), (24577, 49152), (49153, 98304), (10**6, 98304)]
)
def test_kunlun_vxpu_templates(memory, template):
    assert trim_vxpu_memory(memory) == template


def test_kunlun_vxpu_slices_of_one_size_per_card():
    vendor = KunlunVxpuVendor()
    card = [dev("xpu-0", type="XPU", count=4, mem=98304, used=1, usedmem=24576, usedcores=25)]
    same = vendor.fit(card, req("XPU", mem=24576, cores=25), view(), node(), SPREAD)
    assert same.ok
    other = vendor.fit(card, req("XPU", mem=49152, cores=50), view(), node(), SPREAD)
    assert not other.ok and other.reason == "1/1 NumaNotFit"


def test_kunlun_whole_cards_follow_the_board_topology():
    vendor = KunlunVendor()
    board = [dev(f"k-{i}", type="kunlun", index=i, count=100, mem=98304) for i in range(8)]
    four = vendor.fit(board, req("kunlun", nums=4, pct=100), view(), node(), SPREAD)
    assert [d.idx for d in four.devices] == [0, 1, 2, 3]
    for i in (0, 5):
        board[i].used = 1
    pair = vendor.fit(board, req("kunlun", nums=4, pct=100), view(), node(), SPREAD)
    assert [d.idx for d in pair.devices] == [2, 3, 6, 7]
    for i in (2, 7):
        board[i].used = 1
    none = vendor.fit(board, req("kunlun", nums=4, pct=100), view(), node(), SPREAD)
    assert not none.ok and none.reason == "1/8 NumaNotFit"  # v2.10 counts over the node's cards


# -- AMD -----------------------------------------------------------------------------------------------
AMD = AmdVendor()


def mi300(**kw):
    return [dev("amd-0", type="AMD Instinct MI300X VF", count=10, mem=196288, core=304, **kw)]


def test_amd_request_parsing_reads_limits_only_and_validates_ranges():
    assert requests_of(
        pod(limits(**{"amd.com/gpu": 1, "amd.com/gpumem": 16384, "amd.com/gpucores": 25}))
    ) == [{"AMD": (1, 16384, 0, 25)}]
    assert requests_of(pod(limits(**{"amd.com/gpu": 2}))) == [{"AMD": (2, 0, 0, 100)}]
    assert requests_of(pod({"requests": {"amd.com/gpu": "1"}})) == [{}]
    assert requests_of(pod(limits(**{"amd.com/gpu": 1, "amd.com/gpucores": 101}))) == [{}]
    assert requests_of(pod(limits(**{"amd.com/gpu": 1, "amd.com/gpumem": -1}))) == [{}]


def test_amd_fit_converts_core_percent_to_compute_units():
    outcome = AMD.fit(mi300(), req("AMD", mem=16384, cores=25), view(), node(), SPREAD)
    assert [(d.usedmem, d.usedcores, d.type) for d in outcome.devices] == [
        (16384, 76, "AMD Instinct MI300X VF")
    ]
    whole = AMD.fit(mi300(), req("AMD", cores=0), view(), node(), SPREAD)
    assert [(d.usedmem, d.usedcores) for d in whole.devices] == [(196288, 304)]


@pytest.mark.parametrize(
    ("devices", "request_", "annotations", "reason"),
    [
        (mi300(health=False), req("AMD", cores=10), {}, "1/1 CardNotHealth"),
        (mi300(usedmem=190000), req("AMD", mem=16384, cores=10), {}, "1/1 CardInsufficientMemory"),
        (mi300(usedcores=300), req("AMD", mem=1024, cores=10), {}, "1/1 CardInsufficientCore"),
        (mi300(), req("AMD", mem=1024, cores=10), {"amd.com/use-gputype": "MI250"}, "1/1 CardTypeMismatch"),
        (mi300(), req("AMD", mem=1024, cores=10), {"amd.com/use-gpu-uuid": "amd-9"}, "1/1 CardUuidMismatch"),
        (mi300(used=10), req("AMD", mem=1024, cores=10), {}, "1/1 CardTimeSlicingExhausted"),
        (mi300(), req("AMD", nums=2, mem=1024, cores=10), {}, "1/1 AllocatedCardsInsufficientRequest"),
    ],
)
def test_amd_fit_reasons(devices, request_, annotations, reason):
    assert AMD.fit(devices, request_, view(annotations), node(), SPREAD).reason == reason


# -- AWS Neuron ------------------------------------------------------------------------------------
def neurons(n=4, instance="trn1.32xlarge", used=()):
    return [
        dev(
            f"aws-{i}",
            type="AWSNeuron",
            index=i,
            count=2,
            mem=0,
            core=3,
            used=1 if i in used else 0,
            usedcores=3 if i in used else 0,
            custom={"AWSNodeType": instance},
        )
        for i in range(n)
    ]


def test_aws_neuron_core_requests():
    assert requests_of(pod(limits(**{"aws.amazon.com/neuroncore": 4}))) == [{"AWSNeuron": (2, 0, 0, 2)}]
    vendor = AwsNeuronVendor()
    one = vendor.fit(neurons(), req("AWSNeuron", cores=1), view(), node(), SPREAD)
    assert [(d.uuid, d.usedcores) for d in one.devices] == [("aws-3", 1)]
    half = neurons()
    half[3].used, half[3].usedcores = 1, 1
    second = vendor.fit(half, req("AWSNeuron", cores=1), view(), node(), SPREAD)
    assert [(d.uuid, d.usedcores) for d in second.devices] == [("aws-3", 2)]  # the other core of the device
    full = vendor.fit(neurons(used=range(4)), req("AWSNeuron", cores=1), view(), node(), SPREAD)
    assert full.reason == "4/4 CardInsufficientCore"


def test_aws_neuron_multi_device_blocks():
    vendor = AwsNeuronVendor()
    trn = vendor.fit(neurons(8, used={1}), req("AWSNeuron", nums=4, cores=2), view(), node(), SPREAD)
    assert [d.uuid for d in trn.devices] == ["aws-4", "aws-5", "aws-6", "aws-7"]  # aligned blocks of 4
    inf = vendor.fit(
        neurons(8, "inf2.48xlarge", used={1}), req("AWSNeuron", nums=4, cores=2), view(), node(), SPREAD
    )
    assert [d.uuid for d in inf.devices] == ["aws-2", "aws-3", "aws-4", "aws-5"]  # any ring start
    none = vendor.fit(neurons(4, used={1}), req("AWSNeuron", nums=4, cores=2), view(), node(), SPREAD)
    assert none.reason == "1/4 NumaNotFit"  # v2.10: over the node's devices


# -- Moore Threads ---------------------------------------------------------------------------------
def test_mthreads_splits_container_resources_per_gpu_and_checks_cores_of_16():
    assert requests_of(
        pod(limits(**{"mthreads.com/vgpu": 2, "mthreads.com/sgpu-memory": 64, "mthreads.com/sgpu-core": 16}))
    ) == [{"Mthreads": (2, 16384, 0, 8)}]
    vendor = MthreadsVendor()
    gpus = [dev("mt-0", type="Mthreads", count=100, mem=49152, core=16, usedcores=10)]
    assert (
        vendor.fit(gpus, req("Mthreads", mem=512, cores=8), view(), node(), SPREAD).reason
        == "1/1 CardInsufficientCore"
    )
    uuid = vendor.fit(
        gpus, req("Mthreads", mem=512, cores=4), view({"mthreads.ai/nouse-gpuuuid": "mt-0"}), node(), SPREAD
    )
    assert uuid.reason == "1/1 CardUuidMismatch"


# -- MetaX sGPU --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "mib"), [("4", 4096), (4, 4096), ("2048Mi", 2048), ("1Gi", 1024), ("1000", 0)]
)
def test_metax_vmemory_units(raw, mib):
    assert vmemory_mib(raw) == mib


def test_metax_sgpu_fit_reasons():
    vendor = MetaxSgpuVendor()
    cards = [
        dev("GPU-a", type="Metax-SGPU", count=16, mem=65536),
        dev("GPU-b", type="Metax-SGPU", count=16, mem=65536, index=1),
    ]
    ok = vendor.fit(cards, req("Metax-SGPU", mem=4096, cores=60), view(), node(), SPREAD)
    assert [(d.uuid, d.usedmem, d.usedcores) for d in ok.devices] == [("GPU-b", 4096, 60)]
    sick = [dev("GPU-a", type="Metax-SGPU", count=16, mem=65536, health=False)]
    assert (
        vendor.fit(sick, req("Metax-SGPU", mem=1, cores=1), view(), node(), SPREAD).reason
        == "1/1 CardUnhealthy"
    )
    qos = [
        dev(
            "GPU-a",
            type="Metax-SGPU",
            count=16,
            mem=65536,
            used=1,
            usedcores=10,
            custom={"QosPolicy": "fixed-share"},
        )
    ]
    mismatch = vendor.fit(
        qos,
        req("Metax-SGPU", mem=1, cores=10),
        view({"metax-tech.com/sgpu-qos-policy": "best-effort"}),
        node(),
        SPREAD,
    )
    assert mismatch.reason == "1/1 CardQosPolicyMismatch"
    partial = vendor.fit(cards, req("Metax-SGPU", nums=3, mem=1, cores=10), view(), node(), SPREAD)
    assert partial.reason == "2/2 AllocatedCardsInsufficientRequest"
    used = [dev("GPU-a", type="Metax-SGPU", count=16, mem=65536, used=1, usedmem=1024, usedcores=10)]
    offline = vendor.fit(
        used,
        req("Metax-SGPU", mem=1, cores=10),
        view({"metax-tech.com/sgpu-app-class": "offline"}),
        node(),
        SPREAD,
    )
    assert offline.reason == "1/1 CardAppClassMismatch"
    online = vendor.fit(
        cards,
        req("Metax-SGPU", mem=4096, cores=100),
        view({"metax-tech.com/sgpu-app-class": "online"}),
        node(),
        SPREAD,
    )
    assert online.devices[0].usedcores == 0  # online pods do not hold cores


# -- Enflame DRS -------------------------------------------------------------------------------------
PROFILES = {"profiles": {"1g.6gb": "0", "3g.20gb": "1", "6g.40gb": "2"}, "maxSlice": 6}


def drs(used=0, usedmem=0, usedcores=0):
    return [
        dev(
            "gcu-0",
            type="Enflame",
            count=6,
            mem=40960,
            used=used,
            usedmem=usedmem,
            usedcores=usedcores,
            custom=PROFILES,
        )
    ]


def test_enflame_drs_profiles():
    vendor = EnflameDrsVendor()
    three = vendor.fit(drs(), req("Enflame", mem=3, pct=0), view(), node(), SPREAD)
    assert [(d.usedmem, d.usedcores) for d in three.devices] == [(20480, 50)]
    missing = vendor.fit(drs(), req("Enflame", mem=2, pct=0), view(), node(), SPREAD)
    assert missing.reason == "1/1 ModeNotFit"
    by_spec = vendor.fit(drs(), req("Enflame", mem=7000, pct=-1, cores=10), view(), node(), SPREAD)
    assert [(d.usedmem, d.usedcores) for d in by_spec.devices] == [(20480, 50)]  # 7 GB -> 3g.20gb
    full = vendor.fit(
        drs(used=3, usedmem=20480, usedcores=50), req("Enflame", mem=6, pct=0), view(), node(), SPREAD
    )
    assert full.reason == "1/1 CardInsufficientMemory"
    used = drs()[0]
    vendor.add_usage(used, three.devices[0])
    assert (used.used, used.usedmem, used.usedcores) == (
        3,
        20480,
        50,
    )  # a 3-slice profile takes 3 of 6 slices


# -- Biren / Vastai ---------------------------------------------------------------------------------
def test_biren_is_count_only_and_walks_from_the_end():
    vendor = BirenVendor()
    cards = [dev("Biren-0", type="Biren", count=1), dev("Biren-1", type="Biren", count=1, index=1)]
    first = vendor.fit(cards, req("Biren", pct=100), view(), node(), SPREAD)
    assert [(d.uuid, d.usedmem) for d in first.devices] == [("Biren-1", 0)]
    cards[0].used = cards[1].used = 1
    assert (
        vendor.fit(cards, req("Biren", pct=100), view(), node(), SPREAD).reason
        == "2/2 CardTimeSlicingExhausted"
    )
    cards[1].used = 0
    assert vendor.fit(cards, req("Biren", nums=2, pct=100), view(), node(), SPREAD).reason == (
        "1/2 AllocatedCardsInsufficientRequest, 1/2 CardTimeSlicingExhausted"
    )
    assert vendor.fit(
        cards, req("Biren", pct=100), view({"birentech.com/use-gpuuuid": "Biren-0"}), node(), SPREAD
    ).reason == ("1/2 CardTimeSlicingExhausted, 1/2 CardUuidMismatch")


def test_vastai_is_count_only_and_walks_from_the_end():
    """v2.10's Vastai Fit neither checks nor records device memory: a card is shared ``count`` times."""
    vendor = VastaiVendor()
    cards = [
        dev("va-0", type="Vastai", count=2, mem=16384),
        dev("va-1", type="Vastai", count=2, index=1, mem=16384),
    ]
    first = vendor.fit(cards, req("Vastai", pct=100), view(), node(), SPREAD)
    assert [(d.uuid, d.usedmem) for d in first.devices] == [("va-1", 0)]
    cards[1].used = 1
    assert [d.uuid for d in vendor.fit(cards, req("Vastai", pct=100), view(), node(), SPREAD).devices] == [
        "va-1"
    ]
    cards[0].used = cards[1].used = 2
    assert (
        vendor.fit(cards, req("Vastai", pct=100), view(), node(), SPREAD).reason
        == "2/2 CardTimeSlicingExhausted"
    )
    cards[0].used = cards[1].used = 0
    assert vendor.fit(
        cards, req("Vastai", pct=100), view({"vastaitech.com/nouse-gpuuuid": "va-0,va-1"}), node(), SPREAD
    ).reason == ("2/2 CardUuidMismatch")


def test_vastai_die_mode_prefers_dies_of_one_card():
    """Die mode: every acceptable die is collected, then whole cards (AIC groups) first."""
    vendor = VastaiVendor()
    dies = [
        dev(f"die-{i}", type="Vastai", count=1, index=i, custom={"DeviceStrategy": "die", "AIC": aic})
        for i, aic in enumerate(["a", "b", "b", "c"])
    ]
    pair = vendor.fit(dies, req("Vastai", nums=2, pct=100), view(), node(), SPREAD)
    assert sorted(d.uuid for d in pair.devices) == ["die-1", "die-2"]
    assert vendor.score_node([pair.devices], dies, "binpack", view()) == 1.0
    split = [ContainerDevice(d.index, d.id, "Vastai", 0, 0) for d in (dies[0], dies[3])]
    assert vendor.score_node([split], dies, "binpack", view()) == 0.5


def test_enflame_gcu_takes_idle_cards_only():
    from hami_sim.engine.vendors import EnflameGcuVendor

    vendor = EnflameGcuVendor()
    gcus = [
        dev("gcu-0", type="GCU", count=1, mem=100, used=1, usedmem=100, usedcores=100),
        dev("gcu-1", type="GCU", count=1, mem=100, index=1),
    ]
    one = vendor.fit(gcus, req("GCU", mem=100, pct=100, cores=100), view(), node(), SPREAD)
    assert [(d.uuid, d.usedmem, d.usedcores) for d in one.devices] == [("gcu-1", 100, 100)]
    two = vendor.fit(gcus, req("GCU", nums=2, mem=100, pct=100, cores=100), view(), node(), SPREAD)
    assert two.reason == "1/2 AllocatedCardsInsufficientRequest, 1/2 ExclusiveDeviceAllocateConflict"


def test_aws_neuron_ignores_the_device_cordon():
    """v2.10 reads ``hami.io/device-cordon`` for NVIDIA only: a cordoned Neuron device still counts."""
    vendor = AwsNeuronVendor()
    blocked = vendor.fit(neurons(8), req("AWSNeuron", nums=4, cores=2), view(), node({"aws-2"}), SPREAD)
    assert [d.uuid for d in blocked.devices] == ["aws-0", "aws-1", "aws-2", "aws-3"]

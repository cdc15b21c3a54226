"""HAMi v2.10.0 ``pkg/device/metax/sdevice_test.go`` and ``protocol_test.go`` (MetaX sGPU), re-expressed
against the engine's ``MetaxSgpuVendor``.

Ported (internals through the vendor interface):

- ``TestGenerateResourceRequests``; ``TestGetMetaxSDevices`` and ``TestConvertMetaxSDeviceToHAMIDevice``
  through ``node_devices`` (the registration annotation decoded into devices). The engine keeps the
  ``QosPolicy`` and ``LinkZone`` of ``CustomInfo``, not ``Model``, which no v2.10.0 rule reads.
- ``TestCheckDeviceQos`` through Fit: a used card whose QoS policy differs is ``CardQosPolicyMismatch``.
- ``TestMetaxSDevices_Fit``; ``TestMetaxSDevices_AddResourceUsage`` (the Go test calls the MetaX GPU
  backend's ``AddResourceUsage``; so does this port).
- ``TestPrioritizeExclusiveDevices`` through Fit: an exclusive request (100 cores, no app class) with
  more candidates than it needs; the devices are listed in reverse so Fit's backward walk hands
  ``prioritizeExclusiveDevices`` the Go case's candidate list.
- ``TestNeedScore`` (``topologyAwareEnable``), ``TestScoreExclusiveDevices``, ``TestScoreOnlineDevices``
  and ``TestScoreNodePolicyIndependence`` through ``score_node``. The engine's ``score_node`` is what
  HAMi's ``OverrideScore`` adds, so it includes the policy-neutral weighting of
  ``policy/node_policy.go`` (x 10000, x -10000 under spread): a Go ``ScoreNode`` value ``s`` reads
  ``10000 * s`` under binpack (``TestMetaxSDevicesImplementsPolicyNeutralScorer`` is that weighting).
- ``TestCheckAppClass`` through Fit; ``TestPrioritizeOnlineDevices`` through an online pod's Fit with
  more candidates than it needs (the devices listed in reverse, as above); ``TestScoreOnlineDevices``
  through ``score_node``. HAMi's ``DeviceUsage.PodInfos`` is the engine's ``DeviceUsage.pod_infos``:
  per pod on the card, the annotations MetaX reads (its app class). HAMi orders the online candidates
  with an unstable ``sort.Slice``; the engine sorts stably (a deliberate departure), which agrees with
  every Go case here because each has one best card.

Not ported, because the engine does not simulate them:
``TestMutateAdmission`` (admission webhook), ``TestAddJitteryQos`` and ``qos_test.go`` (the QoS cache
HAMi fills when it binds a pod), ``TestConvertHAMIPodDeviceToMetaxPodDevice`` and
``TestPodMetaxSDeviceString`` (bind-time pod annotations).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import MetaxGpuVendor, MetaxSgpuVendor
from tests.vendors.harness import (
    EMPTY,
    add_usage,
    cdev,
    fit,
    node,
    node_devices,
    request_of,
    score_node,
    usage,
)

SGPU = "Metax-SGPU"
VENDOR = MetaxSgpuVendor()
COUNT, CORE, MEM = "metax-tech.com/sgpu", "metax-tech.com/vcore", "metax-tech.com/vmemory"
REGISTER = "metax-tech.com/node-gpu-devices"
APP_CLASS, QOS = "metax-tech.com/sgpu-app-class", "metax-tech.com/sgpu-qos-policy"
TOPOLOGY_AWARE = "metax-tech.com/sgpu-topology-aware"
MUTEX = {"hami.io/gpu-scheduler-policy": "mutex"}


def classes(*app_classes):
    """Go ``PodInfos``: one pod per entry, annotated with that app class ("" = no app class)."""
    return [{APP_CLASS: c} if c else {} for c in app_classes]


def sdev(id="dev-0", **kw):
    base = {"type": SGPU, "count": 100, "totalcore": 100, "totalmem": 1280}
    base.update(kw)
    return usage(id, **base)


# ---- TestGenerateResourceRequests --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("limits", "want"),
    [
        pytest.param(
            {COUNT: "1"}, (1, SGPU, 0, 100, 100), id="TestGenerateResourceRequests/one full sgpu test"
        ),
        pytest.param(
            {COUNT: "2"}, (2, SGPU, 0, 100, 100), id="TestGenerateResourceRequests/two full sgpu test"
        ),
        pytest.param(
            {COUNT: "1", CORE: "30"},
            (1, SGPU, 0, 100, 30),
            id="TestGenerateResourceRequests/one sgpu test set vcore",
        ),
        pytest.param(
            {COUNT: "1", MEM: "16"},
            (1, SGPU, 16 * 1024, 0, 100),
            id="TestGenerateResourceRequests/one sgpu test set vmemory",
        ),
        pytest.param(
            {COUNT: "1", CORE: "60", MEM: "16"},
            (1, SGPU, 16 * 1024, 0, 60),
            id="TestGenerateResourceRequests/one sgpu test set vcore&vmemory",
        ),
        pytest.param(
            {COUNT: "1", CORE: "60", MEM: "1024Mi"},
            (1, SGPU, 1024, 0, 60),
            id="TestGenerateResourceRequests/one sgpu test set vcore&vmemory, mem unit Mi",
        ),
        pytest.param(
            {COUNT: "1", CORE: "60", MEM: "16Gi"},
            (1, SGPU, 16 * 1024, 0, 60),
            id="TestGenerateResourceRequests/one sgpu test set vcore&vmemory, mem unit Gi",
        ),
        pytest.param(
            {COUNT: "1", MEM: "2100001"},
            EMPTY,
            id="TestGenerateResourceRequests/oversized memory request exceeds int32 range (no unit, pre-multiply guard)",
        ),
        pytest.param(
            {COUNT: "2200000000"},
            EMPTY,
            id="TestGenerateResourceRequests/oversized sgpu count exceeds int32 range",
        ),
        pytest.param(
            {COUNT: "1", CORE: "2200000000"},
            EMPTY,
            id="TestGenerateResourceRequests/oversized vcore exceeds int32 range",
        ),
    ],
)
def test_generate_resource_requests(limits, want):
    assert request_of(VENDOR, limits) == want


# ---- TestGetMetaxSDevices, TestConvertMetaxSDeviceToHAMIDevice ---------------------------------------
NORMAL = (
    '[{"uuid": "GPU-123", "model": "sgpu", "totalDevCount": 16, "totalCompute": 100, "bdf": "0000:44:00.0",'
    ' "totalVRam" : 32768, "numa": 1, "healthy": true, "qosPolicy": "fixed-share"}]'
)
BASE = (
    '[{"uuid": "GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a9", "bdf": "0000:0a:00.0", "model": "native",'
    ' "totalDevCount": 16, "totalCompute": 100, "totalVRam": 65536, "availableDevCount": 6,'
    ' "availableCompute": 50, "availableVRam": 32768, "numa": 0, "healthy": true, "qosPolicy": "best-effort",'
    ' "linkZone": 1},'
    ' {"uuid": "GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a8", "bdf": "0000:09:00.0", "model": "sgpu",'
    ' "totalDevCount": 8, "totalCompute": 100, "totalVRam": 32768, "availableDevCount": 6,'
    ' "availableCompute": 50, "availableVRam": 32768, "numa": -1, "healthy": false, "qosPolicy": "burst-share",'
    ' "linkZone": 2}]'
)


@pytest.mark.parametrize(
    ("annotations", "want"),
    [
        pytest.param(
            {REGISTER: NORMAL},
            [("GPU-123", 0, 16, 32768, 100, SGPU, 1, True, "fixed-share", 0)],
            id="TestGetMetaxSDevices/test normal node",
        ),
        pytest.param({}, [], id="TestGetMetaxSDevices/test annotations nil"),
        pytest.param({REGISTER: ""}, [], id="TestGetMetaxSDevices/test Unmarshal fail"),
        pytest.param({REGISTER: "[]"}, [], id="TestGetMetaxSDevices/test devices len 0"),
        pytest.param(
            {REGISTER: BASE},
            [
                (
                    "GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a9",
                    0,
                    16,
                    65536,
                    100,
                    SGPU,
                    0,
                    True,
                    "best-effort",
                    1,
                ),
                (
                    "GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a8",
                    1,
                    8,
                    32768,
                    100,
                    SGPU,
                    -1,
                    False,
                    "burst-share",
                    2,
                ),
            ],
            id="TestConvertMetaxSDeviceToHAMIDevice/base test",
        ),
    ],
)
def test_get_metax_sdevices(annotations, want):
    got = node_devices(VENDOR, node("normal", annotations=annotations))
    assert [
        (
            d.id,
            d.index,
            d.count,
            d.devmem,
            d.devcore,
            d.type,
            d.numa,
            d.health,
            d.custom_info["QosPolicy"],
            d.custom_info["LinkZone"],
        )
        for d in got
    ] == want


# ---- TestCheckDeviceQos: (pod QoS, card used, card QoS, request cores) -> QoS accepted ---------------
@pytest.mark.parametrize(
    ("req_qos", "used", "card_qos", "cores", "accepted"),
    [
        pytest.param("best-effort", 0, "burst-share", 50, True, id="TestCheckDeviceQos/check no use device"),
        pytest.param(
            "best-effort", 2, "burst-share", 100, True, id="TestCheckDeviceQos/check request exclusive"
        ),
        pytest.param("best-effort", 2, "burst-share", 50, False, id="TestCheckDeviceQos/check fail"),
        pytest.param("best-effort", 2, "best-effort", 50, True, id="TestCheckDeviceQos/check pass"),
    ],
)
def test_check_device_qos(req_qos, used, card_qos, cores, accepted):
    dev = sdev("GPU-123", used=used, custom_info={"QosPolicy": card_qos})
    outcome = fit(VENDOR, [dev], (1, SGPU, 64, 0, cores), {QOS: req_qos})
    assert ("CardQosPolicyMismatch" not in outcome.reason) is accepted


# ---- TestMetaxSDevices_Fit ----------------------------------------------------------------------------
# (devices, request (nums, type, memreq, mem%, cores), annotations, fit, collected, ids, reason); the Go
# test checks the collected count and ids only when the Fit succeeds
FIT_CASES = [
    pytest.param(
        [sdev("dev-0", totalmem=128), sdev("dev-1", totalmem=128)],
        (1, SGPU, 64, 0, 50),
        {},
        True,
        1,
        ["dev-1"],
        "",
        id="TestMetaxSDevices_Fit/fit success",
    ),
    pytest.param(
        [sdev(totalmem=128)],
        (1, SGPU, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientMemory",
        id="TestMetaxSDevices_Fit/fit fail: memory not enough",
    ),
    pytest.param(
        [sdev(totalmem=1024, usedcores=100)],
        (1, SGPU, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientCore",
        id="TestMetaxSDevices_Fit/fit fail: core not enough",
    ),
    pytest.param(
        [sdev(totalmem=128)],
        (1, "OtherType", 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="TestMetaxSDevices_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [sdev(used=1, usedmem=64, totalmem=128, usedcores=10, pod_infos=classes(""))],
        (1, SGPU, 512, 0, 50),
        {APP_CLASS: "online"},
        False,
        0,
        [],
        "1/1 CardAppClassMismatch",
        id="TestMetaxSDevices_Fit/fit fail: online task, app class unfit",
    ),
    pytest.param(
        [sdev(used=1, usedmem=64, totalmem=128, usedcores=10, pod_infos=classes("online"))],
        (1, SGPU, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardAppClassMismatch",
        id="TestMetaxSDevices_Fit/fit fail: normal task, app class unfit",
    ),
    pytest.param(
        [sdev(totalmem=128, health=False)],
        (1, SGPU, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardUnhealthy",
        id="TestMetaxSDevices_Fit/fit fail: device unhealthy",
    ),
    pytest.param(
        [sdev(used=100)],
        (1, SGPU, 512, 0, 50),
        {},
        False,
        0,
        [],
        "1/1 CardTimeSlicingExhausted",
        id="TestMetaxSDevices_Fit/fit fail: card overused",
    ),
    pytest.param(
        [sdev()],
        (1, SGPU, 512, 0, 120),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientCore",
        id="TestMetaxSDevices_Fit/fit success: but core limit can't exceed 100",
    ),
    pytest.param(
        [sdev(used=20)],
        (1, SGPU, 512, 0, 100),
        {},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestMetaxSDevices_Fit/fit fail:  card exclusively",
    ),
    pytest.param(
        [sdev("dev-1")],
        (2, SGPU, 512, 0, 50),
        {"metax-tech.com/use-gpuuuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestMetaxSDevices_Fit/fit fail: user assign use uuid mismatch",
    ),
    pytest.param(
        [sdev("dev-0")],
        (2, SGPU, 512, 0, 50),
        {"metax-tech.com/nouse-gpuuuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestMetaxSDevices_Fit/fit fail: user assign no use uuid match",
    ),
    pytest.param(
        [sdev(used=20, usedcores=100)],
        (1, SGPU, 512, 0, 0),
        {},
        False,
        0,
        [],
        "1/1 CardComputeUnitsExhausted",
        id="TestMetaxSDevices_Fit/fit fail:  CardComputeUnitsExhausted",
    ),
    pytest.param(
        [sdev(used=20, usedcores=10)],
        (2, SGPU, 512, 0, 20),
        {},
        False,
        0,
        [],
        "1/1 AllocatedCardsInsufficientRequest",
        id="TestMetaxSDevices_Fit/fit fail:  AllocatedCardsInsufficientRequest",
    ),
    pytest.param(
        [sdev(used=20, usedcores=10)],
        (1, SGPU, 0, 10, 20),
        {},
        True,
        1,
        ["dev-0"],
        "",
        id="TestMetaxSDevices_Fit/fit success:  memory percentage",
    ),
    pytest.param(
        [sdev(used=1, totalmem=128)],
        (1, SGPU, 64, 0, 50),
        MUTEX,
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestMetaxSDevices_Fit/mutex policy rejects used device",
    ),
]


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = fit(VENDOR, devices, request_, annotations)
    assert outcome.ok is fits
    if fits:
        assert len(outcome.devices) == length
        assert [d.uuid for d in outcome.devices] == ids
    assert outcome.reason == reason


@pytest.mark.parametrize(
    ("before", "chosen", "after"),
    [
        pytest.param(
            (0, 15, 2000),
            (50, 1024),
            (1, 65, 3024),
            id="TestMetaxSDevices_AddResourceUsage/test add resource usage",
        )
    ],
)
def test_add_resource_usage(before, chosen, after):
    used, usedcores, usedmem = before
    dev = usage("dev-0", used=used, usedcores=usedcores, usedmem=usedmem)
    assert add_usage(MetaxGpuVendor(), dev, cdev("dev-0", usedcores=chosen[0], usedmem=chosen[1])) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == after


# ---- TestPrioritizeExclusiveDevices, through an exclusive Fit --------------------------------------
def zoned(*pairs):
    """Idle cards ``(id, link zone)``, listed in reverse so the backward walk meets them in order."""
    return [sdev(id, custom_info={"QosPolicy": "", "LinkZone": zone}) for id, zone in reversed(pairs)]


@pytest.mark.parametrize(
    ("candidates", "require", "want"),
    [
        pytest.param(
            [("GPU-1", 1), ("GPU-2", 1), ("GPU-5", 2)],
            1,
            ["GPU-5"],
            id="TestPrioritizeExclusiveDevices/require one device",
        ),
        pytest.param(
            [("GPU-1", 1), ("GPU-2", 1), ("GPU-5", 2), ("GPU-6", 2), ("GPU-7", 2)],
            2,
            ["GPU-1", "GPU-2"],
            id="TestPrioritizeExclusiveDevices/require two device",
        ),
        pytest.param(
            [("GPU-1", 1), ("GPU-2", 1), ("GPU-5", 2), ("GPU-6", 2), ("GPU-7", 2), ("GPU-8", 2)],
            4,
            ["GPU-5", "GPU-6", "GPU-7", "GPU-8"],
            id="TestPrioritizeExclusiveDevices/require four device, best result",
        ),
        pytest.param(
            [("GPU-1", 1), ("GPU-2", 1), ("GPU-5", 2), ("GPU-6", 2), ("GPU-7", 2)],
            4,
            ["GPU-1", "GPU-2", "GPU-5", "GPU-6"],
            id="TestPrioritizeExclusiveDevices/require four device, general result",
        ),
        pytest.param(
            [("GPU-5", 0), ("GPU-6", 0), ("GPU-7", 0)],
            2,
            ["GPU-5", "GPU-6"],
            id="TestPrioritizeExclusiveDevices/no metalink, require two device",
        ),
        pytest.param(
            [("GPU-3", 0), ("GPU-4", 0), ("GPU-7", 1), ("GPU-8", 1)],
            2,
            ["GPU-7", "GPU-8"],
            id="TestPrioritizeExclusiveDevices/part metalink, require two device, best result",
        ),
        pytest.param(
            [("GPU-3", 0), ("GPU-4", 0), ("GPU-6", 1), ("GPU-7", 1), ("GPU-8", 1)],
            4,
            ["GPU-6", "GPU-7", "GPU-8", "GPU-3"],
            id="TestPrioritizeExclusiveDevices/part metalink, require four device, bad result",
        ),
    ],
)
def test_prioritize_exclusive_devices(candidates, require, want):
    outcome = fit(VENDOR, zoned(*candidates), (require, SGPU, 0, 100, 100))
    assert outcome.ok
    assert [d.uuid for d in outcome.devices] == want


# ---- TestNeedScore (topologyAwareEnable), through score_node ----------------------------------------
# a chosen exclusive card whose idle zone neighbour loses its link: 10 x 0 - 10 = -10 when scored
PAIR = [
    sdev("GPU-A", custom_info={"QosPolicy": "", "LinkZone": 1}),
    sdev("GPU-B", custom_info={"LinkZone": 1}),
]


@pytest.mark.parametrize(
    ("annotations", "containers", "scored"),
    [
        pytest.param({TOPOLOGY_AWARE: "true"}, [[100]], True, id="TestNeedScore/enable, allocate 100core"),
        pytest.param({TOPOLOGY_AWARE: "false"}, [[100]], False, id="TestNeedScore/disable, allocate 100core"),
        pytest.param({TOPOLOGY_AWARE: "true"}, [[99]], False, id="TestNeedScore/enable, allocate 99core"),
        pytest.param(
            {TOPOLOGY_AWARE: "true"},
            [[99], [100]],
            True,
            id="TestNeedScore/enable, container[0]: 99core, container[1]: 100core",
        ),
    ],
)
def test_need_score(annotations, containers, scored):
    pod_devices = [[cdev("GPU-A", SGPU, usedcores=cores) for cores in container] for container in containers]
    score = score_node(VENDOR, pod_devices, PAIR, "binpack", annotations)
    assert score == (-10 * 10000 if scored else 0)


# ---- TestScoreExclusiveDevices, through score_node (binpack: x 10000) --------------------------------
def linked(*cards):
    """Cards ``(id, used, link zone)`` of the node before the pod (HAMi ``previous``)."""
    return [sdev(id, used=used, custom_info={"QosPolicy": "", "LinkZone": zone}) for id, used, zone in cards]


@pytest.mark.parametrize(
    ("chosen", "previous", "want"),
    [
        pytest.param(
            ["GPU-4"],
            linked(("GPU-1", 1, 1), ("GPU-2", 1, 1), ("GPU-3", 1, 1), ("GPU-4", 0, 1)),
            0,
            id="TestScoreExclusiveDevices/allocate one device, rest zero device",
        ),
        pytest.param(
            ["GPU-4"],
            linked(("GPU-1", 0, 1), ("GPU-2", 0, 1), ("GPU-3", 0, 1), ("GPU-4", 0, 1)),
            -30,
            id="TestScoreExclusiveDevices/allocate one device, rest three device",
        ),
        pytest.param(
            ["GPU-3", "GPU-4"],
            linked(("GPU-1", 0, 1), ("GPU-2", 0, 1), ("GPU-3", 0, 1), ("GPU-4", 0, 1)),
            60,
            id="TestScoreExclusiveDevices/allocate two device, best result",
        ),
        pytest.param(
            ["GPU-4", "GPU-5"],
            linked(
                ("GPU-1", 1, 1),
                ("GPU-2", 1, 1),
                ("GPU-3", 1, 1),
                ("GPU-4", 0, 1),
                ("GPU-5", 0, 2),
                ("GPU-6", 1, 2),
                ("GPU-7", 1, 2),
                ("GPU-8", 1, 2),
            ),
            0,
            id="TestScoreExclusiveDevices/allocate two device, bad result",
        ),
        pytest.param(
            ["GPU-1", "GPU-2", "GPU-3", "GPU-4"],
            linked(("GPU-1", 0, 1), ("GPU-2", 0, 1), ("GPU-3", 0, 1), ("GPU-4", 0, 1), ("GPU-5", 0, 2)),
            600,
            id="TestScoreExclusiveDevices/allocate four device, best result",
        ),
        pytest.param(
            ["GPU-3", "GPU-4", "GPU-5", "GPU-6"],
            linked(("GPU-2", 0, 1), ("GPU-3", 0, 1), ("GPU-4", 0, 1), ("GPU-5", 0, 2), ("GPU-6", 0, 2)),
            180,
            id="TestScoreExclusiveDevices/allocate four device, bad result",
        ),
        pytest.param(
            [f"GPU-{i}" for i in range(1, 9)],
            linked(*[(f"GPU-{i}", 0, 1 if i <= 4 else 2) for i in range(1, 9)]),
            1200,
            id="TestScoreExclusiveDevices/allocate eight device",
        ),
    ],
)
def test_score_exclusive_devices(chosen, previous, want):
    pod_devices = [[cdev(uuid, SGPU, usedcores=100) for uuid in chosen]]
    assert score_node(VENDOR, pod_devices, previous, "binpack", {TOPOLOGY_AWARE: "true"}) == want * 10000


# ---- TestCheckAppClass, through Fit: (pod app class, app classes of the pods on the card) -----------
@pytest.mark.parametrize(
    ("app_class", "pods", "fits"),
    [
        pytest.param("online", [], True, id="TestCheckAppClass/idle device fit"),
        pytest.param("", ["online"], False, id="TestCheckAppClass/normal task unfit online device"),
        pytest.param("", ["offline"], False, id="TestCheckAppClass/normal task unfit offline device"),
        pytest.param("", [""], True, id="TestCheckAppClass/normal task fit normal device"),
        pytest.param("online", [""], False, id="TestCheckAppClass/online task unfit normal device"),
        pytest.param(
            "online",
            ["online", "offline"],
            True,
            id="TestCheckAppClass/online task fit online/offline device",
        ),
        pytest.param(
            "offline", ["online", "offline"], False, id="TestCheckAppClass/offline task unfit online device"
        ),
    ],
)
def test_check_app_class(app_class, pods, fits):
    annotations = {APP_CLASS: app_class} if app_class else {}
    card = sdev("GPU-123", used=len(pods), pod_infos=classes(*pods))
    outcome = fit(VENDOR, [card], (1, SGPU, 64, 0, 10), annotations)
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardAppClassMismatch")


# ---- TestPrioritizeOnlineDevices, through an online pod's Fit (one card wanted) ----------------------
def cards(*entries):
    """Cards ``(id, app classes of its pods)``, listed in reverse so the backward walk meets them in order."""
    return [sdev(id, used=len(pods), pod_infos=classes(*pods)) for id, pods in reversed(entries)]


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        pytest.param(
            [
                ("GPU-1", []),
                ("GPU-2", ["online"]),
                ("GPU-3", ["online", "online"]),
                ("GPU-4", ["online", "offline"]),
                ("GPU-5", ["online", "online", "offline"]),
                ("GPU-6", ["offline"]),
                ("GPU-7", ["offline", "offline"]),
            ],
            "GPU-1",
            id="TestPrioritizeOnlineDevices/prioritize idle device",
        ),
        pytest.param(
            [
                ("GPU-1", ["online"]),
                ("GPU-2", ["online", "online"]),
                ("GPU-3", ["online", "online", "online", "offline"]),
                ("GPU-4", ["offline", "offline"]),
            ],
            "GPU-1",
            id="TestPrioritizeOnlineDevices/prioritize onlyOnline device",
        ),
        pytest.param(
            [
                ("GPU-1", ["online", "online", "online"]),
                ("GPU-2", ["online", "offline"]),
                ("GPU-3", ["online", "online", "offline"]),
                ("GPU-4", ["offline"]),
                ("GPU-5", ["offline", "offline"]),
            ],
            "GPU-2",
            id="TestPrioritizeOnlineDevices/prioritize online&offline device",
        ),
        pytest.param(
            [("GPU-1", ["offline"]), ("GPU-2", ["offline", "offline"])],
            "GPU-1",
            id="TestPrioritizeOnlineDevices/prioritize onlyOffline device",
        ),
    ],
)
def test_prioritize_online_devices(candidates, want):
    outcome = fit(VENDOR, cards(*candidates), (1, SGPU, 64, 0, 10), {APP_CLASS: "online"})
    assert outcome.ok
    assert [d.uuid for d in outcome.devices] == [want]


# ---- TestScoreOnlineDevices, through score_node (binpack: x 10000) -----------------------------------
@pytest.mark.parametrize(
    ("pods", "want"),
    [
        pytest.param([], 0, id="TestScoreOnlineDevices/test idle device"),
        pytest.param(["online", "online"], -40, id="TestScoreOnlineDevices/test only online device"),
        pytest.param(["offline", "offline"], -200, id="TestScoreOnlineDevices/test only offline device"),
        pytest.param(
            ["offline", "offline", "online", "online"],
            -44,
            id="TestScoreOnlineDevices/test online/offline device",
        ),
    ],
)
def test_score_online_devices(pods, want):
    """An online pod given GPU-123 scores by the app classes of the pods already on it."""
    previous = [sdev("GPU-123", used=len(pods), pod_infos=classes(*pods))]
    score = score_node(VENDOR, [[cdev("GPU-123", SGPU)]], previous, "binpack", {APP_CLASS: "online"})
    assert score == want * 10000


# ---- TestScoreNodePolicyIndependence, through score_node ---------------------------------------------
@pytest.mark.parametrize(
    ("chosen", "previous", "annotations"),
    [
        pytest.param(
            [cdev("GPU-3", SGPU, usedcores=100), cdev("GPU-4", SGPU, usedcores=100)],
            linked(("GPU-1", 0, 1), ("GPU-2", 0, 1), ("GPU-3", 0, 1), ("GPU-4", 0, 1)),
            {TOPOLOGY_AWARE: "true"},
            id="TestScoreNodePolicyIndependence/topology-aware exclusive allocation",
        ),
        pytest.param(
            [cdev("GPU-1", SGPU)],
            [sdev("GPU-1"), sdev("GPU-2")],
            {APP_CLASS: "online"},
            id="TestScoreNodePolicyIndependence/online allocation",
        ),
        pytest.param(
            [cdev("GPU-1", SGPU, usedcores=50)],
            [sdev("GPU-1")],
            {},
            id="TestScoreNodePolicyIndependence/no topology or online hint scores zero",
        ),
    ],
)
def test_score_node_policy_independence(chosen, previous, annotations):
    """HAMi weights the policy-neutral score x 10000, and x -10000 under spread (any other policy: x 10000)."""
    binpack = score_node(VENDOR, [chosen], previous, "binpack", annotations)
    assert score_node(VENDOR, [chosen], previous, "spread", annotations) == -binpack
    assert score_node(VENDOR, [chosen], previous, "", annotations) == binpack

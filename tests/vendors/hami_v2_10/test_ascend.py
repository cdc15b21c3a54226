"""HAMi v2.10.0 ``pkg/device/ascend/device_test.go`` and ``device_910c_pairing_test.go`` as data,
run against ``AscendVendor``.

Not ported (internals the engine does not expose): ``Test_PatchAnnotations*`` (bind-time
annotations), ``Test_MutateAdmission*`` (the admission webhook: 910C SuperPod rounding, the
``-core`` hard-split rejection, the memory limit rewritten to a vNPU template), ``TestDevices_LockNode``
/ ``TestDevices_ReleaseNodeLock`` (bind-time node lock), ``Test_CheckHealth`` (the live handshake:
the simulation path never reads handshakes), ``Test_InitDevices``
"enableAscend is false" (a scheduler flag; hami-sim enables vendors by config).
``TestComputeBestCombination910C_NoFullPairsReturnsEmpty`` calls the private combination helper; its
Fit half is ported. ``Test_checkType`` is ported through ``fit``.

``TestDevices_Fit`` runs every case for every chip of its config (the two ``Ascend910B4`` entries,
32 GiB and 64 GiB, both), with the request type, the device types and the UUID annotation keys set
to that chip, exactly as the Go loop does.
"""

from __future__ import annotations

import json

import pytest

from hami_sim.engine.vendors.ascend import AscendConfig, AscendVendor, VnpuTemplate
from tests.vendors.harness import (
    EMPTY,
    add_usage,
    cdev,
    fit,
    fit_ids,
    node,
    node_devices,
    registered,
    request_of,
    usage,
)

VNPU_MODE = "huawei.com/vnpu-mode"
NODE_HAMI_CORE = "hami-vnpu-core"
POLICY = "hami.io/gpu-scheduler-policy"


def templates(*items):
    return tuple(VnpuTemplate(name, memory, core) for name, memory, core in items)


A910A_TEMPLATES = templates(("vir02", 2184, 2), ("vir04", 4369, 4), ("vir08", 8738, 8), ("vir16", 17476, 16))
A910A = AscendConfig(
    "Ascend910A",
    "910A",
    32768,
    32768,
    30,
    A910A_TEMPLATES,
    resource_name="huawei.com/Ascend910A",
    resource_memory_name="huawei.com/Ascend910A-memory",
)

#: ``TestDevices_Fit``'s YAML config, in its order
FIT_CHIPS = (
    A910A,
    AscendConfig(
        "Ascend910B2",
        "910B2",
        65536,
        65536,
        24,
        templates(("vir03_1c_8g", 8192, 3), ("vir06_1c_16g", 16384, 6), ("vir12_3c_32g", 32768, 12)),
    ),
    AscendConfig(
        "Ascend910B3",
        "910B3",
        65536,
        65536,
        20,
        templates(("vir05_1c_16g", 16384, 5), ("vir10_3c_32g", 32768, 10)),
    ),
    AscendConfig(
        "Ascend910B4",
        "910B4",
        32768,
        32768,
        20,
        templates(("vir05_1c_8g", 8192, 5), ("vir10_3c_16g", 16384, 10)),
    ),
    AscendConfig(
        "Ascend910B4",
        "910B4-1",
        65536,
        65536,
        20,
        templates(("vir05_1c_8g", 8192, 5), ("vir10_3c_16g", 16384, 10)),
    ),
    AscendConfig(
        "Ascend310P",
        "310P3",
        21527,
        24576,
        8,
        templates(("vir01", 3072, 1), ("vir02", 6144, 2), ("vir04", 12288, 4)),
    ),
)


# -- Test_InitDevices / Test_GetNodeDevices ------------------------------------------------------


def test_init_devices_annotation_keys():
    """Test_InitDevices/test with valid configuration: the chip's register and UUID annotations."""
    vendor = AscendVendor(A910A)
    raw = '[{"id":"npu-0","count":4,"devmem":32768,"devcore":30,"type":"Ascend910A","health":true}]'
    [got] = node_devices(vendor, node("n", annotations={"hami.io/node-register-Ascend910A": raw}))
    assert got.id == "npu-0"
    dev = usage("npu-0", type="Ascend910A", count=4, totalmem=32768, totalcore=30)
    assert fit(vendor, [dev], (1, "Ascend910A", 0, 100, 0), {"hami.io/use-Ascend910A-uuid": "x"}).reason == (
        "1/1 CardUuidMismatch"
    )
    assert fit(
        vendor, [dev], (1, "Ascend910A", 0, 100, 0), {"hami.io/no-use-Ascend910A-uuid": "npu-0"}
    ).reason == ("1/1 CardUuidMismatch")


def test_get_node_devices_exist_device():
    """Test_GetNodeDevices/exist device (Go field names in any case, as Go's JSON decoder reads them)."""
    raw = '[{"ID":"GPU-0","Count":4,"Devmem":8738,"Devcore":8,"Type":"huawei.com/Ascend910","Numa":0,"Health":true}]'
    [got] = node_devices(
        AscendVendor(A910A), node("node-01", annotations={"hami.io/node-register-Ascend910A": raw})
    )
    assert (got.index, got.id, got.count, got.devcore, got.devmem, got.type, got.numa, got.health) == (
        0,
        "GPU-0",
        4,
        8,
        8738,
        "huawei.com/Ascend910",
        0,
        True,
    )


@pytest.mark.parametrize(
    "annotations",
    [
        pytest.param({"hami.io/node-register-Ascend910A": "[]"}, id="Test_GetNodeDevices/no device"),
        pytest.param({}, id="Test_GetNodeDevices/no annotation"),
        pytest.param({"hami.io/node-register-Ascend910A": ""}, id="Test_GetNodeDevices/failed to unmarshal"),
    ],
)
def test_get_node_devices_none(annotations):
    assert node_devices(AscendVendor(A910A), node("node-02", annotations=annotations)) == []


# -- GenerateResourceRequests ---------------------------------------------------------------------

B3_CORE = AscendConfig(
    "Ascend910B3",
    "910B3",
    32768,
    32768,
    0,
    templates(("vir08", 8738, 8), ("vir16", 17476, 16)),
    resource_name="huawei.com/Ascend910B3",
    resource_memory_name="huawei.com/Ascend910B3-memory",
    resource_core_name="huawei.com/Ascend910B3-core",
)
B3_OUT_OF_RANGE = AscendConfig(
    "Ascend910B3",
    "910B3",
    65536,
    65536,
    resource_name="huawei.com/Ascend910B3",
    resource_memory_name="huawei.com/Ascend910B3-memory",
    resource_core_name="huawei.com/Ascend910B3-core",
)


def with_factor(factor: int, base: AscendConfig = A910A) -> AscendConfig:
    return AscendConfig(
        base.common_word,
        base.chip_name,
        base.memory_allocatable,
        base.memory_capacity,
        base.ai_core,
        base.templates,
        memory_factor=factor,
        resource_name=base.resource_name,
        resource_memory_name=base.resource_memory_name,
        resource_core_name=base.resource_core_name,
    )


def lim(cw: str, count: str | None = None, memory: str | None = None, core: str | None = None) -> dict:
    out = {}
    if count is not None:
        out[f"huawei.com/{cw}"] = count
    if memory is not None:
        out[f"huawei.com/{cw}-memory"] = memory
    if core is not None:
        out[f"huawei.com/{cw}-core"] = core
    return out


@pytest.mark.parametrize(
    ("config", "limits", "requests", "want"),
    [
        pytest.param(
            A910A, {}, {}, EMPTY, id="Test_GenerateResourceRequests/don't set to limits and request"
        ),
        pytest.param(
            A910A,
            lim("Ascend910A", "2", "8738"),
            lim("Ascend910A", "2", "8738"),
            (2, "Ascend910A", 8738, 0, 0),
            id="Test_GenerateResourceRequests/resourcename and resourcememoryname set to limits and request",
        ),
        pytest.param(
            A910A,
            lim("Ascend910A", "2"),
            lim("Ascend910A", "2"),
            (2, "Ascend910A", 0, 100, 0),
            id="Test_GenerateResourceRequests/resourcememoryname don't set to limits and requests",
        ),
        pytest.param(
            B3_CORE,
            lim("Ascend910B3", "1", "15360", "10"),
            {},
            (1, "Ascend910B3", 15360, 0, 10),
            id="Test_GenerateResourceRequests_VNPUCoreMode/parse custom vNPU core and memory resources",
        ),
        pytest.param(
            with_factor(10),
            lim("Ascend910A", "1", "128"),
            lim("Ascend910A", "1", "128"),
            (1, "Ascend910A", 1280, 0, 0),
            id="Test_GenerateResourceRequestsFactor/factor 10",
        ),
        pytest.param(
            with_factor(100),
            lim("Ascend910A", "1", "128"),
            lim("Ascend910A", "1", "128"),
            (1, "Ascend910A", 12800, 0, 0),
            id="Test_GenerateResourceRequestsFactor/factor 100",
        ),
        pytest.param(
            with_factor(0),
            lim("Ascend910A", "1", "128"),
            lim("Ascend910A", "1", "128"),
            (1, "Ascend910A", 128, 0, 0),
            id="Test_GenerateResourceRequestsFactor/factor 0",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "1", "16Gi", "10"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/memory in bytes exceeds int32 on soft-partitioning path",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "1", "16Gi"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/memory in bytes exceeds int32 range on trim path",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "1", "-1m"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/negative fractional memory request",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "1", "-100"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/negative whole memory request",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "2200000000"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/oversized device count exceeds int32 range",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "1", core="-1"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/negative core request",
        ),
        pytest.param(
            B3_OUT_OF_RANGE,
            lim("Ascend910B3", "1", core="2200000000"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_OutOfRangeValues/oversized core request exceeds int32 range",
        ),
        pytest.param(
            with_factor(10, B3_OUT_OF_RANGE),
            lim("Ascend910B3", "1", "300000000", "10"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_MemoryFactorOverflow/scaled memory overflows on soft-partitioning path",
        ),
        pytest.param(
            with_factor(10),
            lim("Ascend910A", "1", "300000000"),
            {},
            EMPTY,
            id="Test_GenerateResourceRequests_MemoryFactorOverflow/scaled memory overflows int32 on trim path",
        ),
    ],
)
def test_generate_resource_requests(config, limits, requests, want):
    assert request_of(AscendVendor(config), limits, requests) == want


# -- TestDevices_Fit ------------------------------------------------------------------------------


def npu(
    id,
    *,
    index=0,
    used=0,
    count=100,
    totalmem=128,
    usedmem=0,
    totalcore=100,
    usedcores=0,
    health=True,
    net=None,
):
    return dict(
        id=id,
        index=index,
        used=used,
        count=count,
        totalmem=totalmem,
        usedmem=usedmem,
        totalcore=totalcore,
        usedcores=usedcores,
        health=health,
        custom_info=None if net is None else {"NetworkID": float(net)},
    )


HAMI_CORE = {VNPU_MODE: "hami-core"}
CORE_NODE = {NODE_HAMI_CORE: "true"}

# name, devices, (nums, memreq, pct, cores), pod annotations, node annotations, ok, ids, reason
FIT_TABLE = [
    ("fit success", [npu("dev-0"), npu("dev-1")], (1, 64, 0, 50), {}, {}, True, ["dev-1"], ""),
    (
        "fit fail: memory not enough",
        [npu("dev-0")],
        (1, 512, 0, 50),
        {},
        {},
        False,
        [],
        "1/1 CardInsufficientMemory",
    ),
    (
        "fit fail: core not enough",
        [npu("dev-0", totalmem=1024, usedcores=100)],
        (1, 512, 0, 50),
        {},
        {},
        False,
        [],
        "1/1 CardInsufficientCore",
    ),
    (
        "fit fail: type mismatch",
        [npu("dev-0")],
        (1, 512, 0, 50),
        {},
        {},
        False,
        [],
        "1/1 CardTypeMismatch",
    ),
    (
        "fit fail: user assign use uuid mismatch",
        [npu("dev-1", totalmem=1280)],
        (2, 512, 0, 50),
        {"use": "dev-0"},
        {},
        False,
        [],
        "1/1 CardUuidMismatch",
    ),
    (
        "fit fail: user assign no use uuid match",
        [npu("dev-0", totalmem=1280)],
        (2, 512, 0, 50),
        {"no-use": "dev-0"},
        {},
        False,
        [],
        "1/1 CardUuidMismatch",
    ),
    (
        "fit fail: card overused",
        [npu("dev-0", used=100, totalmem=1280)],
        (1, 512, 0, 50),
        {},
        {},
        False,
        [],
        "1/1 CardTimeSlicingExhausted",
    ),
    (
        "fit success: but core limit can't exceed 100",
        [npu("dev-0", totalmem=1280)],
        (1, 512, 0, 120),
        {},
        {},
        True,
        ["dev-0"],
        "",
    ),
    (
        "fit fail:  card exclusively",
        [npu("dev-0", used=20, totalmem=1280)],
        (1, 512, 0, 100),
        {},
        {},
        False,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
    ),
    (
        "fit fail:  CardComputeUnitsExhausted",
        [npu("dev-0", used=20, totalmem=1280, usedcores=100)],
        (1, 512, 0, 0),
        {},
        {},
        False,
        [],
        "1/1 CardComputeUnitsExhausted",
    ),
    (
        "fit fail:  AllocatedCardsInsufficientRequest",
        [npu("dev-0", used=20, totalmem=1280, usedcores=10)],
        (2, 512, 0, 20),
        {},
        {},
        False,
        [],
        "1/1 AllocatedCardsInsufficientRequest",
    ),
    (
        "fit success:  memory percentage",
        [npu("dev-0", used=20, totalmem=1280, usedcores=10)],
        (1, 0, 10, 20),
        {},
        {},
        True,
        ["dev-0"],
        "",
    ),
    (
        "fit success. schedule by NetworkID",
        [npu("dev-0", net=0), npu("dev-1", net=1), npu("dev-2", net=1)],
        (2, 64, 0, 50),
        {},
        {},
        True,
        ["dev-2", "dev-1"],
        "",
    ),
    (
        "fit fail: hami-core pod on legacy node (ModeNotFit)",
        [npu("dev-0", totalmem=32768)],
        (1, 15360, 0, 20),
        HAMI_CORE,
        {},
        False,
        [],
        "1/1 ModeNotFit",
    ),
    (
        "fit ok: annotation-less pod on hami-core node follows node",
        [npu("dev-0", totalmem=32768)],
        (1, 8738, 0, 0),
        {},
        CORE_NODE,
        True,
        ["dev-0"],
        "",
    ),
    (
        "fit fail: whole-card hami-core pod on legacy node (ModeNotFit)",
        [npu("dev-0", totalmem=32768)],
        (1, 32768, 0, 0),
        HAMI_CORE,
        {},
        False,
        [],
        "1/1 ModeNotFit",
    ),
    (
        "fit fail: memory-less hami-core pod on legacy node (ModeNotFit)",
        [npu("dev-0", totalmem=32768)],
        (1, 0, 101, 0),
        HAMI_CORE,
        {},
        False,
        [],
        "1/1 ModeNotFit",
    ),
    (
        "fit success: whole-card hami-core pod on hami-core node",
        [npu("dev-0", totalmem=32768)],
        (1, 32768, 0, 0),
        HAMI_CORE,
        CORE_NODE,
        True,
        ["dev-0"],
        "",
    ),
    (
        "fit success: whole-card legacy pod on hami-core node",
        [npu("dev-0", totalmem=32768)],
        (1, 32768, 0, 0),
        {},
        CORE_NODE,
        True,
        ["dev-0"],
        "",
    ),
    (
        "mutex policy rejects used device",
        [npu("dev-0", used=1)],
        (1, 64, 0, 50),
        {POLICY: "mutex"},
        {},
        False,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
    ),
    (
        "fit fail: CardNotHealth",
        [npu("dev-0", totalmem=1280, health=False)],
        (1, 512, 0, 50),
        {},
        {},
        False,
        [],
        "1/1 CardNotHealth",
    ),
    (
        "fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards",
        [npu("dev-0", totalmem=1280), npu("dev-1", index=1, totalmem=1280)],
        (3, 512, 0, 20),
        {},
        {},
        False,
        [],
        "2/2 AllocatedCardsInsufficientRequest",
    ),
]


def on_node(vendor: AscendVendor, devices: list, node_annotations: dict) -> list:
    """Go's ``nodeInfo.Node`` annotations reach Fit with the node: the devices are registered on a
    node carrying them (``GetNodeDevices``), then given the table's usage."""
    rows = [
        {
            "id": d.id,
            "index": d.index,
            "count": d.count,
            "devmem": d.totalmem,
            "devcore": d.totalcore,
            "type": d.type,
            "health": d.health,
            **({"custominfo": d.custom_info} if d.custom_info else {}),
        }
        for d in devices
    ]
    annotations = {vendor.register_key: json.dumps(rows), **node_annotations}
    out = registered(vendor, node("node1", annotations=annotations))
    for got, want in zip(out, devices, strict=True):
        got.used, got.usedmem, got.usedcores = want.used, want.usedmem, want.usedcores
    return out


def _fit_params():
    seen: dict[str, int] = {}
    for config in FIT_CHIPS:
        cw = config.common_word
        seen[cw] = seen.get(cw, 0) + 1
        label = cw if seen[cw] == 1 else f"{cw}#{seen[cw]}"
        for name, devices, req, annos, node_annos, ok, ids, reason in FIT_TABLE:
            yield pytest.param(
                config,
                name,
                devices,
                req,
                annos,
                node_annos,
                ok,
                ids,
                reason,
                id=f"{label}:{name}",
            )


@pytest.mark.parametrize(
    ("config", "name", "devices", "req", "annos", "node_annos", "ok", "ids", "reason"), list(_fit_params())
)
def test_fit(config, name, devices, req, annos, node_annos, ok, ids, reason):
    """TestDevices_Fit: the Go loop sets the request type, device types and UUID keys per chip."""
    cw = config.common_word
    nums, memreq, pct, cores = req
    req_type = "OtherType" if "type mismatch" in name else cw
    pod_annos = {}
    for key, value in annos.items():
        pod_annos[f"hami.io/{key}-{cw}-uuid" if key in ("use", "no-use") else key] = value
    vendor = AscendVendor(config)
    devs = [usage(type=cw, **d) for d in devices]
    if node_annos:
        devs = on_node(vendor, devs, node_annos)
    out = fit(vendor, devs, (nums, req_type, memreq, pct, cores), pod_annos)
    assert (out.ok, out.reason) == (ok, reason)
    if ok:
        assert fit_ids(out) == ids


A910C = AscendConfig("Ascend910C", "Ascend910", 65536, 65536, 20)


def test_fit_910c_full_modules_only():
    """TestDevices_Fit_910C/fit success: Ascend910C topology-aware allocation (full modules only)."""
    devs = [
        usage(
            f"dev-{i}",
            type="Ascend910C",
            index=i,
            count=100,
            totalmem=128,
            totalcore=100,
            custom_info={"NetworkID": 0.0},
        )
        for i in range(3)
    ]
    out = fit(AscendVendor(A910C), devs, (2, "Ascend910C", 128, 0, 100))
    assert (out.ok, out.reason, fit_ids(out)) == (True, "", ["dev-1", "dev-0"])


def pairing(*indices, net=True):
    """The 910C pairing tests' devices: type unset, split count 1, 32000 MiB, no cores."""
    info = (lambda: {"NetworkID": 0.0}) if net else dict
    return [usage(f"dev-{i}", index=i, count=1, totalmem=32000, custom_info=info()) for i in indices]


@pytest.mark.parametrize(
    ("devices", "nums", "ok"),
    [
        pytest.param(pairing(0, 1, 2, 4, 6), 4, False, id="TestAscend910C_FitPartialAllocationBug"),
        pytest.param(
            pairing(0, 2),
            2,
            False,
            id="TestAscend910C_FitExactCountBypassBug",
        ),
        pytest.param(pairing(0, 1), 2, True, id="TestAscend910C_FitFullPairSucceeds"),
        pytest.param(
            pairing(0, 2, net=False),
            2,
            False,
            id="TestAscend910C_FitWithoutNetworkID_ValidatesPairing/split modules",
        ),
        pytest.param(
            pairing(0, 1, net=False),
            2,
            True,
            id="TestAscend910C_FitWithoutNetworkID_ValidatesPairing/one module",
        ),
        pytest.param(
            pairing(0, 2, 4, 6, net=False),
            4,
            False,
            id="TestComputeBestCombination910C_NoFullPairsReturnsEmpty",
        ),
    ],
)
def test_fit_910c_pairing(devices, nums, ok):
    """A 910C request of more than one NPU takes whole modules (NPU pairs 2k, 2k+1) only."""
    out = fit(AscendVendor(A910C), devices, (nums, "Ascend910C", 0, 0, 0))
    assert out.ok is ok, out.reason
    if ok:
        assert len(out.devices) == nums
    else:
        assert "AllocatedCardsInsufficientRequest" in out.reason


@pytest.mark.parametrize(
    ("req_type", "ok"),
    [
        pytest.param("Ascend910A", True, id="Test_checkType/the same type"),
        pytest.param("Ascend910B", False, id="Test_checkType/the different type"),
    ],
)
def test_check_type(req_type, ok):
    dev = usage("d", type="Ascend910A", count=1, totalmem=100, totalcore=100)
    out = fit(AscendVendor(A910A), [dev], (1, req_type, 0, 100, 0))
    assert out.ok is ok
    if not ok:
        assert out.reason == "1/1 CardTypeMismatch"


def test_add_resource_usage():
    """TestDevices_AddResourceUsage/test add resource usage."""
    dev = usage("dev-0", usedcores=15, usedmem=2000)
    assert add_usage(AscendVendor(A910A), dev, cdev("dev-0", usedmem=1024, usedcores=50)) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == (1, 65, 3024)

"""Pod allocations as HAMi v2.10.0 decodes and counts them (``pkg/device/devices.go``,
``initContainer.go``, ``scheduler.go`` getNodesUsage). Tables ported from HAMi's ``devices_test.go``
and ``initContainer_test.go`` where they exist; the rest are the rules a live filter depends on."""

from __future__ import annotations

import orjson
import pytest

from hami_sim.engine.allocations import (
    AllocationError,
    ContainerDevice,
    collapse_init_container_usage,
    decode_container_devices,
    decode_pod_devices,
    node_usage,
    pod_allocation,
)
from hami_sim.engine.model import MigPlacement
from hami_sim.engine.vendors import allocated_annotations
from hami_sim.engine.vendors.nvidia_mig import MigAllocationError, decode_mig_allocations

SUPPORT_DEVICES = allocated_annotations()  # each vendor module names its own key

NV = "hami.io/vgpu-devices-allocated"
U1 = "GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76"
U2 = "GPU-ebe7c3f7-303d-558d-435e-99a160631fe4"


def cd(uuid: str, mem: int, cores: int, type: str = "NVIDIA", slots: int = 0) -> ContainerDevice:
    return ContainerDevice(uuid, type, mem, cores, slots)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("", []),
        ("UUID1,Type1,1000,30:", [cd("UUID1", 1000, 30, "Type1")]),
        (
            "UUID1,Type1,1000,30:UUID2,Type1,1000,30:",
            [cd("UUID1", 1000, 30, "Type1"), cd("UUID2", 1000, 30, "Type1")],
        ),
        ("UUID1,Type1,1000,30", [cd("UUID1", 1000, 30, "Type1")]),  # no trailing ':' is fine
        ("garbage:UUID1,T,1,2:", [cd("UUID1", 1, 2, "T")]),  # segments without ',' are skipped
        ("UUID1,T,1,2,extra,fields:", [cd("UUID1", 1, 2, "T")]),  # fields after the fourth ignored
        ("U,T,+5,-3:", [cd("U", 5, -3, "T")]),  # Go ParseInt accepts a sign
        ("U,T,2147483647,-2147483648:", [cd("U", 2147483647, -2147483648, "T")]),
    ],
)
def test_container_devices_decode_like_go(text, want):
    assert decode_container_devices(text) == want


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("uuid,type,100:", "pod annotation format error, missing fields, do not use nodeName in task spec"),
        ("u,t,abc,1:", 'invalid memory field: strconv.ParseInt: parsing "abc": invalid syntax'),
        ("u,t,,1:", 'invalid memory field: strconv.ParseInt: parsing "": invalid syntax'),
        ("u,t,-,1:", 'invalid memory field: strconv.ParseInt: parsing "-": invalid syntax'),
        ("u,t, 1,1:", 'invalid memory field: strconv.ParseInt: parsing " 1": invalid syntax'),
        ("u,t,1_000,1:", 'invalid memory field: strconv.ParseInt: parsing "1_000": invalid syntax'),
        (
            "u,t,2147483648,1:",
            'invalid memory field: strconv.ParseInt: parsing "2147483648": value out of range',
        ),
        (
            "u,t,-2147483649,1:",
            'invalid memory field: strconv.ParseInt: parsing "-2147483649": value out of range',
        ),
        # ParseUint reports the overflow at the digit where it happens, before a later bad character
        (
            "u,t,99999999999x,1:",
            'invalid memory field: strconv.ParseInt: parsing "99999999999x": value out of range',
        ),
        ("u,t,1,1.5:", 'invalid core field: strconv.ParseInt: parsing "1.5": invalid syntax'),
        ("u,t,1,\t:", 'invalid core field: strconv.ParseInt: parsing "\\t": invalid syntax'),
    ],
)
def test_container_devices_errors_are_gos(text, error):
    with pytest.raises(AllocationError) as exc:
        decode_container_devices(text)
    assert str(exc.value) == error


def test_pod_devices_keep_one_entry_per_container_including_the_trailing_empty_one():
    # Test_DecodePodDevices "annos having two device"
    annos = {NV: f"{U1},NVIDIA,500,3:;{U2},NVIDIA,500,3:;"}
    assert decode_pod_devices({"NVIDIA": NV}, annos) == {"NVIDIA": [[cd(U1, 500, 3)], [cd(U2, 500, 3)], []]}
    assert decode_pod_devices({"NVIDIA": NV}, {}) == {}  # "annos len is 0"
    assert decode_pod_devices({"NVIDIA": NV}, {"other": "x"}) == {}
    with pytest.raises(AllocationError):  # TestDecodePodDevices_BadAnnotation
        decode_pod_devices({"NVIDIA": NV}, {NV: "uuid,type,100:;"})


@pytest.mark.parametrize(
    ("vendor", "key"),
    [
        ("NVIDIA", "hami.io/vgpu-devices-allocated"),
        ("MLU", "hami.io/cambricon-mlu-devices-allocated"),
        ("DCU", "hami.io/dcu-devices-allocated"),
        ("kunlun", "hami.io/kunlun-allocated"),
        ("XPU", "hami.io/xpu-devices-allocated"),
        ("Enflame", "hami.io/enflame-vgpu-devices-allocated"),
        ("Ascend910B4", "hami.io/Ascend910B4-devices-allocated"),  # per-chip: from the commonWord
        ("MR-V100", "hami.io/MR-V100-devices-allocated"),
        ("Vastai", "hami.io/Vastai-devices-allocated"),
        ("Biren", "hami.io/Biren-devices-allocated"),
    ],
)
def test_each_vendor_reads_its_support_devices_key(vendor, key):
    assert allocated_annotations()[vendor] == key


N, P = "NVIDIA", "kunlun"


@pytest.mark.parametrize(
    ("init", "raw", "want"),
    [
        # initContainer_test.go, case by case
        (0, {N: [[cd("gpu0", 100, 10)], [cd("gpu0", 200, 20)]]}, {N: [cd("gpu0", 300, 30, slots=2)]}),
        (2, {N: [[cd("gpu0", 100, 10)], [cd("gpu0", 200, 30)]]}, {N: [cd("gpu0", 200, 30, slots=1)]}),
        (1, {N: [[cd("gpu0", 500, 50)], [cd("gpu0", 100, 10)]]}, {N: [cd("gpu0", 500, 50, slots=1)]}),
        (1, {N: [[cd("gpu0", 1000, 80)], [cd("gpu0", 200, 20)]]}, {N: [cd("gpu0", 1000, 80, slots=1)]}),
        (
            1,
            {N: [[cd("gpu0", 100, 10)], [cd("gpu0", 200, 20)], [cd("gpu0", 300, 30)]]},
            {N: [cd("gpu0", 500, 50, slots=2)]},
        ),
        (
            3,
            {N: [[cd("gpu0", 100, 10)], [cd("gpu0", 300, 30)], [cd("gpu0", 200, 20)], [cd("gpu0", 50, 5)]]},
            {N: [cd("gpu0", 300, 30, slots=1)]},
        ),
        (
            1,
            {
                N: [[cd("gpu0", 500, 50)], [cd("gpu0", 100, 10)]],
                P: [[cd("xpu0", 200, 20, P)], [cd("xpu0", 300, 30, P)]],
            },
            {N: [cd("gpu0", 500, 50, slots=1)], P: [cd("xpu0", 300, 30, P, slots=1)]},
        ),
        (
            1,
            {N: [[cd("gpu0", 200, 20), cd("gpu1", 300, 30)], [cd("gpu0", 100, 10), cd("gpu1", 150, 15)]]},
            {N: [cd("gpu0", 200, 20, slots=1), cd("gpu1", 300, 30, slots=1)]},
        ),
        (2, {N: [[], [], [], []]}, {N: []}),
        (0, {N: [[cd("gpu0", 100, 10)]] * 3}, {N: [cd("gpu0", 300, 30, slots=3)]}),  # MultiAppSameGPUSlots
        # a memory peak and a cores peak can come from different sides
        (1, {N: [[cd("gpu0", 900, 5)], [cd("gpu0", 100, 40)]]}, {N: [cd("gpu0", 900, 40, slots=1)]}),
    ],
)
def test_collapse_init_container_usage(init, raw, want):
    assert collapse_init_container_usage(raw, init) == want


def hami_pod(
    annotations: dict, *, phase="Running", init=0, deleting=False, init_status=None, name="p"
) -> dict:
    meta = {"name": name, "namespace": "ml", "uid": f"uid-{name}", "annotations": annotations}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    spec = {"containers": [{"name": "c"}], "initContainers": [{"name": f"i{i}"} for i in range(init)]}
    status: dict = {"phase": phase}
    if init_status is not None:
        status["initContainerStatuses"] = init_status
    return {"metadata": meta, "spec": spec, "status": status}


ASSIGNED = {"hami.io/vgpu-node": "node-a"}
DONE = {"state": {"terminated": {"exitCode": 0}}}
FAILED = {"state": {"terminated": {"exitCode": 1}}}


@pytest.mark.parametrize(
    ("pod", "counts", "mem"),
    [
        (hami_pod({NV: "g0,NVIDIA,1000,30:;"}), False, None),  # not assigned by HAMi
        (hami_pod({**ASSIGNED, NV: "g0,NVIDIA,1000,30:;"}), True, 1000),
        (hami_pod({**ASSIGNED, NV: "g0,NVIDIA,1000,30:;"}, phase="Pending"), True, 1000),
        (hami_pod({**ASSIGNED, NV: "g0,NVIDIA,1000,30:;"}, phase="Succeeded"), False, None),
        (hami_pod({**ASSIGNED, NV: "g0,NVIDIA,1000,30:;"}, phase="Failed"), False, None),
        (hami_pod({**ASSIGNED, NV: "g0,NVIDIA,1000,30:;"}, deleting=True), True, 1000),  # until gone
        (hami_pod(ASSIGNED), True, 0),  # assigned, nothing allocated yet: counts with no devices
        # init 4000 then app 1000: the peak while init runs, the app alone once init succeeded
        (hami_pod({**ASSIGNED, NV: "g0,NVIDIA,4000,0:;g0,NVIDIA,1000,0:;"}, init=1), True, 4000),
        (
            hami_pod({**ASSIGNED, NV: "g0,NVIDIA,4000,0:;g0,NVIDIA,1000,0:;"}, init=1, init_status=[FAILED]),
            True,
            4000,
        ),
        (
            hami_pod({**ASSIGNED, NV: "g0,NVIDIA,4000,0:;g0,NVIDIA,1000,0:;"}, init=1, init_status=[DONE]),
            True,
            1000,
        ),
    ],
)
def test_which_pods_count_and_what_they_hold(pod, counts, mem):
    alloc = pod_allocation(pod, SUPPORT_DEVICES)
    assert (alloc is not None) == counts
    if alloc is not None:
        assert alloc.node == "node-a" and alloc.error == ""
        assert sum(d.usedmem for _, d in alloc.devices) == mem


def test_a_malformed_annotation_is_an_error_and_holds_nothing():
    alloc = pod_allocation(hami_pod({**ASSIGNED, NV: "g0,NVIDIA,lots,30:;"}), SUPPORT_DEVICES)
    assert alloc is not None and alloc.devices == ()
    assert alloc.error == 'invalid memory field: strconv.ParseInt: parsing "lots": invalid syntax'


def mig_json(*entries) -> str:
    return orjson.dumps(
        [
            {
                "containerIndex": c,
                "deviceIndex": d,
                "gpuUUID": g,
                "profile": p,
                "placement": {"start": s, "size": z},
            }
            for c, d, g, p, s, z in entries
        ]
    ).decode()


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[{}]", "MIG allocation 0 is incomplete"),
        (
            mig_json((0, 0, "g", "1g.10gb", 0, 1), (0, 0, "g", "1g.10gb", 1, 1)),
            "duplicate MIG allocation for container 0 device 0",
        ),
        (
            '[{"gpuUUID":"g","profile":"1g.10gb","placement":{"start":0,"size":1},"migUUID":"MIG-1"}]',
            "MIG allocation 0 has partial runtime identity",
        ),
    ],
)
def test_mig_allocation_errors(text, error):
    with pytest.raises(MigAllocationError, match=error):
        decode_mig_allocations(text)


def test_node_usage_adds_slots_memory_cores_and_pods_per_card():
    pods = [
        pod_allocation(hami_pod({**ASSIGNED, NV: "g0,NVIDIA,20000,100:;"}, name="whole"), SUPPORT_DEVICES),
        pod_allocation(
            hami_pod({**ASSIGNED, NV: "g1,NVIDIA,1000,10:g2,NVIDIA,1000,10:;"}, name="two"), SUPPORT_DEVICES
        ),
        pod_allocation(hami_pod({**ASSIGNED, NV: "g1,NVIDIA,2000,20:;"}, name="three"), SUPPORT_DEVICES),
        pod_allocation(hami_pod({**ASSIGNED, NV: "g9,NVIDIA,2000,20:;"}, name="ghost"), SUPPORT_DEVICES),
        pod_allocation(hami_pod({**ASSIGNED, NV: "g1,NVIDIA,x,20:;"}, name="bad"), SUPPORT_DEVICES),
    ]
    usage = node_usage({"g0": "hami-core", "g1": "hami-core", "g2": "hami-core", "g3": "hami-core"}, pods)
    g0, g1, g2, g3 = (usage.devices[u] for u in ("g0", "g1", "g2", "g3"))
    assert (g0.used, g0.usedmem, g0.usedcores, g0.pods) == (
        1,
        20000,
        100,
        ["ml/whole"],
    )  # exclusive: 100 cores
    assert (g1.used, g1.usedmem, g1.usedcores, g1.pods) == (2, 3000, 30, ["ml/two", "ml/three"])
    assert (g2.used, g2.usedmem) == (1, 1000)
    assert (g3.used, g3.usedmem, g3.pods) == (0, 0, [])
    assert usage.unknown == [("ml/ghost", "g9")]  # a device the node does not register: drift


@pytest.mark.parametrize(
    ("modes", "mig", "want_mig", "unhealthy"),
    [
        ({"g0": "mig"}, [(0, 0, "g0", "1g.10gb", 6, 1)], {"g0": [("1g.10gb", MigPlacement(6, 1))]}, set()),
        ({"g0": "mig"}, [], {"g0": []}, {"g0"}),  # a MIG pod with no reservation
        ({"g0": "hami-core"}, [(0, 0, "g0", "1g.10gb", 6, 1)], {"g0": []}, {"g0"}),  # MIG task on hami-core
        # a reservation no device entry consumed: restored on the MIG device it names
        (
            {"g0": "mig", "g1": "mig"},
            [(0, 0, "g0", "1g.10gb", 6, 1), (0, 1, "g1", "2g.20gb", 0, 2)],
            {"g0": [("1g.10gb", MigPlacement(6, 1))], "g1": [("2g.20gb", MigPlacement(0, 2))]},
            set(),
        ),
        # a reservation on an unknown GPU: every MIG device of the node goes unhealthy
        (
            {"g0": "mig", "g1": "mig"},
            [(0, 0, "g0", "1g.10gb", 6, 1), (0, 1, "gx", "1g.10gb", 0, 1)],
            None,
            {"g0", "g1"},
        ),
    ],
)
def test_mig_reservations_count_as_hami_counts_them(modes, mig, want_mig, unhealthy):
    annotations = {**ASSIGNED, NV: "g0,NVIDIA,10240,14:;"}
    if mig:
        annotations["hami.io/vgpu-mig-allocations"] = mig_json(*mig)
    usage = node_usage(modes, [pod_allocation(hami_pod(annotations), SUPPORT_DEVICES)])
    if want_mig is not None:
        assert {u: d.mig for u, d in usage.devices.items()} == {u: want_mig.get(u, []) for u in modes}
    assert {u for u, d in usage.devices.items() if d.unhealthy} == unhealthy


def test_live_usage_makes_a_full_card_fail_and_a_freed_card_fit():
    """The same request against a node's zero-usage state and its live state, through HAMi's Fit."""
    from hami_sim.engine.allocations import apply_usage
    from hami_sim.engine.simulate import Simulator
    from tests.factories import gpu, node, pod

    sim = Simulator()
    n = node("live-1", [gpu(f"g{i}", index=i, devmem=23028) for i in range(2)])
    state = sim.inventory(n).state("live-1")
    ctx = sim.pod_context(pod(gpu_count=2, gpumem=20000))
    assert sim.evaluate(ctx, "live-1", state).fits
    held = [
        pod_allocation(hami_pod({**ASSIGNED, NV: "g0,NVIDIA,20000,0:;"}, name="a"), SUPPORT_DEVICES),
        pod_allocation(hami_pod({**ASSIGNED, NV: "g1,NVIDIA,4000,0:;"}, name="b"), SUPPORT_DEVICES),
    ]
    live = apply_usage(state, node_usage({"g0": "hami-core", "g1": "hami-core"}, held).devices)
    verdict = sim.evaluate(ctx, "live-1", live)
    assert not verdict.fits and verdict.reason == "2/2 CardInsufficientMemory"
    assert [d.usedmem for d in state.devices] == [0, 0]  # the zero-usage state is not touched
    freed = apply_usage(state, node_usage({"g0": "hami-core", "g1": "hami-core"}, held[1:]).devices)
    assert not sim.evaluate(ctx, "live-1", freed).fits  # g1 still holds 4000 of 23028
    assert sim.evaluate(ctx, "live-1", apply_usage(state, {})).fits


def test_live_usage_lists_the_app_class_of_the_pods_on_a_metax_sgpu_card():
    """HAMi's ``PodInfos``: MetaX sGPU reads the app class of the pods already on a card. Live usage
    keeps it per pod and card, so an ordinary pod cannot join a card running an online pod, an
    online pod can, and the same node at zero usage (a template) takes either."""
    from hami_sim.engine.allocations import apply_usage
    from hami_sim.engine.simulate import Simulator
    from hami_sim.engine.vendors import pod_info_annotations
    from tests.factories import node

    app_class = "metax-tech.com/sgpu-app-class"
    assert pod_info_annotations() == frozenset({app_class})
    card = {"uuid": "S-0", "totalDevCount": 16, "totalCompute": 100, "totalVRam": 65536, "healthy": True}
    sim = Simulator()
    n = node("live-m", annotations={"metax-tech.com/node-gpu-devices": orjson.dumps([card]).decode()})
    state = sim.inventory(n).state("live-m")
    sgpu = "hami.io/metax-sgpu-devices-allocated"
    online = hami_pod({**ASSIGNED, sgpu: "S-0,Metax-SGPU,1024,0:;", app_class: "online"}, name="online")
    plain = hami_pod({**ASSIGNED, sgpu: "S-0,Metax-SGPU,1024,10:;"}, name="plain")
    held = [pod_allocation(p, SUPPORT_DEVICES, pod_info_annotations()) for p in (online, plain)]
    assert [a.pod_info for a in held] == [((app_class, "online"),), ()]
    usage = node_usage({"S-0": ""}, held[:1])
    assert usage.devices["S-0"].pod_infos == [{app_class: "online"}]
    live = apply_usage(state, usage.devices)
    assert live.devices[0].pod_infos == ({app_class: "online"},)
    assert state.devices[0].pod_infos == ()  # the zero-usage state keeps no pods

    def asks(**annotations):
        resources = {
            "limits": {
                "metax-tech.com/sgpu": "1",
                "metax-tech.com/vcore": "10",
                "metax-tech.com/vmemory": "1",
            }
        }
        body = {
            "metadata": {"name": "q", "annotations": annotations},
            "spec": {"containers": [{"name": "c", "resources": resources}]},
        }
        return sim.pod_context(body)

    ordinary, online_pod = asks(), asks(**{app_class: "online"})
    assert sim.evaluate(ordinary, "live-m", state).fits
    verdict = sim.evaluate(ordinary, "live-m", live)
    assert not verdict.fits and verdict.reason == "1/1 CardAppClassMismatch"
    assert sim.evaluate(online_pod, "live-m", live).fits
    # a card holding only ordinary pods keeps online pods away, as before
    only_plain = apply_usage(state, node_usage({"S-0": ""}, held[1:]).devices)
    assert only_plain.devices[0].pod_infos == ()
    assert sim.evaluate(ordinary, "live-m", only_plain).fits
    assert sim.evaluate(online_pod, "live-m", only_plain).reason == "1/1 CardAppClassMismatch"


@pytest.mark.parametrize("init_status", [None, [DONE]])
def test_before_v2_10_every_containers_devices_add_up(init_status):
    """``init_peak`` off (v2.9, v2.8): ``getNodesUsage`` counts the init container's entry like any
    other (one slot, its memory added), running or succeeded."""
    pod = hami_pod({**ASSIGNED, NV: "g0,NVIDIA,4000,0:;g0,NVIDIA,1000,10:;"}, init=1, init_status=init_status)
    alloc = pod_allocation(pod, SUPPORT_DEVICES, init_peak=False)
    assert alloc is not None
    assert [(d.uuid, d.usedmem, d.usedcores, d.slots) for _, d in alloc.devices] == [("g0", 5000, 10, 2)]

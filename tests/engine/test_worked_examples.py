"""Worked examples of HAMi's device rules, each test named by its group and number.

7.1 calls NVIDIA's Fit directly, 7.5 fits whole pods (``fit_pod``/``Simulator``) with the global GPU
policy ``""`` (spread-like) and node policy binpack, 7.9 parses container resources.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.fit import fit_pod
from hami_sim.engine.policy import DEFAULT_WEIGHTS, compute_device_scores
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors.base import ResourceGetter
from hami_sim.engine.vendors.nvidia import NvidiaConfig, NvidiaVendor

from .helpers import VENDORS, dev, node_state, podview, policy, req

nvidia = NvidiaVendor()


def fit71(devices, request, annotations=None):
    return nvidia.fit(devices, request, podview(annotations=annotations), node_state(*devices), policy(""))


# -- 7.1 NVIDIA Fit() directly -------------------------------------------------------------------


def test_7_1_01_fit_success_chooses_last_device():
    out = fit71(
        [dev("dev-0", 100, 0, 128, 0, 100, 0), dev("dev-1", 100, 0, 128, 0, 100, 0)], req(1, 64, 0, 50)
    )
    assert out.ok and out.reason == ""
    assert [(d.uuid, d.usedmem, d.usedcores) for d in out.devices] == [("dev-1", 64, 50)]


def test_7_1_02_memory_not_enough():
    out = fit71([dev("dev-0", 100, 0, 128, 0, 100, 0)], req(1, 512, 0, 50))
    assert not out.ok and out.reason == "1/1 CardInsufficientMemory"


def test_7_1_03_core_not_enough():
    out = fit71([dev("dev-0", 100, 0, 1024, 0, 100, 100)], req(1, 512, 0, 50))
    assert not out.ok and out.reason == "1/1 CardInsufficientCore"


def test_7_1_04_request_type_mismatch():
    out = fit71([dev("dev-0", 100, 0, 1024, 0, 100, 0)], req(1, 512, 0, 50, type="OtherType"))
    assert not out.ok and out.reason == "1/1 CardTypeMismatch"


def test_7_1_05_use_uuid_mismatch():
    out = fit71(
        [dev("dev-1", 100, 0, 1280, 0, 100, 0)], req(2, 512, 0, 50), {"nvidia.com/use-gpuuuid": "dev-0"}
    )
    assert not out.ok and out.reason == "1/1 CardUuidMismatch"


def test_7_1_06_nouse_uuid_mismatch():
    out = fit71(
        [dev("dev-0", 100, 0, 1280, 0, 100, 0)], req(2, 512, 0, 50), {"nvidia.com/nouse-gpuuuid": "dev-0"}
    )
    assert not out.ok and out.reason == "1/1 CardUuidMismatch"


def test_7_1_07_time_slicing_exhausted():
    out = fit71([dev("dev-0", 100, 100, 1280, 0, 100, 0)], req(1, 512, 0, 50))
    assert not out.ok and out.reason == "1/1 CardTimeSlicingExhausted"


def test_7_1_08_cores_above_100_are_clamped():
    out = fit71([dev("dev-0", 100, 0, 1280, 0, 100, 0)], req(1, 512, 0, 120))
    assert out.ok
    assert [(d.uuid, d.usedcores) for d in out.devices] == [("dev-0", 100)]


def test_7_1_09_exclusive_device_allocate_conflict():
    out = fit71([dev("dev-0", 100, 20, 1280, 0, 100, 0)], req(1, 512, 0, 100))
    assert not out.ok and out.reason == "1/1 ExclusiveDeviceAllocateConflict"


def test_7_1_10_compute_units_exhausted():
    out = fit71([dev("dev-0", 100, 20, 1280, 0, 100, 100)], req(1, 512, 0, 0))
    assert not out.ok and out.reason == "1/1 CardComputeUnitsExhausted"


def test_7_1_11_allocated_cards_insufficient_request():
    out = fit71([dev("dev-0", 100, 20, 1280, 0, 100, 10)], req(2, 512, 0, 20))
    assert not out.ok and out.reason == "1/1 AllocatedCardsInsufficientRequest"


def test_7_1_12_partial_allocation_counts_collected_devices():
    devices = [dev("dev-0", 100, 0, 1280, 0, 100, 0, index=0), dev("dev-1", 100, 0, 1280, 0, 100, 0, index=1)]
    out = fit71(devices, req(3, 512, 0, 20))
    assert not out.ok and out.reason == "2/2 AllocatedCardsInsufficientRequest"


def test_7_1_13_memory_percentage_resolves_per_device():
    out = fit71([dev("dev-0", 100, 20, 1280, 0, 100, 10)], req(1, 0, 10, 20))
    assert out.ok
    assert [(d.uuid, d.usedmem, d.usedcores) for d in out.devices] == [("dev-0", 128, 20)]


def test_7_1_14_card_not_health():
    out = fit71([dev("dev-0", 100, 20, 1280, 0, 100, 10, health=False)], req(1, 0, 10, 20))
    assert not out.ok and out.reason == "1/1 CardNotHealth"


# -- 7.5 calcScore ---------------------------------------------------------------------------------

R = req(1, 1000, 101, 30)  # Mem 1000, Cores 30 (MemPct unset)


def fit75(state, pod, gpu_policy=""):
    return fit_pod(state, pod, VENDORS, policy(gpu_policy), DEFAULT_WEIGHTS)


def chosen(fit):
    return [[d.uuid for d in c] for c in fit.containers]


def test_7_5_44_one_device_fits_score_zero():
    fit = fit75(node_state(dev("uuid1")), podview(R))
    assert fit.ok and chosen(fit) == [["uuid1"]]
    assert (fit.containers[0][0].usedmem, fit.containers[0][0].usedcores) == (1000, 30)
    assert fit.score_before == 0
    after = fit.usage_after[0]
    assert (after.used, after.usedmem, after.usedcores) == (1, 1000, 30)


def test_7_5_45_used_device_scores_15():
    fit = fit75(node_state(dev("uuid1", 10, 5, 8000, 4000, 100, 50)), podview(R))
    assert fit.ok and chosen(fit) == [["uuid1"]]
    assert fit.score_before == 15


def test_7_5_46_two_idle_devices_spread_takes_uuid2():
    fit = fit75(node_state(dev("uuid1"), dev("uuid2")), podview(R))
    assert chosen(fit) == [["uuid2"]] and fit.score_before == 0


def test_7_5_47_spread_prefers_idle_device_device_scores():
    devices = [dev("uuid1"), dev("uuid2", 10, 5, 8000, 4000, 100, 50)]
    fit = fit75(node_state(*devices), podview(R))
    assert chosen(fit) == [["uuid1"]]
    assert fit.score_before == pytest.approx(7.5, abs=1e-6)
    probe = [d.copy() for d in devices]
    compute_device_scores(probe, {"NVIDIA": R}, DEFAULT_WEIGHTS)
    assert [d.score for d in probe] == pytest.approx([5.25, 20.25], abs=1e-5)


def test_7_5_48_two_idle_devices_nums_2():
    fit = fit75(node_state(dev("uuid1"), dev("uuid2")), podview(req(2, 1000, 101, 30)))
    assert chosen(fit) == [["uuid2", "uuid1"]] and fit.score_before == 0


def test_7_5_49_both_used_nums_2():
    devices = [dev("uuid1", 10, 5, 8000, 4000, 100, 50), dev("uuid2", 10, 5, 8000, 4000, 100, 50)]
    fit = fit75(node_state(*devices), podview(req(2, 1000, 101, 30)))
    assert chosen(fit) == [["uuid2", "uuid1"]] and fit.score_before == 15


def _sim(gpu_policy="", node_policy="binpack"):
    return Simulator(EngineConfig(node_policy=node_policy, gpu_policy=gpu_policy, vendors=(NvidiaVendor(),)))


def _node(name, *devices):
    from tests.factories import gpu, node

    return node(
        name,
        [
            gpu(d.id, index=d.index, count=d.count, devmem=d.totalmem, devcore=d.totalcore, type="NVIDIA")
            for d in devices
        ],
    )


def test_7_5_50_two_nodes_one_idle_device_each():
    from tests.factories import pod

    sim = _sim()
    ctx = sim.pod_context(pod(gpumem=1000, gpucores=30))
    verdicts = sim.filter_nodes(ctx, [_node("node1", dev("uuid1")), _node("node2", dev("uuid2"))])
    assert [(v.name, v.fits) for v in verdicts] == [("node1", True), ("node2", True)]
    assert [v.fit.score_before for v in verdicts] == [0, 0]


def test_7_5_51_node_scores_before_allocation():
    used = fit75(node_state(dev("uuid1", 10, 5, 8000, 4000, 100, 50), name="node1"), podview(R))
    idle = fit75(node_state(dev("uuid1"), name="node2"), podview(R))
    assert (used.score_before, idle.score_before) == (15, 0)


def test_7_5_52_empty_containers_keep_their_slots():
    state = node_state(dev("uuid1"))
    assert chosen(fit75(state, podview(R, None))) == [["uuid1"], []]
    assert chosen(fit75(state, podview(None, R))) == [[], ["uuid1"]]
    assert chosen(fit75(state, podview(None, R, None))) == [[], ["uuid1"], []]


def test_7_5_53_second_container_spreads_to_other_device():
    state = node_state(dev("uuid1", index=0), dev("uuid2", index=1))
    fit = fit75(state, podview(req(1, 8000, 101, 30), req(1, 1000, 101, 30)))
    got = [[(d.uuid, d.idx, d.usedmem, d.usedcores) for d in c] for c in fit.containers]
    assert got == [[("uuid2", 1, 8000, 30)], [("uuid1", 0, 1000, 30)]]


def test_7_5_54_insufficient_memory():
    fit = fit75(node_state(dev("uuid1", 10, 0, 50)), podview(R))
    assert not fit.ok and fit.reason == "1/1 CardInsufficientMemory"


def test_7_5_55_two_failing_nodes():
    from tests.factories import pod

    sim = _sim()
    ctx = sim.pod_context(pod(gpumem=1000, gpucores=30))
    verdicts = sim.filter_nodes(
        ctx, [_node("node1", dev("uuid1", 10, 0, 50)), _node("node2", dev("uuid2", 10, 0, 50))]
    )
    assert [(v.name, v.fits, v.reason) for v in verdicts] == [
        ("node1", False, "1/1 CardInsufficientMemory"),
        ("node2", False, "1/1 CardInsufficientMemory"),
    ]


def test_7_5_56_init_container_memory_failure():
    state = node_state(dev("uuid1", 10, 0, 8000, 7500), dev("uuid2", 10, 0, 8000, 7500))
    fit = fit75(state, podview(req(1, 100, 101, 0), init=(req(1, 4000, 101, 0),)))
    assert not fit.ok and fit.reason == "2/2 CardInsufficientMemory"
    assert fit.failed_container == 0


def test_7_5_57_init_container_core_failure():
    state = node_state(dev("uuid1", 10, 0, 8000, 0, 100, 80), dev("uuid2", 10, 0, 8000, 0, 100, 80))
    fit = fit75(state, podview(req(1, 0, 101, 10), init=(req(1, 0, 101, 30),)))
    assert not fit.ok and fit.reason == "2/2 CardInsufficientCore"


def test_7_5_58_init_containers_then_app():
    fit = fit75(node_state(dev("uuid1")), podview(R, init=(None, R)))
    assert fit.ok and chosen(fit) == [[], ["uuid1"], ["uuid1"]]


def test_7_5_59_binpack_init_and_app_same_device():
    fit = fit75(node_state(dev("uuid1"), dev("uuid2")), podview(R, init=(R,)), gpu_policy="binpack")
    assert chosen(fit) == [["uuid2"], ["uuid2"]]


def test_7_5_60_init_nums_2_app_nums_1():
    fit = fit75(node_state(dev("uuid1"), dev("uuid2")), podview(R, init=(req(2, 1000, 101, 30),)))
    assert chosen(fit) == [["uuid2", "uuid1"], ["uuid2"]]


def test_7_5_61_two_nodes_two_containers():
    for name, uuid in (("node1", "uuidA"), ("node2", "uuidB")):
        fit = fit75(node_state(dev(uuid), name=name), podview(req(1, 1000, 101, 30), req(1, 1000, 101, 40)))
        got = [[(d.uuid, d.usedmem, d.usedcores) for d in c] for c in fit.containers]
        assert got == [[(uuid, 1000, 30)], [(uuid, 1000, 40)]]
        assert fit.score_before == 0


# -- 7.9 GenerateResourceRequests ----------------------------------------------------------------


def parse(limits=None, requests=None, **config):
    vendor = NvidiaVendor(NvidiaConfig(**config))
    out = vendor.container_request(ResourceGetter(limits or {}, requests or {}))
    if out is None or out.nums == 0:
        return None
    return (out.nums, out.memreq, out.mem_percentage_req, out.coresreq)


G, M, P, C = "nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores"


@pytest.mark.parametrize(
    ("limits", "requests", "config", "expected"),
    [
        pytest.param({G: "1"}, None, {}, (1, 0, 100, 0), id="gpu1"),
        pytest.param({G: "2", M: "4096"}, None, {}, (2, 4096, 101, 0), id="gpu2-mem4096"),
        pytest.param({G: "1", P: "50"}, None, {}, (1, 0, 50, 0), id="pct50"),
        pytest.param({G: "1", P: "150"}, None, {}, (1, 0, 100, 0), id="pct150"),
        pytest.param({G: "1", P: str(2**32 + 50)}, None, {}, (1, 0, 100, 0), id="pct2^32+50"),
        pytest.param({G: "1", P: "101"}, None, {}, (1, 0, 100, 0), id="pct101"),
        pytest.param({G: "1", C: "50"}, None, {}, (1, 0, 100, 50), id="cores50"),
        pytest.param({M: "1024", C: "50"}, None, {}, None, id="no-gpu"),
        pytest.param(None, {G: "1"}, {}, (1, 0, 100, 0), id="requests-only"),
        pytest.param({G: "1", P: "0"}, None, {}, (1, 0, 100, 0), id="pct0"),
        pytest.param({G: "1", P: "-1"}, None, {}, (1, 0, 100, 0), id="pct-1"),
        pytest.param({G: "1", P: "0", M: "2000"}, None, {}, (1, 2000, 101, 0), id="pct0-mem2000"),
        pytest.param({G: "1", M: "16Gi"}, None, {}, None, id="mem16Gi"),
        pytest.param({G: "1", M: "16.0Gi"}, None, {}, None, id="mem16.0Gi"),
        pytest.param({G: "1", M: "1024"}, None, {"memory_factor": 2}, (1, 2048, 101, 0), id="factor2-1024"),
        pytest.param({G: "1", M: "1Gi"}, None, {"memory_factor": 2}, None, id="factor2-1Gi"),
        pytest.param({G: "1"}, None, {"default_memory": 512}, (1, 512, 101, 0), id="defmem-gpu-only"),
        pytest.param({G: "1", P: "0"}, None, {"default_memory": 512}, (1, 512, 101, 0), id="defmem-pct0"),
        pytest.param({G: "1", M: "0"}, None, {"default_memory": 512}, (1, 512, 101, 0), id="defmem-mem0"),
    ],
)
def test_7_9_75_generate_resource_requests(limits, requests, config, expected):
    assert parse(limits, requests, **config) == expected


def test_7_9_75_limits_win_over_requests():
    assert parse({G: "2"}, {G: "1", M: "100"}) == (2, 100, 101, 0)


# -- section 5: the #2046 template-node tests (custom resource names hami.io/*) ------------------------

HAMI_NAMES = NvidiaConfig(
    resource_count_name="hami.io/gpu",
    resource_memory_name="hami.io/gpumem",
    resource_memory_percentage_name="hami.io/gpumem-percentage",
    resource_core_name="hami.io/gpucores",
)
TEMPLATE_A = '[{"id":"GPU-0","count":10,"devmem":8192,"devcore":100,"type":"NVIDIA-A100","numa":0,"health":true,"index":0,"mode":"hami-core"}]'


def _hami_pod(gpu, cores, mem):
    limits = {"hami.io/gpu": str(gpu), "hami.io/gpucores": str(cores), "hami.io/gpumem": str(mem)}
    return {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
    }


def _template(name, annotations):
    return {"metadata": {"name": name, "annotations": annotations}}


def test_5_filter_uses_template_nodes():
    sim = Simulator(EngineConfig(vendors=(NvidiaVendor(HAMI_NAMES),)))
    [v] = sim.filter_nodes(
        sim.pod_context(_hami_pod(1, 20, 1024)),
        [_template("template-node-a", {"hami.io/node-nvidia-register": TEMPLATE_A})],
    )
    assert v.fits and [d.uuid for d in v.fit.containers[0]] == ["GPU-0"]


def test_5_filter_template_nodes_returns_detailed_failure_reason():
    sim = Simulator(EngineConfig(vendors=(NvidiaVendor(HAMI_NAMES),)))
    node = _template("template-node-unfit", {"hami.io/node-nvidia-register": TEMPLATE_A})
    [v] = sim.filter_nodes(sim.pod_context(_hami_pod(1, 20, 16384)), [node])
    assert (v.fits, v.reason) == (False, "1/1 CardInsufficientMemory")


def test_5_filter_template_nodes_missing_register_annotation():
    sim = Simulator(EngineConfig(vendors=(NvidiaVendor(HAMI_NAMES),)))
    [v] = sim.filter_nodes(sim.pod_context(_hami_pod(1, 0, 0)), [_template("template-node-cold-zero", {})])
    assert (v.fits, v.unresolvable, v.reason) == (False, True, "node unregistered")


def test_5_default_names_do_not_see_custom_resources():
    sim = Simulator(EngineConfig(vendors=(NvidiaVendor(),)))
    ctx = sim.pod_context(_hami_pod(1, 20, 16384))
    assert not ctx.pod.requests.has_requests
    [v] = sim.filter_nodes(ctx, [_template("template-node-cold-zero", {})])
    assert v.fits  # no HAMi request: fits everywhere

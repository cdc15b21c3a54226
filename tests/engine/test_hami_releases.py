"""The HAMi release a simulator follows (``hami_sim/engine/hami_releases.py``): which releases are
read, what each rule is under each release, and what differs between two of them."""

from __future__ import annotations

import dataclasses

import pytest

from hami_sim.engine.hami_releases import (
    DEFAULT_RELEASE,
    INIT_APART,
    INIT_IGNORED,
    INIT_SUMMED,
    SUPPORTED_RELEASES,
    HamiReleaseError,
    HamiRules,
    parse_release,
    rule_differences,
    rules_for,
)
from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.factories import container, gpu, gpu_node, node, pod


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("2.10", "2.10"),
        ("v2.10.0", "2.10"),
        ("2.9", "2.9"),
        ("2.9.0", "2.9"),
        ("v2.9.0", "2.9"),
        ("v2.8.3", "2.8"),
        ("2.8", "2.8"),
        (" 2.9 ", "2.9"),
    ],
)
def test_a_release_is_read_in_every_common_spelling(text, release):
    assert parse_release(text) == release


@pytest.mark.parametrize("text", ["2.7", "v2.11.0", "3.0", "latest", "", "2", "2.9.0.1", "v2.x"])
def test_an_unsupported_release_is_refused_naming_the_supported_ones(text):
    with pytest.raises(HamiReleaseError) as caught:
        parse_release(text)
    assert "2.8 (v2.8.3), 2.9 (v2.9.0), 2.10 (v2.10.0)" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_the_default_is_the_newest_release():
    assert SUPPORTED_RELEASES == ("2.8", "2.9", "2.10")
    assert DEFAULT_RELEASE == "2.10" and rules_for(DEFAULT_RELEASE) == HamiRules()


@pytest.mark.parametrize(
    ("release", "init_containers"), [("2.8", INIT_IGNORED), ("2.9", INIT_SUMMED), ("v2.10.0", INIT_APART)]
)
def test_each_release_counts_init_containers_its_own_way(release, init_containers):
    assert rules_for(release).init_containers == init_containers


def test_the_differences_between_two_releases_name_the_rule_and_the_pull_request():
    [change] = [c for c in rule_differences("2.9", "2.10") if c.name == "init_containers"]
    assert change.pr == 1773 and "#1773" in change.description
    # both ways round, the same rules
    assert rule_differences("2.10", "2.9") == rule_differences("2.9", "2.10")
    # a rule that changed twice names both changes, the newer pull request first in ``pr``
    [twice] = [c for c in rule_differences("2.8", "2.10") if c.name == "init_containers"]
    assert twice.pr == 1773 and "#1650" in twice.description
    assert rule_differences("2.9", "2.9") == ()


def test_one_rule_taken_from_another_release_is_the_only_difference():
    mixed = dataclasses.replace(rules_for("2.9"), init_containers=rules_for("2.10").init_containers)
    assert "init_containers" not in {c.name for c in rule_differences(mixed, "2.10")}
    assert [c.name for c in rule_differences(mixed, "2.9")] == ["init_containers"]


# A pod whose init container (20000 MiB) is larger than its main container (10000 MiB), on one
# A10 of 23028 MiB: v2.10 runs the init container alone first, v2.9 adds the two up, v2.8 never
# counts the init container.
BIG_INIT = pod(containers=[container(gpumem=10000)], init=[container("init", gpumem=20000)])


@pytest.mark.parametrize(
    ("release", "fits", "reason", "usedmem"),
    [
        ("2.10", True, "", 20000),
        ("2.9", False, "1/1 CardInsufficientMemory", None),
        ("2.8", True, "", 10000),
    ],
)
def test_an_init_container_larger_than_the_main_one_on_a_full_card(release, fits, reason, usedmem):
    sim = Simulator(EngineConfig(hami_release=release, cache_bytes=0))
    ctx = sim.pod_context(BIG_INIT)
    [verdict] = sim.filter_nodes(ctx, [gpu_node("n", 1)])
    assert (verdict.fits, verdict.reason) == (fits, reason)
    if fits:
        state = sim.annotation_inventory(gpu_node("n", 1)).state("n")
        fit = sim.evaluate(ctx, "n", state)
        assert [d.usedmem for d in fit.device_fit.usage_after] == [usedmem]


def test_v2_9_adds_init_and_main_containers_up_when_they_fit_together():
    small = pod(containers=[container(gpumem=3000)], init=[container("init", gpumem=5000)])
    for release, usedmem in (("2.9", 8000), ("2.10", 5000), ("2.8", 3000)):
        sim = Simulator(EngineConfig(hami_release=release, cache_bytes=0))
        state = sim.annotation_inventory(gpu_node("n", 1)).state("n")
        fit = sim.evaluate(sim.pod_context(small), "n", state)
        assert fit.fits and [d.usedmem for d in fit.device_fit.usage_after] == [usedmem], release


def test_a_mixed_rule_set_overrides_the_release():
    mixed = dataclasses.replace(rules_for("2.9"), init_containers=INIT_APART)
    sim = Simulator(EngineConfig(hami_release="2.9", hami_rules=mixed, cache_bytes=0))
    [verdict] = sim.filter_nodes(sim.pod_context(BIG_INIT), [gpu_node("n", 1)])
    assert verdict.fits


# -- one case per rule that differs between v2.9.0 and v2.10.0, as a user sees it ---------------------
GPU_POLICY = "hami.io/gpu-scheduler-policy"


def _verdict(release: str, pod_obj: dict, node_obj: dict, used: dict[int, int] | None = None):
    """The pod on the node under ``release``; ``used``: MiB already used per card index."""
    sim = Simulator(EngineConfig(hami_release=release, cache_bytes=0))
    ctx = sim.pod_context(pod_obj)
    state = sim.annotation_inventory(node_obj).state("n")
    for dev in state.devices:
        dev.usedmem = (used or {}).get(dev.index, 0)
        dev.used = 1 if dev.usedmem else 0
    return sim.evaluate(ctx, "n", state)


def _chosen(verdict) -> list[str]:
    return [d.uuid for c in verdict.device_fit.containers for d in c] if verdict.fits else []


TWO_NUMA = node("n", [gpu("GPU-0", numa=1), gpu("GPU-1", index=1, numa=0)])
TWO = gpu_node("n", 2)
MIXED = node("n", [gpu("GPU-0"), gpu("GPU-1", index=1), gpu("GPU-2", index=2, type="NVIDIA-Tesla T4")])


@pytest.mark.parametrize(
    ("rule", "pod_obj", "node_obj", "used", "v2_9", "v2_10"),
    [
        # the fuller card is on NUMA 1: v2.10 binpack takes it, v2.9 walks NUMA 0's card first
        ("score_first_sort", pod(gpumem=1000, annotations={GPU_POLICY: "binpack"}), TWO_NUMA, {0: 10000},
         ["GPU-1"], ["GPU-0"]),
        # a chain: v2.10 reads binpack first; v2.9 reads one unknown value, which sorts as spread
        ("policy_combinations", pod(gpumem=1000, annotations={GPU_POLICY: "binpack,numa"}), TWO, {0: 10000},
         ["GPU-n-1"], ["GPU-n-0"]),
        # mutex: v2.10 refuses the used card; v2.9 knows no mutex
        ("mutex_policy", pod(gpumem=1000, annotations={GPU_POLICY: "mutex"}), gpu_node("n", 1), {0: 10000},
         ["GPU-n-0"], "1/1 ExclusiveDeviceAllocateConflict"),
        # the per-GPU cordon annotation
        ("device_cordon", pod(gpumem=1000), node("n", [gpu("GPU-0")], annotations={"hami.io/device-cordon": "GPU-0"}),
         None, ["GPU-0"], "1/1 CardCordoned"),
        # three cards asked, two A10s found: v2.10 counts them, v2.9 counts one device type
        ("insufficient_counts_devices", pod(gpu_count=3, gpumem=1000, annotations={"nvidia.com/use-gputype": "A10"}),
         MIXED, None, "1/3 AllocatedCardsInsufficientRequest, 1/3 CardTypeMismatch",
         "1/3 CardTypeMismatch, 2/3 AllocatedCardsInsufficientRequest"),
        # 150% of a card: v2.10 clamps to 100, v2.9 asks more than the card holds
        ("nvidia_request_checks", pod(mem_pct=150), gpu_node("n", 1), None,
         "1/1 CardInsufficientMemory", ["GPU-n-0"]),
    ],
)  # fmt: skip
def test_each_rule_answers_as_its_release(rule, pod_obj, node_obj, used, v2_9, v2_10):
    assert rule in {c.name for c in rule_differences("2.9", "2.10")}
    for release, want in (("2.9", v2_9), ("2.10", v2_10)):
        verdict = _verdict(release, pod_obj, node_obj, used)
        got = _chosen(verdict) if isinstance(want, list) else verdict.reason
        assert got == want, release


def test_a_zero_percentage_asks_the_whole_card_only_under_v2_10():
    zero = pod(mem_pct=0)
    for release, usedmem in (("2.9", 0), ("2.10", 23028)):
        [[chosen]] = _verdict(release, zero, gpu_node("n", 1)).device_fit.containers
        assert chosen.usedmem == usedmem, release


def test_scoring_weights_are_read_only_under_v2_10():
    from hami_sim.engine.policy import WeightsError

    bad = pod(gpumem=1000, annotations={"hami.io/device-scoring-weights": "slot=1"})
    assert _verdict("2.9", bad, gpu_node("n", 1)).fits
    with pytest.raises(WeightsError, match="expected slot, core, and memory weights"):
        _verdict("2.10", bad, gpu_node("n", 1))


@pytest.mark.parametrize(("release", "reason"), [("2.9", ""), ("2.10", "1/1 CardNotHealth")])
def test_an_unhealthy_hygon_card_is_skipped_only_under_v2_10(release, reason):
    from hami_sim.engine.vendors import HygonVendor
    from tests.vendors.harness import for_release, usage

    card = usage("dcu-0", type="DCU", count=10, totalmem=16384, totalcore=100, health=False)
    outcome = for_release(release).fit(HygonVendor(), [card], (1, "DCU", 1024, 0, 10))
    assert (outcome.ok, outcome.reason) == (not reason, reason)


@pytest.mark.parametrize(("release", "reason"), [("2.9", "NodeInsufficientDevice"), ("2.10", "")])
def test_several_mig_instances_of_one_gpu_only_under_v2_10(release, reason):
    """Three 1g instances asked of one MIG-mode A100: v2.10 takes them from its placements; v2.9
    refuses the count against the node's one GPU before any Fit."""
    from hami_sim.engine.fit import fit_pod
    from hami_sim.engine.policy import DEFAULT_WEIGHTS

    from .helpers import VENDORS, node_state, podview, policy, req
    from .test_fit_rules import mig_dev

    out = fit_pod(node_state(mig_dev()), podview(req(3, 4000)), VENDORS, policy("", {}), DEFAULT_WEIGHTS,
                  rules=rules_for(release))  # fmt: skip
    assert (out.ok, out.reason) == (not reason, reason)
    assert "count_by_type" in {c.name for c in rule_differences("2.9", "2.10")}


def test_an_amd_node_counted_in_capacity_takes_whole_cards_only_before_v2_10():
    """v2.9's AMD backend reads capacity amd.com/gpu (whole MI300X cards); v2.10's reads the vGPU
    registration, which this node does not carry."""
    amd_node = node("n", [], capacity={"amd.com/gpu": "2", "cpu": "8", "memory": "64Gi", "pods": "110"})
    amd_node["metadata"]["annotations"] = {}
    amd_pod = pod(containers=[container(resources={"limits": {"amd.com/gpu": "2"}})])
    old = Simulator(EngineConfig(hami_release="2.9", cache_bytes=0))
    [verdict] = old.filter_nodes(old.pod_context(amd_pod), [amd_node])
    assert verdict.fits
    assert sorted(d.uuid for c in verdict.device_fit.containers for d in c) == ["n-AMDGPU-0", "n-AMDGPU-1"]
    new = Simulator(EngineConfig(hami_release="2.10", cache_bytes=0))
    [verdict] = new.filter_nodes(new.pod_context(amd_pod), [amd_node])
    assert not verdict.fits


@pytest.mark.parametrize(
    ("release", "biren", "vastai", "ascend_910c"),
    [("2.8", False, False, False), ("2.9", False, True, True), ("2.10", True, True, True)],
)
def test_a_release_has_only_the_backends_it_brought(release, biren, vastai, ascend_910c):
    """A pod asking for a resource no backend of the release manages is no HAMi pod (it asks for no
    device, and fits a node without such devices): v2.9 manages no Biren card; v2.8 no Vastai one,
    and its chart lists no Ascend910C chip."""
    sim = Simulator(EngineConfig(hami_release=release, cache_bytes=0))
    present = ("Biren" in sim.vendors, "Vastai" in sim.vendors, "Ascend910C" in sim.vendors)
    assert present == (biren, vastai, ascend_910c)
    assert "Ascend910B3" in sim.vendors  # the other chips are every release's
    biren_pod = pod(containers=[container(resources={"limits": {"birentech.com/gpu": "1"}})])
    [verdict] = sim.filter_nodes(sim.pod_context(biren_pod), [gpu_node("n", 1)])
    assert verdict.fits is not biren
    npu_pod = pod(containers=[container(resources={"limits": {"huawei.com/Ascend910C": "1"}})])
    assert sim.pod_context(npu_pod).pod.requests.has_requests is ascend_910c  # a HAMi pod, or not


@pytest.mark.parametrize(
    ("release", "annotations", "memreq", "reason"),
    [
        ("2.9", {}, 8738, "1/1 ModeNotFit"),  # part of a card, no mode: refused by a hami-core node
        ("2.10", {}, 8738, ""),
        ("2.9", {"huawei.com/vnpu-mode": "hami-core"}, 32768, ""),  # whole card: not gated before
        ("2.10", {"huawei.com/vnpu-mode": "hami-core"}, 32768, ""),
    ],
)
def test_the_ascend_mode_gate_of_each_release(release, annotations, memreq, reason):
    from tests.vendors.hami_v2_10 import test_ascend as t
    from tests.vendors.harness import for_release, usage

    config = t.FIT_CHIPS[0]
    vendor = t.AscendVendor(config)
    devices = t.on_node(
        vendor, [usage(type=config.common_word, **t.npu("dev-0", totalmem=32768))], t.CORE_NODE
    )
    outcome = for_release(release).fit(vendor, devices, (1, config.common_word, memreq, 0, 0), annotations)
    assert (outcome.ok, outcome.reason) == (not reason, reason)


def test_an_enflame_node_counted_in_capacity_shares_gcus_only_before_v2_10():
    """v2.9's Enflame backend reads capacity enflame.com/gcu-count (GCUs shared by percentage); a
    container asking more than a GCU's share left is refused. v2.10's reads the DRS registration and
    has no enflame.com/vgcu resource: the same pod asks HAMi for nothing."""
    capacity = {"enflame.com/gcu-count": "2", "cpu": "8", "memory": "64Gi", "pods": "110"}
    gcu_node = node("n", [], capacity=capacity)
    gcu_node["metadata"]["annotations"] = {}

    def asking(share: str) -> dict:
        return pod(
            containers=[
                container(
                    resources={"limits": {"enflame.com/vgcu": "1", "enflame.com/vgcu-percentage": share}}
                )
            ]
        )

    old = Simulator(EngineConfig(hami_release="2.9", cache_bytes=0))
    [verdict] = old.filter_nodes(old.pod_context(asking("60")), [gcu_node])
    assert verdict.fits
    assert [(d.uuid, d.usedmem) for c in verdict.device_fit.containers for d in c] == [("n-enflame-1", 60)]
    [verdict] = old.filter_nodes(old.pod_context(asking("101")), [gcu_node])
    assert not verdict.fits
    new = Simulator(EngineConfig(hami_release="2.10", cache_bytes=0))
    assert not new.pod_context(asking("60")).pod.requests.has_requests

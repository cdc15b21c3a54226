"""NVIDIA's Fit checks in HAMi's order, fitInDevices, and the reasons (docs/device-rules.md, "Fit").

Each test names the rule it proves. Direct ``fit`` calls walk the device list from the end, as HAMi
does; ``fit_pod`` tests go through scoring, sorting and the NodeInsufficientDevice gate.
"""

from __future__ import annotations

from hami_sim.engine import reasons as R
from hami_sim.engine.fit import fit_pod
from hami_sim.engine.model import MigPlacement, MigProfile
from hami_sim.engine.policy import DEFAULT_WEIGHTS
from hami_sim.engine.vendors.nvidia import NvidiaVendor

from .helpers import VENDORS, dev, node_state, podview, policy, req

nvidia = NvidiaVendor()


def fit(devices, request, annotations=None, *, gpu_policy="", cordoned=(), pair_scores=None):
    annotations = annotations or {}
    pol = policy(gpu_policy, annotations)
    state = node_state(*devices, cordoned=cordoned, pair_scores=pair_scores)
    return nvidia.fit(devices, request, podview(annotations=annotations), state, pol)


def uuids(outcome):
    return [d.uuid for d in outcome.devices]


# -- 3.2 check 1: health ----------------------------------------------------------------------------


def test_health_is_checked_before_cordon():
    out = fit([dev("g0", health=False)], req(), cordoned={"g0"})
    assert out.reason == "1/1 CardNotHealth"


# -- 3.2 check 2: cordon ----------------------------------------------------------------------------


def test_cordoned_device_is_skipped_and_counted():
    out = fit([dev("g0"), dev("g1")], req(1, 100), cordoned={"g1"})
    assert out.ok and uuids(out) == ["g0"]
    out = fit([dev("g0"), dev("g1")], req(1, 100), cordoned={"g0", "g1"})
    assert out.reason == "2/2 CardCordoned"


def test_cordon_comes_before_type_check():
    out = fit([dev("g0")], req(type="OtherType"), cordoned={"g0"})
    assert out.reason == "1/1 CardCordoned"


def test_cordon_annotation_is_read_by_the_simulator():
    from hami_sim.engine.simulate import EngineConfig, Simulator
    from tests.factories import gpu, node, pod

    sim = Simulator(EngineConfig(vendors=(NvidiaVendor(),)))
    n = node(
        "n", [gpu("GPU-0"), gpu("GPU-1", index=1)], annotations={"hami.io/device-cordon": " GPU-0 , ,GPU-1"}
    )
    [verdict] = sim.filter_nodes(sim.pod_context(pod(gpumem=100)), [n])
    assert verdict.reason == "2/2 CardCordoned"


# -- 3.2 check 3: type, use-gputype / nouse-gputype, vgpu-mode ----------------------------------------


def test_use_gputype_is_a_case_insensitive_substring_match():
    a100 = dev("g0", type="NVIDIA A100-SXM4-80GB")
    assert fit([a100], req(1, 100), {"nvidia.com/use-gputype": "a10"}).ok  # A10 matches A100
    assert fit([a100], req(1, 100), {"nvidia.com/use-gputype": "T4, A100"}).ok
    assert fit([a100], req(1, 100), {"nvidia.com/use-gputype": "T4"}).reason == "1/1 CardTypeMismatch"


def test_nouse_gputype_rejects_matching_cards():
    devices = [dev("g0", type="NVIDIA A10"), dev("g1", type="NVIDIA-Tesla T4")]
    out = fit(devices, req(1, 100), {"nvidia.com/nouse-gputype": "t4"})
    assert out.ok and uuids(out) == ["g0"]
    out = fit(devices, req(1, 100), {"nvidia.com/nouse-gputype": "NVIDIA"})
    assert out.reason == "2/2 CardTypeMismatch"


def test_blank_gputype_annotations_mean_no_constraint():
    assert fit([dev("g0", type="NVIDIA A10")], req(1, 100), {"nvidia.com/use-gputype": "  "}).ok


def test_gputype_list_of_only_commas_rejects_every_card():
    """v2.10 ``device.CheckType``: a list that is not blank constrains, and an empty entry matches nothing."""
    out = fit([dev("g0", type="NVIDIA A10")], req(1, 100), {"nvidia.com/use-gputype": " , "})
    assert out.reason == "1/1 CardTypeMismatch"


def test_vgpu_mode_must_contain_the_device_mode():
    devices = [dev("g0", mode="hami-core"), dev("g1", mode="mps")]
    out = fit(devices, req(1, 100), {"nvidia.com/vgpu-mode": "mps"})
    assert out.ok and uuids(out) == ["g1"]
    out = fit([dev("g0", mode="hami-core")], req(1, 100), {"nvidia.com/vgpu-mode": "mig"})
    assert out.reason == "1/1 CardTypeMismatch"
    # an empty device mode is contained in every string
    assert fit([dev("g0", mode="")], req(1, 100), {"nvidia.com/vgpu-mode": "mig"}).ok


# -- 3.2 check 4: numa-bind grouping -------------------------------------------------------------------


def test_numa_bind_partial_group_counts_numa_not_fit():
    devices = [dev("a", numa=0), dev("b", numa=1)]
    out = fit(devices, req(2, 100), {"nvidia.com/numa-bind": "true"})
    assert not out.ok
    assert out.reason == "1/2 AllocatedCardsInsufficientRequest, 1/2 NumaNotFit"


def test_numa_bind_fits_inside_one_numa_node():
    devices = [dev("a", numa=0), dev("b", numa=1), dev("c", numa=1)]
    out = fit(devices, req(2, 100), {"nvidia.com/numa-bind": "t"})
    assert out.ok and uuids(out) == ["c", "b"]


def test_numa_bind_uses_go_parse_bool():
    devices = [dev("a", numa=0), dev("b", numa=1)]
    for value in ("yes", "on", "false", "0", ""):
        assert fit(devices, req(2, 100), {"nvidia.com/numa-bind": value}).ok, value
    for value in ("1", "t", "T", "TRUE", "true", "True"):
        assert not fit(devices, req(2, 100), {"nvidia.com/numa-bind": value}).ok, value


def test_numa_grouping_runs_before_the_uuid_check():
    devices = [dev("a", numa=0), dev("b", numa=1)]
    out = fit(devices, req(2, 100), {"nvidia.com/numa-bind": "true", "nvidia.com/nouse-gpuuuid": "a"})
    # b is collected, then a opens a new NUMA group (NumaNotFit 1) before its UUID check fails
    assert out.reason == "1/2 CardUuidMismatch, 1/2 NumaNotFit"


# -- 3.2 check 5: UUID ----------------------------------------------------------------------------------


def test_use_uuid_list_is_trimmed_and_exact():
    devices = [dev("GPU-0"), dev("GPU-1"), dev("GPU-10")]
    out = fit(devices, req(1, 100), {"nvidia.com/use-gpuuuid": " GPU-1 ,GPU-7"})
    assert uuids(out) == ["GPU-1"]
    out = fit(devices, req(1, 100), {"nvidia.com/use-gpuuuid": "GPU-1"}, gpu_policy="binpack")
    assert uuids(out) == ["GPU-1"]  # exact: GPU-10 is not GPU-1
    assert fit(devices, req(3, 100), {"nvidia.com/use-gpuuuid": "   "}).ok


def test_nouse_uuid_excludes_listed_devices():
    devices = [dev("GPU-0"), dev("GPU-1")]
    out = fit(devices, req(1, 100), {"nvidia.com/nouse-gpuuuid": "GPU-1"})
    assert uuids(out) == ["GPU-0"]


# -- 3.2 checks 6-7: slots, mutex -------------------------------------------------------------------------


def test_slots_exhausted_when_count_not_above_used():
    assert fit([dev("g0", 10, 10)], req(1, 100)).reason == "1/1 CardTimeSlicingExhausted"
    assert fit([dev("g0", 10, 9)], req(1, 100)).ok


def test_mutex_rejects_any_shared_device():
    devices = [dev("idle"), dev("busy", used=1, usedmem=10)]
    out = fit(devices, req(1, 100), gpu_policy="mutex")
    assert out.ok and uuids(out) == ["idle"]
    assert (
        fit([dev("busy", used=1)], req(1, 100), gpu_policy="mutex").reason
        == "1/1 ExclusiveDeviceAllocateConflict"
    )
    assert fit([dev("busy", used=1)], req(1, 100), gpu_policy="binpack,mutex").reason == (
        "1/1 ExclusiveDeviceAllocateConflict"
    )
    assert fit([dev("busy", used=1)], req(1, 100), gpu_policy="binpack").ok


def test_mutex_comes_after_slots():
    assert fit([dev("g0", 1, 1)], req(1, 100), gpu_policy="mutex").reason == "1/1 CardTimeSlicingExhausted"


# -- 3.2 checks 8-14: cores clamp, memory, cores, exclusive, compute exhausted ---------------------------


def test_core_clamp_applies_before_the_core_check_and_persists():
    devices = [dev("g0", usedcores=0), dev("g1", usedcores=10)]
    # walk: g1 (90 free < 100 after clamp) fails, g0 fits with 100
    out = fit(devices, req(1, 100, 101, 250))
    assert uuids(out) == ["g0"] and out.devices[0].usedcores == 100


def test_memory_in_mib():
    assert fit([dev("g0", totalmem=8000, usedmem=7000)], req(1, 1000)).ok
    assert fit([dev("g0", totalmem=8000, usedmem=7001)], req(1, 1000)).reason == "1/1 CardInsufficientMemory"


def test_memory_percentage_uses_integer_division_per_device():
    out = fit([dev("g0", totalmem=1001)], req(1, 0, 50))
    assert out.devices[0].usedmem == 500
    out = fit([dev("g0", totalmem=1001, usedmem=502)], req(1, 0, 50))
    assert out.reason == "1/1 CardInsufficientMemory"


def test_memory_mib_wins_over_percentage():
    out = fit([dev("g0", totalmem=8000)], req(1, 300, 50))
    assert out.devices[0].usedmem == 300


def test_unset_memory_is_zero():
    out = fit([dev("g0", totalmem=8000, usedmem=8000, usedcores=0)], req(1, 0, 101, 10))
    assert out.ok and out.devices[0].usedmem == 0


def test_memory_is_checked_before_cores():
    out = fit([dev("g0", totalmem=100, usedcores=100)], req(1, 200, 101, 50))
    assert out.reason == "1/1 CardInsufficientMemory"


def test_exclusive_100_only_on_100_core_cards():
    # a card registered with devcore 200 (deviceCoreScaling 2) can hold a 100-core request next to others
    assert fit([dev("g0", used=1, totalcore=200)], req(1, 100, 101, 100)).ok
    assert fit([dev("g0", used=1)], req(1, 100, 101, 100)).reason == "1/1 ExclusiveDeviceAllocateConflict"
    assert fit([dev("g0", used=0)], req(1, 100, 101, 100)).ok


def test_compute_exhausted_only_for_zero_core_requests():
    assert (
        fit([dev("g0", used=1, usedcores=100)], req(1, 100, 101, 0)).reason == "1/1 CardComputeUnitsExhausted"
    )
    assert fit([dev("g0", used=1, usedcores=90)], req(1, 100, 101, 0)).ok
    # a core request on a full card fails the core check first
    assert fit([dev("g0", used=1, usedcores=100)], req(1, 100, 101, 1)).reason == "1/1 CardInsufficientCore"


# -- 3.2 check 15-16: MIG -------------------------------------------------------------------------------

PROFILES = (
    MigProfile("1g.5gb", 4864, 15, 1, tuple(MigPlacement(s, 1) for s in range(7))),
    MigProfile("2g.10gb", 9856, 29, 2, (MigPlacement(0, 2), MigPlacement(2, 2), MigPlacement(4, 2))),
    MigProfile("3g.20gb", 19968, 43, 4, (MigPlacement(0, 4), MigPlacement(4, 4))),
    MigProfile("7g.40gb", 40192, 100, 8, (MigPlacement(0, 8),)),
)


def mig_dev(id="mig0", **kw):
    kw.setdefault("count", 7)
    kw.setdefault("totalmem", 40960)
    return dev(id, mode="mig", mig_profiles=PROFILES, **kw)


def run_pod(devices, *containers, annotations=None, gpu_policy="", init=(), pair_scores=None):
    pod = podview(*containers, init=init, annotations=annotations)
    state = node_state(*devices, pair_scores=pair_scores)
    return fit_pod(state, pod, VENDORS, policy(gpu_policy, annotations), DEFAULT_WEIGHTS)


def test_mig_picks_smallest_profile_and_descending_placement_for_1g():
    result = run_pod([mig_dev()], req(1, 4000))
    assert result.ok
    [[chosen]] = result.containers
    assert (chosen.mig_profile, chosen.mig_placement) == ("1g.5gb", MigPlacement(6, 1))
    assert (chosen.usedmem, chosen.usedcores) == (4864, 15)  # AddResourceUsage uses the profile's figures


def test_mig_placements_ascending_for_2g_and_overlap_rules():
    result = run_pod([mig_dev()], req(1, 6000), req(1, 6000))
    got = [(c[0].mig_profile, c[0].mig_placement) for c in result.containers]
    assert got == [("2g.10gb", MigPlacement(0, 2)), ("2g.10gb", MigPlacement(2, 2))]


def test_mig_device_is_revisited_for_several_instances():
    result = run_pod([mig_dev()], req(3, 4000))
    assert result.ok
    [devices] = result.containers
    assert [d.uuid for d in devices] == ["mig0"] * 3
    assert [d.mig_placement.start for d in devices] == [6, 5, 4]


def test_mig_request_is_exempt_from_node_insufficient_device():
    devices = [mig_dev()]
    # only one 7g placement: the revisit fails and is counted again
    out = run_pod(devices, req(2, 40000))
    assert out.reason == "1/1 AllocatedCardsInsufficientRequest, 1/1 CardMigTopologyInfeasible"
    # three 1g instances fit on one card, a fourth revisit fails after three were collected
    out = run_pod([mig_dev(count=7)], req(8, 4000))
    assert out.reason == "1/1 CardMigTopologyInfeasible, 7/1 AllocatedCardsInsufficientRequest"


def test_mig_topology_infeasible_when_no_profile_is_large_enough():
    # larger than every profile (40192) but within the card's memory (40960)
    assert run_pod([mig_dev()], req(1, 40500)).reason == "1/1 CardMigTopologyInfeasible"


def test_mig_exemption_needs_mig_in_vgpu_mode():
    out = run_pod([mig_dev()], req(2, 4000), annotations={"nvidia.com/vgpu-mode": "hami-core"})
    assert out.reason == R.NODE_INSUFFICIENT_DEVICE


# -- fitInDevices: NodeInsufficientDevice, type filter --------------------------------------------------


def test_node_insufficient_device_has_no_count_prefix():
    out = run_pod([dev("g0"), dev("g1")], req(3, 100))
    assert not out.ok and out.reason == "NodeInsufficientDevice"


def test_node_insufficient_device_counts_devices_of_the_request_type_case_insensitively():
    devices = [dev("g0", type="nvidia-lowercase"), dev("g1", type="NVIDIA A10")]
    assert run_pod(devices, req(2, 100)).ok
    devices = [dev("g0", type="AMD MI300"), dev("g1", type="NVIDIA A10")]
    assert run_pod(devices, req(2, 100)).reason == "NodeInsufficientDevice"


# -- topology-aware --------------------------------------------------------------------------------------

PAIRS = {
    "g0": {"g1": 100, "g2": 10, "g3": 10},
    "g1": {"g0": 100, "g2": 10, "g3": 10},
    "g2": {"g0": 10, "g1": 10, "g3": 50},
    "g3": {"g0": 10, "g1": 10, "g2": 50},
}


def four():
    return [dev(f"g{i}", index=i) for i in range(4)]


def test_topology_two_devices_picks_best_connected_pair():
    out = fit(four(), req(2, 100), gpu_policy="topology-aware", pair_scores=PAIRS)
    assert out.ok and sorted(uuids(out)) == ["g0", "g1"]


def test_topology_one_device_picks_least_connected():
    # sums over the other collected devices: g3 70, g2 70, g1 120, g0 120; first minimum wins (g3)
    out = fit(four(), req(1, 100), gpu_policy="topology-aware", pair_scores=PAIRS)
    assert uuids(out) == ["g3"]


def test_topology_missing_pair_scores_count_zero():
    # a pair is scored from the earlier device in walk order (g3, g2, g1, g0): g1 -> g0 counts
    out = fit(four(), req(2, 100), gpu_policy="topology-aware", pair_scores={"g1": {"g0": 5}})
    assert uuids(out) == ["g1", "g0"]
    out = fit(four(), req(2, 100), gpu_policy="topology-aware", pair_scores={"g0": {"g1": 5}})
    assert uuids(out) == ["g3", "g2"]
    out = fit(four(), req(2, 100), gpu_policy="topology-aware", pair_scores={})
    assert uuids(out) == ["g3", "g2"]  # every combination scores 0: the first in walk order wins
    scores = {k: v for k, v in PAIRS.items() if k != "g2"}
    out = fit(four(), req(1, 100), gpu_policy="topology-aware", pair_scores=scores)
    assert uuids(out) == ["g2"]  # g2 has no entries at all: sum 0


def test_topology_exact_collection_and_shortfall():
    out = fit(four()[:2], req(2, 100), gpu_policy="topology-aware", pair_scores={})
    assert out.ok and uuids(out) == ["g1", "g0"]
    out = fit(four()[:2], req(3, 100), gpu_policy="topology-aware", pair_scores={})
    assert out.reason == "2/2 AllocatedCardsInsufficientRequest"


# -- 3.3 reason aggregation -----------------------------------------------------------------------------


def test_reasons_sorted_as_whole_strings():
    devices = [dev(f"bad{i}", health=False) for i in range(10)] + [
        dev("s0", totalmem=10),
        dev("s1", totalmem=10),
    ]
    out = fit(devices, req(1, 100))
    assert out.reason == "10/12 CardNotHealth, 2/12 CardInsufficientMemory"


def test_gen_reason_and_parse_reason():
    assert R.gen_reason({}, 3) == ""
    assert R.gen_reason({"NumaNotFit": 1, "AllocatedCardsInsufficientRequest": 1}, 2) == (
        "1/2 AllocatedCardsInsufficientRequest, 1/2 NumaNotFit"
    )
    assert R.parse_reason("10/12 CardNotHealth, 2/12 CardInsufficientMemory") == {
        "CardNotHealth": 10,
        "CardInsufficientMemory": 2,
    }


def test_first_failing_container_decides_the_node_reason():
    devices = [dev("g0", totalmem=1000, totalcore=100)]
    out = run_pod(devices, req(1, 2000), req(1, 100, 101, 200))
    assert out.reason == "1/1 CardInsufficientMemory" and out.failed_container == 0


# -- 4.7 init containers: each on a fresh copy, the node keeps the peak ------------------------------------


def after(result):
    return [(d.id, d.used, d.usedmem, d.usedcores) for d in result.usage_after]


def test_init_containers_do_not_accumulate():
    result = run_pod([dev("g", totalmem=8000)], req(1, 1000), init=(req(1, 5000), req(1, 5000)))
    assert result.ok and [[d.uuid for d in c] for c in result.containers] == [["g"], ["g"], ["g"]]
    assert after(result) == [("g", 1, 5000, 0)]


def test_app_containers_accumulate():
    result = run_pod([dev("g", totalmem=8000)], req(1, 5000), req(1, 5000))
    assert result.reason == "1/1 CardInsufficientMemory" and result.failed_container == 1


def test_peak_is_taken_per_field_on_top_of_existing_usage():
    start = dev("g", 10, 2, 8000, 1000, 100, 20)
    result = run_pod([start], req(1, 1000, 101, 50), init=(req(1, 5000, 101, 10),))
    # init: used 3, mem 6000, cores 30; app: used 3, mem 2000, cores 70 -> peak per field
    assert after(result) == [("g", 3, 6000, 70)]
    assert (start.used, start.usedmem, start.usedcores) == (2, 1000, 20)  # the input is not mutated


def test_usage_after_keeps_the_node_device_order():
    devices = [dev("g0", index=0), dev("g1", index=1), dev("g2", index=2)]
    result = run_pod(devices, req(1, 100), gpu_policy="binpack")
    assert [d.id for d in result.usage_after] == ["g0", "g1", "g2"]
    assert [d.id for d in devices] == ["g0", "g1", "g2"]

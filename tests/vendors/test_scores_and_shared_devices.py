"""Vendor node scores (HAMi ``OverrideScore`` / ``ScoreNode``) and the rules that need the pod's earlier
containers (Moore Threads and MetaX ``customFilterRule``), plus MetaX sGPU exclusive prioritisation.

Each test states what an operator sees: the node score HAMi would sort by (``score_before``), the
extender's 0..10 prioritize answer, which cards a pod lands on, or the reason a node is refused.
"""

from __future__ import annotations

import orjson
import pytest

from hami_sim.engine.vendors import MetaxConfig, MetaxSgpuVendor
from hami_sim.engine.vendors.metax import parse_topology_map
from hami_sim.engine.vendors.metax_sgpu_rank import link_score

from .helpers import VENDORS, body, json_register, limits, node, pod, simulator, verdicts

# -- helpers --------------------------------------------------------------------------------------


def only(sim, pod_obj, template):
    (verdict,) = verdicts(sim, pod_obj, [template]).values()
    return verdict


def chosen_ids(verdict) -> list[list[str]]:
    return [[d.uuid for d in container] for container in verdict.fit.containers]


def prioritize(client, pod_obj, nodes) -> dict[str, int]:
    response = client.post("/prioritize-simulation", body(pod_obj, nodes), content_type="application/json")
    assert response.status_code == 200
    return {entry["Host"]: entry["Score"] for entry in orjson.loads(response.content)}


def filter_(client, pod_obj, nodes) -> dict:
    response = client.post("/filter-simulation", body(pod_obj, nodes), content_type="application/json")
    assert response.status_code == 200
    return orjson.loads(response.content)


SPREAD = {"hami.io/node-scheduler-policy": "spread"}


# -- Kunlunxin: board bubbles ------------------------------------------------------------------------


def kunlun_node(name="tmpl-kunlun", cards=8):
    return node(name, capacity={"kunlunxin.com/xpu": str(cards)})


def test_kunlun_whole_wing_scores_2000_lone_card_0():
    """calcscore: an idle board has 1 bubble; 4 cards on one wing keep it (2000), 1 card makes 3 (0)."""
    sim = simulator()
    wing = only(sim, pod(limits(**{"kunlunxin.com/xpu": 4})), kunlun_node())
    lone = only(sim, pod(limits(**{"kunlunxin.com/xpu": 1})), kunlun_node())
    assert wing.fits and lone.fits
    assert wing.fit.vendor_score == 2000.0 and wing.fit.score_before == 2000.0
    assert lone.fit.vendor_score == 0.0 and lone.fit.score_before == 0.0
    # the score after placement also carries it (usage score + ScoreNode)
    assert wing.score_after > 2000.0
    assert 0 < lone.score_after < wing.score_after


def test_kunlun_score_is_zero_on_a_node_with_other_vendors():
    """HAMi's kunlun ScoreNode returns 0 as soon as any device of the node is not a kunlun card."""
    mixed = node(
        "tmpl-kunlun-amd",
        capacity={"kunlunxin.com/xpu": "8"},
        annotations={
            "hami.io/node-amd-register": json_register(
                [
                    {
                        "id": "AMD-0",
                        "count": 10,
                        "devmem": 1024,
                        "devcore": 100,
                        "type": "AMD-MI300X",
                        "health": True,
                    }
                ]
            )
        },
    )
    verdict = only(simulator(), pod(limits(**{"kunlunxin.com/xpu": 1})), mixed)
    assert verdict.fits and verdict.fit.vendor_score == 0.0


@pytest.mark.api
@pytest.mark.django_db
def test_kunlun_prioritize_clamps_scores_beyond_the_range(client):
    """Binpack: +1000 -> 10, -1000 -> 0. Spread: HAMi picks the lowest score, so -1000 -> 10."""
    template = kunlun_node()
    assert prioritize(client, pod(limits(**{"kunlunxin.com/xpu": 4})), [template]) == {"tmpl-kunlun": 10}
    assert prioritize(client, pod(limits(**{"kunlunxin.com/xpu": 1})), [template]) == {"tmpl-kunlun": 0}
    spread_lone = pod(limits(**{"kunlunxin.com/xpu": 1}), annotations=SPREAD)
    assert prioritize(client, spread_lone, [template]) == {"tmpl-kunlun": 10}


# -- MetaX GPU: topology losses / scores ---------------------------------------------------------------


def metax_node(name, losses=None, scores=None, cards=4):
    annotations = {}
    if losses is not None:
        annotations["metax-tech.com/gpu.topology.losses"] = losses
    if scores is not None:
        annotations["metax-tech.com/gpu.topology.scores"] = scores
    return node(name, capacity={"metax-tech.com/gpu": str(cards)}, annotations=annotations)


def test_metax_binpack_prefers_the_node_with_the_lower_topology_loss():
    sim = simulator()
    good = metax_node("tmpl-metax-good", losses='{"1": 0, "2": 100}')
    bad = metax_node("tmpl-metax-bad", losses='{"1": 0, "2": 700}')
    plain = metax_node("tmpl-metax-plain")
    two = pod(limits(**{"metax-tech.com/gpu": 2}))
    result = verdicts(sim, two, [good, bad, plain])
    assert result["tmpl-metax-good"].fit.score_before == 1900.0
    assert result["tmpl-metax-bad"].fit.score_before == 1300.0
    assert result["tmpl-metax-plain"].fit.score_before == 0.0  # no annotation, no score
    # binpack keeps the highest score: the low-loss node
    assert max(result.values(), key=lambda v: v.score_after).name == "tmpl-metax-good"


def test_metax_spread_reads_the_scores_annotation():
    """Spread: 2000 - scores[n]; HAMi picks the lowest, i.e. the node with the best topology score."""
    sim = simulator()
    best = metax_node("tmpl-best", scores='{"2": 1500}', losses='{"2": 999}')
    worse = metax_node("tmpl-worse", scores='{"2": 200}')
    two = pod(limits(**{"metax-tech.com/gpu": 2}), annotations=SPREAD)
    result = verdicts(sim, two, [best, worse])
    assert result["tmpl-best"].fit.vendor_score == 500.0
    assert result["tmpl-worse"].fit.vendor_score == 1800.0
    assert min(result.values(), key=lambda v: v.score_after).name == "tmpl-best"


def test_metax_unparsable_or_missing_entry_counts_as_zero_loss():
    sim = simulator()
    one = pod(limits(**{"metax-tech.com/gpu": 1}))
    assert only(sim, one, metax_node("tmpl-a", losses="not json")).fit.vendor_score == 2000.0
    assert only(sim, one, metax_node("tmpl-b", losses='{"4": 10}')).fit.vendor_score == 2000.0
    assert parse_topology_map('{"1": 1.5}') == {}
    assert parse_topology_map('{"x": 1}') == {}
    assert parse_topology_map('{"+2": 7, "3": null}') == {"2": 7, "3": 0}
    assert parse_topology_map(None) is None


def test_metax_annotations_are_part_of_the_cached_inventory():
    """Same node name and capacity, different losses: the memo must not serve the first answer twice."""
    sim = simulator()
    one = pod(limits(**{"metax-tech.com/gpu": 1}))
    first = only(sim, one, metax_node("tmpl-same", losses='{"1": 100}'))
    second = only(sim, one, metax_node("tmpl-same", losses='{"1": 900}'))
    assert (first.fit.vendor_score, second.fit.vendor_score) == (1900.0, 1100.0)


def test_metax_score_also_applies_to_a_pod_of_another_vendor_on_a_mixed_node():
    """OverrideScore walks every device type of the node (HAMi's per-type padding of PodDevices), so
    a MetaX node's loss table scores an NVIDIA pod there too, with n = 0 MetaX GPUs."""
    mixed = metax_node("tmpl-mixed", losses='{"0": 50}')
    mixed["metadata"]["annotations"]["hami.io/node-nvidia-register"] = json_register(
        [{"id": "GPU-0", "count": 10, "devmem": 8192, "devcore": 100, "type": "NVIDIA-A100", "health": True}]
    )
    verdict = only(simulator(), pod(limits(**{"nvidia.com/gpu": 1})), mixed)
    assert verdict.fits and verdict.fit.vendor_score == 1950.0


# -- Moore Threads and MetaX GPU: every container on the same device ---------------------------------


def mthreads_node():
    # 2 GPUs of 16 cores, 49152 MiB each
    return node("tmpl-mt", capacity={"mthreads.com/sgpu-core": "32", "mthreads.com/sgpu-memory": "192"})


def mt(mem_units: int, gpus: int = 1) -> dict:
    return limits(
        **{"mthreads.com/vgpu": gpus, "mthreads.com/sgpu-memory": mem_units, "mthreads.com/sgpu-core": 2}
    )


def test_mthreads_containers_share_one_gpu_even_under_spread():
    """Spread would put the second container on the idle GPU; HAMi's rule keeps it on the first."""
    verdict = only(simulator(), pod(mt(8), mt(8)), mthreads_node())
    assert verdict.fits
    (first,), (second,) = chosen_ids(verdict)
    assert first == second


def test_mthreads_second_container_that_does_not_fit_the_shared_gpu_fails():
    """32768 + 32768 MiB exceed one 49152 MiB GPU; the other GPU is refused by the custom rule."""
    verdict = only(simulator(), pod(mt(64), mt(64)), mthreads_node())
    assert not verdict.fits
    assert verdict.reason == "1/2 CardInsufficientMemory, 1/2 CardNotFoundCustomFilterRule"
    assert verdict.fit.failed_container == 1


def test_mthreads_after_a_two_gpu_container_no_device_is_all_of_them():
    verdict = only(simulator(), pod(mt(8, gpus=2), mt(8)), mthreads_node())
    assert verdict.reason == "2/2 CardNotFoundCustomFilterRule"


def test_mthreads_init_containers_are_held_to_their_own_phase():
    """Init containers follow each other (each on a fresh copy); app containers start over."""
    verdict = only(simulator(), pod(mt(8), init=[mt(64), mt(64)]), mthreads_node())
    assert verdict.fits
    (i0,), (i1,), (app,) = chosen_ids(verdict)
    assert i0 == i1  # the second init container had to take the first one's GPU
    failing = only(simulator(), pod(mt(8), init=[mt(8, gpus=2), mt(8)]), mthreads_node())
    assert failing.reason == "2/2 CardNotFoundCustomFilterRule" and failing.fit.failed_container == 1


@pytest.mark.api
@pytest.mark.django_db
def test_metax_gpu_second_container_is_refused_over_http(client):
    template = metax_node("tmpl-metax-two", cards=2)
    answer = filter_(
        client, pod(limits(**{"metax-tech.com/gpu": 1}), limits(**{"metax-tech.com/gpu": 1})), [template]
    )
    assert answer["Nodes"] is None
    assert answer["FailedNodes"] == {
        "tmpl-metax-two": "1/2 CardNotFoundCustomFilterRule, 1/2 CardTimeSlicingExhausted"
    }


# -- MetaX sGPU: exclusive prioritisation and the policy-neutral score ------------------------------------


def sgpu_node(zones=(1, 2, 2, 0), name="tmpl-sgpu-links"):
    devices = [
        {
            "uuid": f"S-{i}",
            "totalDevCount": 16,
            "totalCompute": 100,
            "totalVRam": 65536,
            "healthy": True,
            "linkZone": zone,
        }
        for i, zone in enumerate(zones)
    ]
    return node(name, annotations={"metax-tech.com/node-gpu-devices": json_register(devices)})


def sgpu(n: int, **annotations) -> dict:
    return pod(limits(**{"metax-tech.com/sgpu": n}), annotations=annotations or None)


def test_sgpu_exclusive_pod_takes_a_whole_link_zone():
    """Candidates come back-to-front (S-3, S-2, S-1, S-0); the smallest zone holding 2 is zone 2."""
    verdict = only(simulator(), sgpu(2), sgpu_node())
    assert chosen_ids(verdict) == [["S-2", "S-1"]]


def test_sgpu_exclusive_single_card_prefers_the_smallest_zone():
    assert chosen_ids(only(simulator(), sgpu(1), sgpu_node())) == [["S-0"]]


def test_sgpu_crosses_zones_smallest_first_then_unlinked_cards():
    assert chosen_ids(only(simulator(), sgpu(3), sgpu_node())) == [["S-0", "S-2", "S-1"]]


def test_sgpu_app_class_and_shared_pods_keep_the_policy_order():
    sim = simulator()
    # an offline pod is not prioritised; a shared (vcore < 100) pod neither
    assert chosen_ids(only(sim, sgpu(1, **{"metax-tech.com/sgpu-app-class": "offline"}), sgpu_node())) == [
        ["S-3"]
    ]
    shared = pod(limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 50}))
    assert chosen_ids(only(sim, shared, sgpu_node())) == [["S-3"]]


def test_sgpu_topology_aware_score_is_policy_neutral_times_10000():
    """Chosen S-1,S-2 share zone 2: 10 x 10 - (10 - 10 - 0) = 100 -> +1,000,000 (binpack), -1,000,000 (spread)."""
    sim = simulator()
    aware = {"metax-tech.com/sgpu-topology-aware": "true"}
    assert only(sim, sgpu(2, **aware), sgpu_node()).fit.vendor_score == 1_000_000.0
    spread = only(sim, sgpu(2, **aware, **SPREAD), sgpu_node())
    assert spread.fit.vendor_score == -1_000_000.0
    # off by default (config topologyAware false) and for an unparsable flag
    assert only(sim, sgpu(2), sgpu_node()).fit.vendor_score == 0.0
    assert (
        only(sim, sgpu(2, **{"metax-tech.com/sgpu-topology-aware": "yes"}), sgpu_node()).fit.vendor_score
        == 0.0
    )
    # online pods score by the pods already on their cards: none on a template
    online = {"metax-tech.com/sgpu-app-class": "online", **aware}
    assert only(sim, sgpu(1, **online), sgpu_node()).fit.vendor_score == 0.0


def test_sgpu_topology_aware_from_the_vendor_config():
    vendors = tuple(
        MetaxSgpuVendor(MetaxConfig(topology_aware=True)) if v.common_word == "Metax-SGPU" else v
        for v in VENDORS
    )
    from hami_sim.engine.simulate import EngineConfig, Simulator

    sim = Simulator(EngineConfig(vendors=vendors))
    # one card of zone 1: allocated 0, available 10 (S-1/S-2), rest 10 -> loss 0 -> 0
    assert only(sim, sgpu(1), sgpu_node()).fit.vendor_score == 0.0
    # breaking the zone-2 pair costs: chosen S-0 alone on a node with zones (2, 2): loss 10
    assert only(sim, sgpu(1), sgpu_node(zones=(2, 2))).fit.vendor_score == -100_000.0
    # an explicit annotation wins over the config
    assert (
        only(
            sim, sgpu(1, **{"metax-tech.com/sgpu-topology-aware": "false"}), sgpu_node(zones=(2, 2))
        ).fit.vendor_score
        == 0.0
    )


def test_link_score_counts_pairs_in_the_same_nonzero_zone():
    assert link_score([("a", 1), ("b", 1), ("c", 1), ("d", 0), ("e", 0)]) == 30
    assert link_score([("a", 1), ("a", 1)]) == 0


@pytest.mark.api
@pytest.mark.django_db
def test_sgpu_prioritize_keeps_the_side_hami_picks_from(client):
    aware = {"metax-tech.com/sgpu-topology-aware": "true"}
    template = sgpu_node()
    assert prioritize(client, sgpu(2, **aware), [template]) == {"tmpl-sgpu-links": 10}
    assert prioritize(client, sgpu(2, **aware, **SPREAD), [template]) == {"tmpl-sgpu-links": 10}
    answer = filter_(client, sgpu(2, **aware), [template])
    assert answer["Nodes"]["items"] == [template]


# -- Ascend 910: NetworkID cohesion ----------------------------------------------------------------------


def ascend_node(networks, name="tmpl-910b3"):
    devices = [
        {
            "id": f"NPU-{i}",
            "index": i,
            "count": 7,
            "devmem": 65536,
            "devcore": 20,
            "type": "Ascend910B3",
            "health": True,
            **({"custominfo": {"NetworkID": net}} if net is not None else {}),
        }
        for i, net in enumerate(networks)
    ]
    return node(name, annotations={"hami.io/node-register-Ascend910B3": json_register(devices)})


def test_ascend_910_same_network_scores_10_per_container():
    sim = simulator()
    npus = pod(limits(**{"huawei.com/Ascend910B3": 2}), limits(**{"huawei.com/Ascend910B3": 1}))
    verdict = only(sim, npus, ascend_node([0, 0, 1, 1]))
    assert verdict.fits
    assert verdict.fit.vendor_score == 20.0  # both containers within one network: 1.0 + 1.0, x10


def test_ascend_910_split_across_networks_scores_the_largest_share():
    verdict = only(simulator(), pod(limits(**{"huawei.com/Ascend910B3": 3})), ascend_node([0, 0, 1, 1]))
    assert verdict.fits and verdict.fit.vendor_score == pytest.approx(20 / 3, rel=1e-6)


def test_ascend_without_network_ids_scores_nothing():
    verdict = only(simulator(), pod(limits(**{"huawei.com/Ascend910B3": 2})), ascend_node([None] * 4))
    assert verdict.fits and verdict.fit.vendor_score == 0.0


# -- NVIDIA is unchanged ------------------------------------------------------------------------------------


def test_nvidia_node_score_has_no_vendor_part():
    template = node(
        "tmpl-a10",
        annotations={
            "hami.io/node-nvidia-register": json_register(
                [
                    {
                        "id": "GPU-0",
                        "count": 10,
                        "devmem": 23028,
                        "devcore": 100,
                        "type": "NVIDIA A10",
                        "health": True,
                    }
                ]
            )
        },
    )
    verdict = only(simulator(), pod(limits(**{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 1000})), template)
    assert verdict.fits and verdict.fit.vendor_score == 0.0 and verdict.fit.score_before == 0.0


# -- MetaX sGPU: a placed pod switches the card's QoS policy ---------------------------------------------


def test_sgpu_second_container_joins_the_card_its_first_container_retagged():
    """AddResourceUsage sets the card's qosPolicy to the pod's: the pod's next container may share it."""
    one_card = node(
        "tmpl-sgpu-qos",
        annotations={
            "metax-tech.com/node-gpu-devices": json_register(
                [
                    {
                        "uuid": "Q-0",
                        "totalDevCount": 16,
                        "totalCompute": 100,
                        "totalVRam": 65536,
                        "healthy": True,
                        "qosPolicy": "best-effort",
                    }
                ]
            )
        },
    )
    half = limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 50, "metax-tech.com/vmemory": 4})
    verdict = only(
        simulator(), pod(half, half, annotations={"metax-tech.com/sgpu-qos-policy": "fixed-share"}), one_card
    )
    assert verdict.fits, verdict.reason
    assert chosen_ids(verdict) == [["Q-0"], ["Q-0"]]
    # the node's own inventory is untouched: a fresh pod of another policy still finds the card idle
    other = only(
        simulator(), pod(half, annotations={"metax-tech.com/sgpu-qos-policy": "burst-share"}), one_card
    )
    assert other.fits


@pytest.mark.api
@pytest.mark.django_db
def test_sgpu_card_policy_persists_in_a_session(client):
    """A session stores the card's new QoS policy: a later pod of another policy cannot share it."""

    def call(path, payload):
        response = client.post(path, orjson.dumps(payload), content_type="application/json")
        return response.status_code, orjson.loads(response.content)

    status, session = call("/api/v1/sessions", {})
    assert status == 201, session
    sid = session["id"]
    card = node(
        "tmpl-sgpu-session",
        annotations={
            "metax-tech.com/node-gpu-devices": json_register(
                [
                    {
                        "uuid": "Q-0",
                        "totalDevCount": 16,
                        "totalCompute": 100,
                        "totalVRam": 65536,
                        "healthy": True,
                        "qosPolicy": "best-effort",
                    }
                ]
            )
        },
    )
    half = limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 50, "metax-tech.com/vmemory": 4})

    def sgpu_pod(name, qos):
        p = pod(half, annotations={"metax-tech.com/sgpu-qos-policy": qos}, name=name)
        p["metadata"]["uid"] = f"uid-{name}"
        return p

    status, first = call(
        f"/api/v1/sessions/{sid}/placements", {"pod": sgpu_pod("a", "fixed-share"), "node": card}
    )
    assert status == 201, first
    status, refused = call(
        f"/api/v1/sessions/{sid}/placements",
        {"pod": sgpu_pod("b", "burst-share"), "nodeName": card["metadata"]["name"]},
    )
    assert status != 201 and "CardQosPolicyMismatch" in orjson.dumps(refused).decode()
    status, joined = call(
        f"/api/v1/sessions/{sid}/placements",
        {"pod": sgpu_pod("c", "fixed-share"), "nodeName": card["metadata"]["name"]},
    )
    assert status == 201, joined


def test_sgpu_a_placed_pod_is_listed_on_its_card_for_the_next_pod():
    """Once placed, a pod is one of the pods on its card (HAMi ``PodInfos``): after an online pod, an
    ordinary pod no longer fits the card and an online pod scores by it (-20 x 10000 under binpack)."""
    from hami_sim.engine.model import NodeState

    sim = simulator()
    template = sgpu_node(zones=(0,), name="tmpl-sgpu-one")
    state = sim.inventory(template).state("tmpl-sgpu-one")
    shared = {"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 10, "metax-tech.com/vmemory": 1}
    online = {"metax-tech.com/sgpu-app-class": "online"}

    def place(pod_obj, on):
        return sim.evaluate(sim.pod_context(pod_obj), "tmpl-sgpu-one", on)

    first = place(pod(limits(**shared), annotations=online), state)
    assert [d.pod_infos for d in first.fit.usage_after] == [(online,)]
    assert state.devices[0].pod_infos == ()  # the template itself stays at zero usage
    placed = NodeState("tmpl-sgpu-one", list(first.fit.usage_after), state.pair_scores, state.cordoned)
    ordinary = place(pod(limits(**shared)), placed)
    assert not ordinary.fits and ordinary.reason == "1/1 CardAppClassMismatch"
    second = place(pod(limits(**shared), annotations=online), placed)
    assert second.fits and second.fit.vendor_score == -20 * 10000
    assert [d.pod_infos for d in second.fit.usage_after] == [(online, online)]
    # an ordinary pod is not listed: no rule reads anything of it (``used`` counts it)
    assert [d.pod_infos for d in place(pod(limits(**shared)), state).fit.usage_after] == [()]


@pytest.mark.api
@pytest.mark.django_db
def test_sgpu_session_lists_the_pods_on_a_card_until_they_are_removed(client):
    """A session keeps the app classes of the pods on each card: an online pod joins a card running an
    offline pod, then a second offline pod is refused it (``CardAppClassMismatch``: HAMi suspends
    offline pods on a card running an online one); once the online pod is removed, it joins."""

    def call(method, path, payload=None):
        body = orjson.dumps(payload) if payload is not None else b""
        response = getattr(client, method)(path, body, content_type="application/json")
        return response.status_code, orjson.loads(response.content) if response.content else {}

    status, session = call("post", "/api/v1/sessions", {})
    sid = session["id"]
    card = sgpu_node(zones=(0,), name="tmpl-sgpu-classes")
    shared = limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 10, "metax-tech.com/vmemory": 1})
    placements = f"/api/v1/sessions/{sid}/placements"

    def place(name, app_class):
        p = pod(shared, annotations={"metax-tech.com/sgpu-app-class": app_class}, name=name)
        p["metadata"]["uid"] = f"uid-{name}"
        return call("post", placements, {"pod": p, "node": card, "nodeName": "tmpl-sgpu-classes"})

    assert place("off-1", "offline")[0] == 201
    assert place("on", "online")[0] == 201
    status, refused = place("off-2", "offline")
    assert status == 422 and refused["reason"] == "1/1 CardAppClassMismatch", refused
    assert call("delete", f"{placements}/uid-on")[0] == 200
    status, joined = place("off-2", "offline")
    assert status == 201, joined

"""Placing pods one by one lands them where HAMi's live scheduler would on a node with that usage.

On real nodes the device ``type`` is the model name (docs/device-rules.md), so the request terms drop
out of the device score and only existing usage orders the cards. Fit walks the sorted list from the
end: binpack takes the fullest card, spread the emptiest, mutex only idle cards, and numa-bind keeps
a multi-GPU pod inside one NUMA node.
"""

from __future__ import annotations

import pytest

from tests.factories import gpu, node, pod

from .conftest import a10_node, chosen

pytestmark = [pytest.mark.api, pytest.mark.django_db]

BINPACK = {"hami.io/gpu-scheduler-policy": "binpack"}
SPREAD = {"hami.io/gpu-scheduler-policy": "spread"}
MUTEX = {"hami.io/gpu-scheduler-policy": "mutex"}


def test_gpu_binpack_fills_one_card_before_the_next(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    cards = []
    for i in range(5):
        status, body = api.place(sid, pod(f"b{i}", uid=f"b{i}", gpumem=5000, annotations=BINPACK), tmpl)
        assert status == 201, body
        cards += chosen(body)
    # four 5000 MiB pods fill one 23028 MiB card; the fifth goes to the other card
    assert cards[:4] == [cards[0]] * 4
    assert cards[4] != cards[0]


def test_gpu_spread_uses_a_new_card(api):
    sid = api.create()["id"]
    tmpl = a10_node(cards=3)
    cards = []
    for i in range(3):
        status, body = api.place(sid, pod(f"s{i}", uid=f"s{i}", gpumem=2000, annotations=SPREAD), tmpl)
        assert status == 201
        cards += chosen(body)
    assert len(set(cards)) == 3
    status, body = api.place(sid, pod("s3", uid="s3", gpumem=2000, annotations=SPREAD), tmpl)
    assert chosen(body)[0] in cards  # every card used once: the tie goes back to the first choice order
    devices = api.get(sid)["nodes"][0]["devices"]
    assert sorted(d["used"] for d in devices) == [1, 1, 2]


def test_default_policy_is_spread(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    _, first = api.place(sid, pod("d0", uid="d0", gpumem=1000), tmpl)
    _, second = api.place(sid, pod("d1", uid="d1", gpumem=1000), tmpl)
    assert chosen(first) != chosen(second)


def test_mutex_takes_only_idle_cards(api):
    sid = api.create()["id"]
    tmpl = a10_node()
    _, first = api.place(sid, pod("m0", uid="m0", gpumem=1000, annotations=MUTEX), tmpl)
    _, second = api.place(sid, pod("m1", uid="m1", gpumem=1000, annotations=MUTEX), tmpl)
    assert chosen(first) != chosen(second)
    status, body = api.place(sid, pod("m2", uid="m2", gpumem=1000, annotations=MUTEX), tmpl)
    assert status == 422 and body["reason"] == "2/2 ExclusiveDeviceAllocateConflict"
    # a shared pod still fits next to them: mutex is the pod's own policy, not the card's
    status, _ = api.place(sid, pod("shared", uid="shared", gpumem=1000), tmpl)
    assert status == 201


def _numa_node() -> dict:
    return node(
        "numa",
        [
            gpu(f"GPU-N{i}", index=i, numa=i // 2, type="NVIDIA A100-SXM4-80GB", devmem=81920)
            for i in range(4)
        ],
    )


def test_numa_binding_keeps_a_pod_on_one_numa_node(api):
    sid = api.create()["id"]
    tmpl = _numa_node()
    # an exclusive pod takes one of NUMA node 1's cards
    status, body = api.place(sid, pod("excl", uid="excl", mem_pct=100, gpucores=100), tmpl)
    assert status == 201 and chosen(body) == ["GPU-N3"]
    fork_status, _ = api.call("post", f"/api/v1/sessions/{sid}/fork")
    assert fork_status == 200
    # without numa-bind a 2-GPU pod takes the two emptiest cards, across NUMA nodes
    status, body = api.place(sid, pod("loose", uid="loose", gpu_count=2, gpumem=1000), tmpl)
    assert status == 201 and sorted(chosen(body)) == ["GPU-N1", "GPU-N2"]
    api.call("post", f"/api/v1/sessions/{sid}/revert")
    # with numa-bind it must stay inside NUMA node 0, the only one with two usable cards
    bound = pod("bound", uid="bound", gpu_count=2, gpumem=1000, annotations={"nvidia.com/numa-bind": "true"})
    status, body = api.place(sid, bound, tmpl)
    assert status == 201 and sorted(chosen(body)) == ["GPU-N0", "GPU-N1"]
    # a second 2-GPU exclusive pod finds one idle card per NUMA node: HAMi's NumaNotFit
    whole = pod(
        "whole",
        uid="whole",
        gpu_count=2,
        mem_pct=100,
        gpucores=100,
        annotations={"nvidia.com/numa-bind": "1"},
    )
    status, body = api.place(sid, whole, tmpl)
    assert status == 422 and "NumaNotFit" in body["reason"], body

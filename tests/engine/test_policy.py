"""Device scores (float32), card ordering, scoring weights, GPU and node policies (docs/device-rules.md)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine.fit import fit_pod
from hami_sim.engine.policy import (
    DEFAULT_WEIGHTS,
    Weights,
    WeightsError,
    compute_device_scores,
    device_score,
    node_score,
    parse_weights,
    pod_weights,
    resolve_gpu_policy,
    resolve_node_policy,
    sort_devices,
)

from .helpers import VENDORS, dev, node_state, podview, policy, req

# -- 4.2 device score in float32 ---------------------------------------------------------------------


def _np_device_score(d, request, w):
    f = np.float32
    used = f(d.used + 1)
    cores = f(d.usedcores + request.coresreq)
    mem = f(d.usedmem + request.memreq)
    total = (
        f(w.slot) * (used / f(d.count))
        + f(w.core) * (cores / f(d.totalcore))
        + f(w.memory) * (mem / f(d.totalmem))
    )
    return f(10) * total


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(1, 100),
    used=st.integers(0, 100),
    totalmem=st.integers(1, 200_000),
    usedmem=st.integers(0, 200_000),
    usedcores=st.integers(0, 100),
    memreq=st.integers(0, 100_000),
    cores=st.integers(0, 100),
    w=st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20)),
)
def test_device_score_is_float32_exact(count, used, totalmem, usedmem, usedcores, memreq, cores, w):
    d = dev("g", count, used, totalmem, usedmem, 100, usedcores)
    request = req(1, memreq, 101, cores)
    weights = Weights(*w)
    got = device_score(d, {"NVIDIA": request}, weights)
    assert got == float(_np_device_score(d, request, weights))


# (type, count, used, totalmem, usedmem, usedcores): few values, so cards of one state meet on a node
CARD = st.tuples(
    st.sampled_from(["NVIDIA", "NVIDIA A10"]),
    st.sampled_from([0, 10]),
    st.integers(0, 3),
    st.sampled_from([0, 23028, 81920]),
    st.sampled_from([0, 4000, 12000]),
    st.sampled_from([0, 30]),
)


@settings(max_examples=100, deadline=None)
@given(
    cards=st.lists(CARD, min_size=1, max_size=8),
    pct=st.sampled_from([101, 0, 50]),
    w=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
)
def test_cards_in_one_state_scored_once_score_as_each_alone(cards, pct, w):
    """``compute_device_scores`` scores a node's cards once per distinct state: every card still gets
    the score ``device_score`` gives it alone."""
    devices = [
        dev(f"g{i}", count, used, totalmem, usedmem, 100, cores, index=i, type=kind)
        for i, (kind, count, used, totalmem, usedmem, cores) in enumerate(cards)
    ]
    requests = {"NVIDIA": req(1, 3000, pct, 20)}
    weights = Weights(*w)
    compute_device_scores(devices, requests, weights)
    assert [d.score for d in devices] == [device_score(d, requests, weights) for d in devices]


def test_float32_decides_the_device_order():
    # in float64 both cards score 11.600000000000001; in float32 a=11.599999 < b=11.6
    a = dev("a", 10, 9, 7, 0, 100, 26, type="NVIDIA A10")
    b = dev("b", 10, 6, 7, 0, 100, 56, type="NVIDIA A10")
    probe = [b.copy(), a.copy()]
    compute_device_scores(probe, {"NVIDIA": req(1, 1)}, DEFAULT_WEIGHTS)
    assert probe[1].score < probe[0].score
    result = fit_pod(node_state(b, a), podview(req(1, 1)), VENDORS, policy("binpack"), DEFAULT_WEIGHTS)
    assert [d.uuid for d in result.containers[0]] == ["b"]


def test_request_terms_count_only_for_identical_type():
    model = dev("m", 10, 0, 8000, 0, 100, 0, type="NVIDIA A10")
    plain = dev("p", 10, 0, 8000, 0, 100, 0, type="NVIDIA")
    r = {"NVIDIA": req(1, 1000, 101, 30)}
    assert device_score(model, r, DEFAULT_WEIGHTS) == 0.0
    assert device_score(plain, r, DEFAULT_WEIGHTS) == pytest.approx(5.25)


def test_percentage_request_terms_use_the_device_memory():
    d = dev("p", 10, 0, 8000, 0, 100, 0)
    # 10 * (1/10 + 0 + 4000/8000)
    assert device_score(d, {"NVIDIA": req(1, 0, 50)}, DEFAULT_WEIGHTS) == pytest.approx(6.0)


def test_zero_totals_score_zero():
    assert device_score(dev("z", count=0), {"NVIDIA": req()}, DEFAULT_WEIGHTS) == 0.0
    assert device_score(dev("z", totalmem=0), {"NVIDIA": req()}, DEFAULT_WEIGHTS) == 0.0
    assert device_score(dev("z", totalcore=0), {"NVIDIA": req()}, DEFAULT_WEIGHTS) == 0.0


def test_node_score_is_usage_before_the_pod():
    assert node_score([dev("a", 10, 5, 8000, 4000, 100, 50), dev("b")]) == pytest.approx(7.5)
    assert node_score([dev("a", count=0)]) == 0.0


# -- 4.3 device ordering ---------------------------------------------------------------------------------


def scored(*specs):
    """(id, score, numa, index, used) tuples -> devices with preset scores."""
    out = []
    for id_, score, numa, index, used in specs:
        d = dev(id_, used=used, numa=numa, index=index)
        d.score = score
        out.append(d)
    return out


def order(devices, raw, numa_bind=False, annotations=None):
    devices = list(devices)
    sort_devices(devices, resolve_gpu_policy(annotations or {}, raw, numa_bind))
    return [d.id for d in devices]


MIXED = scored(("a", 2.0, 1, 0, 0), ("b", 1.0, 1, 1, 3), ("c", 2.0, 0, 2, 1), ("d", 1.0, 0, 3, 0))


def test_binpack_score_ascending_numa_tiebreak():
    assert order(MIXED, "binpack") == ["d", "b", "c", "a"]


@pytest.mark.parametrize("raw", ["spread", "", "topology-aware", "nonsense"])
def test_spread_like_score_descending_numa_tiebreak(raw):
    assert order(MIXED, raw) == ["c", "a", "d", "b"]


def test_mutex_used_descending_numa_tiebreak():
    assert order(MIXED, "mutex") == ["b", "c", "d", "a"]
    assert order(MIXED, "mutex", numa_bind=True) == ["b", "c", "d", "a"]


def test_numa_bind_single_policy_is_numa_primary():
    assert order(MIXED, "binpack", numa_bind=True) == ["b", "a", "d", "c"]
    assert order(MIXED, "spread", numa_bind=True) == ["c", "d", "a", "b"]


def test_comma_chain_keys_in_written_order_with_index_tiebreak():
    assert order(MIXED, "numa,binpack") == ["d", "c", "b", "a"]
    assert order(MIXED, "spread,numa") == ["c", "a", "d", "b"]
    assert order(MIXED, "binpack,mutex") == ["b", "d", "a", "c"]  # index breaks the score ties
    assert order(MIXED, "mutex,topology-aware") == ["a", "c", "b", "d"]  # empty chain -> spread, index
    assert order(MIXED, "numa") == ["c", "d", "a", "b"]  # bare numa: numa then index


def test_comma_chain_numa_bind_moves_numa_first():
    assert order(MIXED, "binpack,numa", numa_bind=True) == order(MIXED, "numa,binpack")
    assert order(MIXED, "spread,binpack", numa_bind=True) == ["c", "d", "a", "b"]


def test_chain_index_tiebreak_ignores_input_order():
    devices = scored(("x", 1.0, 0, 5, 0), ("y", 1.0, 0, 2, 0), ("z", 1.0, 0, 9, 0))
    assert order(devices, "binpack,numa") == ["y", "x", "z"]
    # single-value policies keep the input order on ties (stable), at any length
    many = scored(*[(f"g{i}", 1.0, 0, 20 - i, 0) for i in range(20)])
    assert order(many, "binpack") == [f"g{i}" for i in range(20)]


def test_gpu_policy_annotation_overrides_default():
    pol = resolve_gpu_policy({"hami.io/gpu-scheduler-policy": "binpack"}, "spread", False)
    assert pol.raw == "binpack"
    assert resolve_gpu_policy({}, "spread", False).raw == "spread"
    flags = resolve_gpu_policy({"hami.io/gpu-scheduler-policy": "spread, topology-aware, mutex"}, "", False)
    assert (flags.topology, flags.mutex) == (True, True)


# -- 4.4 node policy -----------------------------------------------------------------------------------


def test_node_policy_annotation_is_taken_verbatim():
    assert resolve_node_policy({}, "binpack") == "binpack"
    assert resolve_node_policy({"hami.io/node-scheduler-policy": "spread"}, "binpack") == "spread"
    # HAMi uses the annotation as written: anything but "spread" sorts like binpack
    assert resolve_node_policy({"hami.io/node-scheduler-policy": "nonsense"}, "spread") == "nonsense"


# -- 4.5 device scoring weights ------------------------------------------------------------------------

PREFIX = "invalid hami.io/device-scoring-weights annotation "


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("", "expected slot, core, and memory weights"),
        ("slot=1,core=1", "expected slot, core, and memory weights"),
        ("slot=1,core=1,memory=1,", "expected slot, core, and memory weights"),
        ("slot=1,core,memory=1", "expected key=value entries"),
        ("slot=1, slot =2,memory=1", 'duplicate "slot" weight'),
        ("slot=x,core=1,memory=1", '"slot" weight must be an integer'),
        ("slot=1_0,core=1,memory=1", '"slot" weight must be an integer'),
        ("slot=1.5,core=1,memory=1", '"slot" weight must be an integer'),
        ("slot=,core=1,memory=1", '"slot" weight must be an integer'),
        ("slot=9223372036854775808,core=1,memory=1", '"slot" weight must be an integer'),
        ("slot=1,core=-1,memory=1", '"core" weight must not be negative'),
        ("gpu=1,core=1,memory=1", 'unknown weight "gpu"'),
        ("gpu=x,core=1,memory=1", '"gpu" weight must be an integer'),
        ("gpu=-2,core=1,memory=1", '"gpu" weight must not be negative'),
        ("slot=0,core=0,memory=0", "at least one weight must be positive"),
    ],
)
def test_weights_error_messages(raw, detail):
    with pytest.raises(WeightsError) as info:
        parse_weights(raw)
    quoted = '"' + raw.replace('"', '\\"') + '"'
    assert str(info.value) == f"{PREFIX}{quoted}: {detail}"


def test_weights_quote_like_go():
    with pytest.raises(WeightsError) as info:
        parse_weights('slot=1,core="1",memory=1')
    assert str(info.value) == f'{PREFIX}"slot=1,core=\\"1\\",memory=1": "core" weight must be an integer'


def test_weights_valid_forms():
    assert parse_weights(" memory = 3 , slot=+1,core=0") == Weights(1, 0, 3)
    assert pod_weights({}) == Weights(1, 1, 1)


def test_weights_change_the_chosen_device():
    # g0 is busier in slots, g1 in memory; binpack walks the highest score first
    g0 = dev("g0", 10, 8, 8000, 0, 100, 0, type="NVIDIA A10")
    g1 = dev("g1", 10, 0, 8000, 6000, 100, 0, type="NVIDIA A10")
    by_slot = fit_pod(node_state(g0, g1), podview(req(1, 100)), VENDORS, policy("binpack"), Weights(1, 0, 0))
    by_mem = fit_pod(node_state(g0, g1), podview(req(1, 100)), VENDORS, policy("binpack"), Weights(0, 0, 1))
    assert [d.uuid for d in by_slot.containers[0]] == ["g0"]
    assert [d.uuid for d in by_mem.containers[0]] == ["g1"]

"""The simulator's memos: LRU bounded in bytes, safe under threads, immutable shared verdicts."""

from __future__ import annotations

import dataclasses
import gc
import threading
import tracemalloc

import pytest

from hami_sim.engine.cache import (
    DEFAULT_CACHE_BYTES,
    ENTRY_OVERHEAD,
    ByteLRU,
    approx_size,
    cache_bytes_from_env,
    usage_keys,
)
from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.factories import gpu, register


def gpu_node(name: str, gpus: int = 8, mem: int = 81920) -> dict:
    devices = [
        gpu(f"{name}-GPU-{g}", index=g, devmem=mem, type="NVIDIA A100-SXM4-80GB", numa=g // 4)
        for g in range(gpus)
    ]
    return {"metadata": {"name": name, "annotations": register(devices)}}


def gpu_pod(mem: int = 20000, gpus: int = 2) -> dict:
    limits = {"nvidia.com/gpu": str(gpus), "nvidia.com/gpumem": str(mem), "nvidia.com/gpucores": "30"}
    container = {"name": "main", "resources": {"limits": limits}}
    return {"metadata": {"name": "p", "namespace": "ml"}, "spec": {"containers": [container]}}


# -- the LRU itself -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "kept", "payload"),
    [
        # (op, key, size): "put" charges size (+ the memo's own overhead); "get" marks the key as used
        ([("put", "a", 40), ("put", "b", 40), ("put", "c", 40)], ["b", "c"], 80),
        ([("put", "a", 40), ("put", "b", 40), ("get", "a", 0), ("put", "c", 40)], ["a", "c"], 80),
        ([("put", "a", 40), ("put", "a", 10), ("put", "b", 40), ("put", "c", 40)], ["a", "b", "c"], 90),
        ([("put", "a", 30), ("put", "b", 30), ("put", "c", 30)], ["a", "b", "c"], 90),
        ([("put", "a", 30), ("put", "huge", 61)], ["a"], 30),  # above the per-entry limit: not kept
        ([("put", "a", 60), ("put", "b", 60), ("put", "c", 60)], ["b", "c"], 120),
    ],
)
def test_lru_keeps_the_recently_used_within_the_byte_budget(steps, kept, payload):
    budget = 100 + 3 * ENTRY_OVERHEAD
    lru: ByteLRU[str, str] = ByteLRU(budget, max_entry_bytes=60 + ENTRY_OVERHEAD)
    for op, key, size in steps:
        if op == "put":
            lru.put(key, key.upper(), size)
        else:
            assert lru.get(key) == key.upper()
    assert [k for k in ("a", "b", "c", "huge") if lru.get(k) is not None] == kept
    assert lru.bytes == payload + len(kept) * ENTRY_OVERHEAD <= budget


def test_lru_under_racing_threads_stays_bounded_and_consistent():
    lru: ByteLRU[int, int] = ByteLRU(5000 + 60 * ENTRY_OVERHEAD, max_entry_bytes=100 + ENTRY_OVERHEAD)
    start = threading.Barrier(8)
    peaks: list[int] = []  # each thread's largest byte count seen, checked in the main thread
    failures: list[BaseException] = []  # an assert in a thread would only be a pytest warning

    def work(seed: int) -> None:
        peak = 0
        try:
            start.wait()
            for i in range(3000):
                key = (seed * 7919 + i * 31) % 400
                if lru.get(key) is None:
                    lru.put(key, key, 10 + key % 50)
                peak = max(peak, lru.bytes)
        except BaseException as exc:  # noqa: BLE001 (reported by the main thread)
            failures.append(exc)
        finally:
            peaks.append(peak)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(peaks) == 8 and max(peaks) <= lru.max_bytes
    kept = [k for k in range(400) if lru._data.get(k) is not None]
    assert lru.bytes == sum(10 + k % 50 + ENTRY_OVERHEAD for k in kept) <= lru.max_bytes
    assert len(kept) > 50  # a race evicts the oldest entries, never everything


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, DEFAULT_CACHE_BYTES),
        ({"HAMI_SIM_CACHE_BYTES": "1048576"}, 1 << 20),
        ({"HAMI_SIM_CACHE_BYTES": "0"}, 0),
    ],
)
def test_cache_budget_comes_from_the_environment(env, expected):
    assert cache_bytes_from_env(env) == expected


@pytest.mark.parametrize("bad", ["1.5GiB", "-1", "lots"])
def test_a_bad_cache_budget_is_a_clear_configuration_error(bad):
    with pytest.raises(ValueError, match="HAMI_SIM_CACHE_BYTES"):
        cache_bytes_from_env({"HAMI_SIM_CACHE_BYTES": bad})


def test_size_estimate_grows_with_the_devices_a_node_registers():
    sim = Simulator(EngineConfig(cache_bytes=0))
    small = approx_size(sim.annotation_inventory(gpu_node("a", gpus=1)))
    large = approx_size(sim.annotation_inventory(gpu_node("b", gpus=100)))
    assert 30 * small < large


# -- the simulator's memos ----------------------------------------------------------------------------


def test_streaming_new_nodes_keeps_the_memos_within_their_budget():
    """5,000 filter calls, each with an 8-GPU template node never seen before (CA's churn).

    The accounted bytes stay under the budget after every call. What stays allocated is measured by
    tracemalloc over the last 1,500 calls only (tracing is slow): the memos hold far fewer than 1,500
    nodes, so by the end every entry was allocated while tracing, and everything still traced is what
    the memos really keep (plus any leak). It must fit the budget too: the estimate may not lie low.
    """
    budget = 1024 * 1024
    sim = Simulator(EngineConfig(cache_bytes=budget))
    ctx = sim.pod_context(gpu_pod())
    traced_from = 3500
    try:
        for call in range(5000):
            if call == traced_from:
                gc.collect()
                tracemalloc.start()
            [verdict] = sim.filter_nodes(ctx, [gpu_node(f"template-node-for-gpu-a100-{call}")])
            assert verdict.fits
            assert sim.cache_stats()["bytes"] <= budget
        del verdict
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    stats = sim.cache_stats()
    assert stats["evictions"] > 0 and stats["entries"] < 5000 - traced_from
    assert kept <= budget


def test_a_one_off_giant_inventory_is_not_memoised_but_still_answered():
    sim = Simulator(EngineConfig(cache_bytes=4 * 1024 * 1024))  # one entry may take 1/64 of a half
    ctx = sim.pod_context(gpu_pod())
    [giant] = sim.filter_nodes(ctx, [gpu_node("template-node-for-huge-0", gpus=200)])
    [small] = sim.filter_nodes(ctx, [gpu_node("template-node-for-gpu-0", gpus=8)])
    assert giant.fits and small.fits
    stats = sim.cache_stats()
    assert stats["refused"] >= 1  # the giant's inventory, by digest and by text
    assert stats["bytes"] < 200 * 1024


def test_a_memoised_verdict_cannot_be_changed_by_the_request_that_got_it():
    sim = Simulator(EngineConfig(cache_bytes=1 << 20))
    ctx = sim.pod_context(gpu_pod())
    node = gpu_node("template-node-for-gpu-a100-0")
    [first] = sim.filter_nodes(ctx, [node])
    fit = first.fit
    assert fit is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.reason = "mutated"  # type: ignore[misc]
    with pytest.raises(TypeError):
        fit.device_reasons["GPU-0"] = "mutated"  # type: ignore[index]
    with pytest.raises(AttributeError):
        fit.containers[0].append(None)  # type: ignore[attr-defined]
    first.node_group = "mine"  # the per-request verdict is the caller's own
    [second] = sim.filter_nodes(ctx, [node])
    assert second is not first and second.node_group is None
    assert second.fit is fit and [d.uuid for d in second.fit.containers[0]] == [
        d.uuid for d in fit.containers[0]
    ]


def test_a_zero_budget_memoises_nothing_and_answers_the_same():
    ctx_pod, node = gpu_pod(), gpu_node("template-node-for-gpu-a100-0")
    answers = []
    for budget in (0, 1 << 20):
        sim = Simulator(EngineConfig(cache_bytes=budget))
        ctx = sim.pod_context(ctx_pod)
        verdicts = sim.filter_nodes(ctx, [node]) + sim.filter_nodes(ctx, [node])
        answers.append([(v.fits, v.reason, v.score_after) for v in verdicts])
        assert (sim.cache_stats()["entries"] == 0) == (budget == 0)
    assert answers[0] == answers[1]


def test_group_tagged_inventories_share_the_budget():
    """The profiles resolver tags warm nodes with their group through the simulator's memo."""
    budget = 2 * 1024 * 1024
    sim = Simulator(EngineConfig(cache_bytes=budget))
    for i in range(2000):
        own = sim.annotation_inventory(gpu_node(f"template-node-for-gpu-a10-{i}"))
        tagged = sim.tag_inventory(own, "gpu-a10")
        assert (tagged.node_group, tagged.source, tagged.devices) == ("gpu-a10", own.source, own.devices)
        assert sim.tag_inventory(own, "gpu-a10") is tagged
        assert sim.cache_stats()["bytes"] <= budget
    assert sim.cache_stats()["evictions"] > 0


@pytest.mark.parametrize(
    "asks",
    [
        [("gpu-a10", None), ("gpu-a10", None)],
        [("gpu-a10", None), ("gpu-l4", None), ("gpu-a10", None)],  # a group renamed and back
        [("gpu-a10", None), ("gpu-a10", "profile"), ("gpu-a10", None)],
    ],
)
def test_a_tagged_copy_is_the_one_asked_for_whatever_was_asked_before(asks):
    """An inventory remembers the copy it was tagged with last: a different group or source gets
    its own copy, never the remembered one."""
    sim = Simulator(EngineConfig(cache_bytes=1 << 22))
    own = sim.annotation_inventory(gpu_node("template-node-for-gpu-a10-0"))
    seen = {}
    for group, source in asks:
        tagged = sim.tag_inventory(own, group, source)
        assert (tagged.node_group, tagged.source, tagged.devices) == (
            group,
            source or own.source,
            own.devices,
        )
        assert seen.setdefault((group, source), tagged) is tagged  # the same question, the same copy


def _answer(verdict) -> tuple:
    fit = verdict.fit
    chosen = [[d.uuid for d in c] for c in fit.containers] if fit else []
    reasons = dict(fit.device_reasons) if fit else {}
    return verdict.fits, verdict.reason, chosen, reasons, verdict.score_after


@pytest.mark.parametrize(
    ("pod", "gpus_per_node"),
    [
        (gpu_pod(), 8),  # fits: each node's own chosen UUIDs
        (gpu_pod(mem=90000), 8),  # fails on every card: per-device reasons name the node's UUIDs
        (gpu_pod(gpus=6), 4),  # too few cards
        (gpu_pod() | {"metadata": {"annotations": {"nvidia.com/use-gpuuuid": "b-GPU-3"}}}, 8),
        (gpu_pod() | {"metadata": {"annotations": {"nvidia.com/nouse-gpuuuid": "a-GPU-7,c-GPU-6"}}}, 8),
    ],
)
def test_nodes_differing_only_in_uuids_get_the_answers_of_nodes_fit_one_by_one(pod, gpus_per_node):
    """Templates of one group share a zero-usage verdict relabelled with their own UUIDs; a pod that
    names UUIDs is fit node by node. Either way each node's answer is the one a fresh fit gives."""
    nodes = [gpu_node(name, gpus=gpus_per_node) for name in ("a", "b", "c")]
    shared = Simulator(EngineConfig(cache_bytes=1 << 24))
    fresh = Simulator(EngineConfig(cache_bytes=0))
    got = [_answer(v) for v in shared.filter_nodes(shared.pod_context(pod), nodes)]
    want = [_answer(v) for v in fresh.filter_nodes(fresh.pod_context(pod), nodes)]
    assert got == want
    for name, answer in zip("abc", got, strict=True):
        assert all(uuid.startswith(f"{name}-") for c in answer[2] for uuid in c)
        assert all(uuid.startswith(f"{name}-") for uuid in answer[3])


@dataclasses.dataclass(frozen=True)
class _Use:  # what ``apply_usage`` reads of a device's live usage
    used: int
    usedmem: int
    usedcores: int
    mig: tuple = ()
    unhealthy: bool = False
    pod_infos: tuple = ()


class _Usage:  # a live node's usage, one object per content (as the usage store hands them out)
    def __init__(self, devices: dict[str, _Use]) -> None:
        self.devices = devices
        self.keys = usage_keys(devices)  # (as the store computes them when it loads a row)


def test_a_live_verdict_is_remembered_with_its_usage_object_and_follows_a_new_one():
    """CA asks about a real node every loop: the verdict is computed once per usage object (the store
    hands out the same one until the node's usage changes), and a changed usage is never answered
    from memory."""
    sim = Simulator(EngineConfig(cache_bytes=1 << 22))
    ctx = sim.pod_context(gpu_pod(mem=20000, gpus=2))
    node = gpu_node("ip-10-0-0-1", gpus=2)
    full = {f"ip-10-0-0-1-GPU-{g}": _Use(10, 81920, 100) for g in range(2)}
    current = [_Usage({})]

    def ask():
        [verdict] = sim.filter_nodes(ctx, [node], live=lambda name: current[0])
        return verdict

    first, again = ask(), ask()
    assert first.fits and again.fits and again.fit is first.fit  # remembered: the same fit
    current[0] = _Usage(full)
    busy = ask()
    assert (
        not busy.fits and busy.reason == "2/2 CardTimeSlicingExhausted"
    )  # HAMi's reason: 10 of 10 slots used
    current[0] = _Usage({})  # freed: a new object, so a new verdict
    freed = ask()
    assert freed.fits and freed.fit is not first.fit
    [template] = sim.filter_nodes(
        ctx, [gpu_node("template-node-for-g-1", gpus=2)], live=lambda name: current[0]
    )
    assert template.fits  # a template is never live, whatever the hook would say


_BASE_USE = _Use(1, 20000, 30)


@pytest.mark.parametrize(
    ("other", "shared"),
    [
        (_BASE_USE, True),  # equal usage per position: one fit, relabelled
        (dataclasses.replace(_BASE_USE, used=10), False),
        (dataclasses.replace(_BASE_USE, usedmem=81920), False),
        (dataclasses.replace(_BASE_USE, usedcores=100), False),
        (dataclasses.replace(_BASE_USE, unhealthy=True), False),
        (dataclasses.replace(_BASE_USE, mig=(("1g.10gb", None),)), False),  # MIG usage is never shared
        (None, False),  # no usage on the second node's first card
    ],
)
def test_live_nodes_of_one_shape_share_a_verdict_only_at_equal_usage(other, shared):
    """Real nodes of one group differ in their UUIDs and their usage: a verdict is shared between
    two of them only when every card holds the same usage (``cache.usage_signature``); otherwise
    each is fit, and either way each answer is the one a fresh fit gives."""
    pod = gpu_pod(mem=20000, gpus=2)
    usages = {"a": {"a-GPU-0": _BASE_USE}, "b": {"b-GPU-0": other} if other is not None else {}}
    nodes = [gpu_node(name, gpus=2) for name in "ab"]
    warm = Simulator(EngineConfig(cache_bytes=1 << 22))
    fresh = Simulator(EngineConfig(cache_bytes=0))

    def live(name: str) -> _Usage:
        return _Usage(usages[name])

    keep = {name: _Usage(usages[name]) for name in "ab"}  # one object per node, as the store
    ctx = warm.pod_context(pod)
    [first] = warm.filter_nodes(ctx, nodes[:1], live=keep.get)
    hits = warm.cache.lru.hits
    [second] = warm.filter_nodes(ctx, nodes[1:], live=keep.get)
    assert (warm.cache.lru.hits > hits) == shared
    want = [_answer(v) for v in fresh.filter_nodes(fresh.pod_context(pod), nodes, live=live)]
    assert [_answer(first), _answer(second)] == want


def test_caching_off_leaves_every_memo_of_the_process_empty():
    """``cache_bytes=0``: a call remembers nothing anywhere (no memo of the simulator's, and no
    process-wide one: the registration templates are the simulator's), and answers the same."""
    from hami_sim.engine import lru

    before = {id(memo): len(memo) for memo in list(lru._CACHES)}
    sim = Simulator(EngineConfig(cache_bytes=0))
    ctx = sim.pod_context(gpu_pod())
    nodes = [gpu_node(f"template-node-for-gpu-a100-{i}") for i in range(3)]
    assert [v.fits for v in sim.filter_nodes(ctx, nodes) + sim.filter_nodes(ctx, nodes)] == [True] * 6
    memos = (sim.cache.lru, sim.sightings.lru, sim._pods, sim.kinds.lru, sim.templates)
    assert [len(memo) for memo in memos] == [0] * len(memos)
    after = {id(memo): len(memo) for memo in list(lru._CACHES)}
    assert {k: n for k, n in after.items() if n != before.get(k, 0)} == {}

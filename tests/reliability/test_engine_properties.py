"""Property tests of the pure-Python engine (hypothesis; seeded and CI-sized).

Properties, stated as precisely as HAMi's rules allow:

1. **Round trips.** ``decode(encode(x)) == x`` for the NVIDIA JSON registration (with ``omitempty``
   on every field), the legacy 9-field format, pair scores and device cordons.
2. **Capacity monotonicity.** Giving devices more free memory or cores (raising ``devmem``/``devcore``
   or lowering ``usedmem``/``usedcores``) never turns a fit into a failure, *for pods with at most one
   device-requesting app container* (any number of requesting init containers), on non-MIG devices.
   Why the condition: a single container fits iff enough devices pass HAMi's per-device checks, which
   does not depend on the order Fit visits them; with NUMA binding the same holds per NUMA group.
   App containers are fitted cumulatively, and a capacity change re-orders devices (device scores
   include usage), so the first container can land elsewhere and starve the second:
   ``test_capacity_monotonicity_needs_a_single_app_container`` is that counterexample, and HAMi does
   the same. MIG devices are excluded: their memory comes from profiles, not ``devmem``.
3. **Request monotonicity.** Asking for more (count, MiB or percentage, cores; same form, >= 1)
   never turns a failure into a fit, under the same conditions. ``gpumem: 0`` and
   ``gpumem-percentage: 0`` are *unset* in HAMi and mean the whole card, so they are not "smaller".
4. **Reason counts.** Every ``c/m Reason`` has ``m`` = the node's NVIDIA devices, ``1 <= c <= m``,
   and the counts add up to at most ``m`` (each device is rejected, discarded by NUMA grouping or
   left partially allocated at most once); reasons are sorted as whole strings, each listed once.
   The documented exception: a MIG-mode device is revisited after each accepted instance, so
   ``AllocatedCardsInsufficientRequest`` can exceed ``m`` (``2/1 ...``).
5. **Determinism.** The same input gives the same verdict and the same devices, whether evaluated on
   a fresh or a warm simulator, alone or among other nodes in any order; the input is not mutated.
6. **No overcommit.** After a fit, no device holds more slots, MiB or cores than it has.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hami_sim.engine import reasons as R
from hami_sim.engine.annotations import (
    decode_device_json,
    decode_legacy,
    decode_pair_scores,
    encode_device_json,
    encode_legacy,
    encode_pair_scores,
    parse_cordon,
)
from hami_sim.engine.model import DeviceInfo, DeviceUsage, MigPlacement, MigProfile, NodeState
from hami_sim.engine.simulate import Simulator
from tests.factories import container, extender_args, gpu, node, pod

# Seeded (derandomize) and bounded: the whole module runs in seconds on 2 cores.
PROPS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

INT32 = st.integers(-(2**31), 2**31 - 1)
NAME_CHARS = st.characters(exclude_categories=("Cs",))  # orjson (like Go) rejects lone surrogates
TEXT = st.text(NAME_CHARS, max_size=12)

# ---------------------------------------------------------------------------------------------------
# 1. Round trips
# ---------------------------------------------------------------------------------------------------

placements = st.builds(MigPlacement, st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
mig_profiles = st.builds(
    MigProfile,
    name=TEXT,
    memory_mb=INT32,
    core=INT32,
    slice_count=st.integers(-(2**63), 2**63 - 1),
    placements=st.lists(placements, max_size=3).map(tuple),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
device_infos = st.builds(
    DeviceInfo,
    id=TEXT,
    index=st.integers(0, 2**64 - 1),
    count=INT32,
    devmem=INT32,
    devcore=INT32,
    type=TEXT,
    numa=st.integers(-(2**63), 2**63 - 1),
    mode=TEXT,
    health=st.booleans(),
    mig_profiles=st.lists(mig_profiles, max_size=2).map(tuple),
    device_vendor=st.just(""),
    # an empty map is omitted on write and reads back as absent (Go's omitempty does the same)
    custom_info=st.none() | st.dictionaries(TEXT, json_values, min_size=1, max_size=3),
)


@PROPS
@given(st.lists(device_infos, max_size=5))
def test_nvidia_json_round_trip(devices):
    encoded = encode_device_json(devices)
    assert decode_device_json(encoded) == devices
    # and the encoding is canonical: re-encoding what we decoded gives the same bytes
    assert encode_device_json(decode_device_json(encoded)) == encoded


@PROPS
@given(st.lists(device_infos, min_size=1, max_size=3), st.sampled_from(["NVIDIA", "AMD"]))
def test_vendor_is_stamped_and_round_trips_with_include_vendor(devices, vendor):
    decoded = decode_device_json(encode_device_json(devices), vendor)
    assert {d.device_vendor for d in decoded} == {vendor}
    assert decode_device_json(encode_device_json(decoded, include_vendor=True)) == decoded


LEGACY_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters=",:"), max_size=10)


@PROPS
@given(
    st.lists(
        st.builds(
            DeviceInfo,
            id=LEGACY_TEXT,
            index=st.integers(0, 2**31),
            count=INT32,
            devmem=INT32,
            devcore=INT32,
            type=LEGACY_TEXT,
            numa=INT32,
            mode=LEGACY_TEXT,
            health=st.booleans(),
        ),
        max_size=5,
    )
)
def test_legacy_nine_field_round_trip(devices):
    encoded = encode_legacy(devices)
    if not devices:
        assert encoded == ""
        return
    assert decode_legacy(encoded) == devices


@PROPS
@given(st.dictionaries(TEXT, st.dictionaries(TEXT, st.integers(-(2**63), 2**63 - 1), max_size=4), max_size=4))
def test_pair_scores_round_trip(scores):
    assert decode_pair_scores(encode_pair_scores(scores)) == scores


@PROPS
@given(
    st.lists(
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters=","), max_size=8), max_size=6
    )
)
def test_cordon_parse_is_set_of_trimmed_ids(ids):
    assert parse_cordon(",".join(ids)) == frozenset(i.strip() for i in ids if i.strip())


# ---------------------------------------------------------------------------------------------------
# Fit properties: generated nodes and pods
# ---------------------------------------------------------------------------------------------------

GPU_POLICIES = ["spread", "binpack", "mutex", "topology-aware", "numa", "binpack,numa", "spread,numa", ""]
# "NVIDIA A10" is what real nodes register (request terms drop out of device scores); "NVIDIA" is
# what HAMi's unit tests use (request terms count), so both orderings are exercised.
DEVICE_TYPES = ["NVIDIA A10", "NVIDIA"]


@st.composite
def device_usages(draw, index: int, type_: str) -> DeviceUsage:
    count = draw(st.integers(1, 10))
    totalmem = draw(st.integers(1, 40000))
    totalcore = draw(st.sampled_from([100, 100, 50, 200, 0]))
    return DeviceUsage(
        id=f"GPU-{index}",
        index=index,
        count=count,
        totalmem=totalmem,
        totalcore=totalcore,
        type=type_,
        numa=draw(st.integers(0, 1)),
        mode="hami-core",
        health=draw(st.sampled_from([True, True, True, True, False])),
        vendor="NVIDIA",
        # idle devices are common (templates); partly used ones exercise scores and ordering
        used=draw(st.just(0) | st.integers(0, count)),
        usedmem=draw(st.just(0) | st.integers(0, totalmem)),
        usedcores=draw(st.just(0) | st.integers(0, totalcore)),
    )


@st.composite
def node_states(draw, min_devices: int = 1, max_devices: int = 4) -> NodeState:
    type_ = draw(st.sampled_from(DEVICE_TYPES))
    n = draw(st.integers(min_devices, max_devices))
    devices = [draw(device_usages(i, type_)) for i in range(n)]
    cordoned = frozenset(draw(st.sets(st.sampled_from([d.id for d in devices]), max_size=1)))
    return NodeState("node-a", devices, {}, cordoned)


@st.composite
def device_requests(draw) -> dict:
    """One container's NVIDIA request in pod form; memory either absolute or a percentage."""
    out = {
        "gpu_count": draw(st.sampled_from([1, 1, 1, 2, 3])),
        "gpucores": draw(st.none() | st.integers(0, 120)),
    }
    if draw(st.booleans()):
        out["gpumem"] = draw(st.integers(1, 16000))
    else:
        out["mem_pct"] = draw(st.integers(1, 100))
    return out


@st.composite
def pod_annotations(draw) -> dict:
    ann = {"hami.io/gpu-scheduler-policy": draw(st.sampled_from(GPU_POLICIES))}
    if draw(st.booleans()):
        ann["nvidia.com/numa-bind"] = "true"
    return ann


def _pod(app: dict, inits: list[dict], annotations: dict, extra_plain: int = 0) -> dict:
    containers = [container("app", **app)] + [
        container(f"side{i}", gpu_count=None) for i in range(extra_plain)
    ]
    init = [container(f"init{i}", **r) for i, r in enumerate(inits)]
    return pod("p", containers=containers, init=init or None, annotations=annotations)


def _evaluate(sim: Simulator, pod_obj: dict, state: NodeState):
    ctx = sim.pod_context(pod_obj)
    return sim.evaluate(ctx, state.name, state)


@st.composite
def more_capacity(draw, state: NodeState) -> NodeState:
    """The same node with more free memory and/or cores on some devices (nothing else changed)."""
    better = state.copy()
    for dev in better.devices:
        if draw(st.booleans()):
            if draw(st.booleans()):
                dev.totalmem += draw(st.integers(1, 20000))
            else:
                dev.usedmem -= draw(st.integers(0, dev.usedmem))
        if draw(st.booleans()):
            if draw(st.booleans()):
                dev.totalcore += draw(st.integers(1, 100))
            else:
                dev.usedcores -= draw(st.integers(0, dev.usedcores))
    return better


@PROPS
@given(st.data())
def test_more_free_capacity_never_turns_a_fit_into_a_failure(data):
    sim = Simulator()
    state = data.draw(node_states())
    app = data.draw(device_requests())
    inits = data.draw(st.lists(device_requests(), max_size=2))
    pod_obj = _pod(app, inits, data.draw(pod_annotations()), extra_plain=data.draw(st.integers(0, 1)))
    before = _evaluate(sim, pod_obj, state)
    better = data.draw(more_capacity(state))
    after = _evaluate(sim, pod_obj, better)
    event(f"fits before={before.fits} after={after.fits}")
    if before.fits:
        assert after.fits, f"fit on {state} but {after.reason!r} with more capacity {better}"
    if not after.fits:
        assert not before.fits


@st.composite
def larger(draw, request: dict) -> dict:
    out = dict(request)
    out["gpu_count"] = request["gpu_count"] + draw(st.integers(0, 2))
    if request.get("gpucores") is not None:
        out["gpucores"] = request["gpucores"] + draw(st.integers(0, 60))
    elif draw(st.booleans()):
        out["gpucores"] = draw(st.integers(0, 120))
    if "gpumem" in request:
        out["gpumem"] = request["gpumem"] + draw(st.integers(0, 20000))
    else:
        out["mem_pct"] = min(100, request["mem_pct"] + draw(st.integers(0, 60)))
    return out


@PROPS
@given(st.data())
def test_a_larger_request_never_turns_a_failure_into_a_fit(data):
    sim = Simulator()
    state = data.draw(node_states())
    app = data.draw(device_requests())
    inits = data.draw(st.lists(device_requests(), max_size=1))
    annotations = data.draw(pod_annotations())
    small = _pod(app, inits, annotations)
    big = _pod(data.draw(larger(app)), [data.draw(larger(r)) for r in inits], annotations)
    small_verdict = _evaluate(sim, small, state)
    big_verdict = _evaluate(sim, big, state)
    event(f"small fits={small_verdict.fits} big fits={big_verdict.fits}")
    if big_verdict.fits:
        assert small_verdict.fits, (
            f"{big} fits but smaller {small} fails with {small_verdict.reason!r} on {state}"
        )


def test_capacity_monotonicity_needs_a_single_app_container():
    """Why property 2 is conditional: HAMi's own behaviour with two app containers under spread.

    X (5 MiB, score 3) and Y (10 MiB, score 6): the 5 MiB container goes to X, the 10 MiB one to Y.
    Free Y's cores and its score drops below X's: the 5 MiB container now lands on Y and the
    10 MiB container fits nowhere. Both answers are what HAMi v2.10 computes.
    """

    def node_with(y_usedcores: int) -> NodeState:
        x = DeviceUsage(
            "X", 0, 10, 5, 100, "NVIDIA A10", 0, "hami-core", True, "NVIDIA", used=1, usedcores=20
        )
        y = DeviceUsage(
            "Y", 1, 10, 10, 100, "NVIDIA A10", 0, "hami-core", True, "NVIDIA", used=1, usedcores=y_usedcores
        )
        return NodeState("n", [x, y])

    two = pod(
        containers=[container("a", gpu_count=1, gpumem=5), container("b", gpu_count=1, gpumem=10)],
        annotations={"hami.io/gpu-scheduler-policy": "spread"},
    )
    sim = Simulator()
    before = _evaluate(sim, two, node_with(50))
    assert before.fits
    assert [[d.uuid for d in c] for c in before.fit.containers] == [["X"], ["Y"]]
    after = _evaluate(sim, two, node_with(0))
    assert not after.fits
    assert after.reason == "2/2 CardInsufficientMemory"


def _parts(reason: str) -> list[tuple[int, int, str]]:
    out = []
    for part in reason.split(", "):
        head, _, name = part.partition(" ")
        c, _, m = head.partition("/")
        out.append((int(c), int(m), name))
    return out


KNOWN_REASONS = {
    R.CARD_TYPE_MISMATCH,
    R.CARD_UUID_MISMATCH,
    R.CARD_TIME_SLICING_EXHAUSTED,
    R.CARD_COMPUTE_UNITS_EXHAUSTED,
    R.CARD_INSUFFICIENT_MEMORY,
    R.CARD_INSUFFICIENT_CORE,
    R.CARD_NOT_HEALTH,
    R.CARD_CORDONED,
    R.NUMA_NOT_FIT,
    R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT,
    R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST,
    R.CARD_MIG_TOPOLOGY_INFEASIBLE,
}


@PROPS
@given(st.data())
def test_reason_counts_never_exceed_the_device_count(data):
    sim = Simulator()
    state = data.draw(node_states())
    annotations = data.draw(pod_annotations())
    if data.draw(st.booleans()):
        annotations["nvidia.com/use-gputype"] = data.draw(st.sampled_from(["A10", "H100", "NVIDIA"]))
    pod_obj = _pod(
        data.draw(device_requests()), data.draw(st.lists(device_requests(), max_size=1)), annotations
    )
    verdict = _evaluate(sim, pod_obj, state)
    event(verdict.reason.split(" ")[0] if not verdict.fits else "fits")
    if verdict.fits:
        assert verdict.reason == ""
        return
    if verdict.reason == R.NODE_INSUFFICIENT_DEVICE:
        return  # the bare string: more devices requested than the node has
    parts = _parts(verdict.reason)
    m = len(state.devices)
    assert all(total == m for _, total, _ in parts), verdict.reason
    assert all(1 <= c <= m for c, _, _ in parts), verdict.reason
    assert sum(c for c, _, _ in parts) <= m, verdict.reason
    names = [name for _, _, name in parts]
    assert len(set(names)) == len(names) and set(names) <= KNOWN_REASONS, verdict.reason
    texts = verdict.reason.split(", ")
    assert texts == sorted(texts)


def test_mig_revisit_is_the_documented_exception_to_reason_counts():
    """One MIG GPU with two free 1g placements, three instances asked: ``2/1`` allocated, as HAMi."""
    profile = MigProfile("1g.5gb", 5120, 14, 1, (MigPlacement(5, 1), MigPlacement(6, 1)))
    dev = DeviceUsage(
        "GPU-0", 0, 7, 40960, 100, "NVIDIA A100-SXM4-40GB", 0, "mig", True, "NVIDIA", (profile,)
    )
    verdict = _evaluate(Simulator(), pod(gpu_count=3, gpumem=4000), NodeState("mig", [dev]))
    assert not verdict.fits
    assert verdict.reason == "1/1 CardMigTopologyInfeasible, 2/1 AllocatedCardsInsufficientRequest"


@PROPS
@given(st.data())
def test_a_fit_never_overcommits_a_device(data):
    sim = Simulator()
    state = data.draw(node_states())
    apps = data.draw(st.lists(device_requests(), min_size=1, max_size=3))
    pod_obj = pod(
        containers=[container(f"c{i}", **r) for i, r in enumerate(apps)],
        init=[container("init", **data.draw(device_requests()))] if data.draw(st.booleans()) else None,
        annotations=data.draw(pod_annotations()),
    )
    verdict = _evaluate(sim, pod_obj, state)
    if not verdict.fits:
        return
    before = {d.id: d for d in state.devices}
    for dev in verdict.fit.usage_after:
        assert dev.used <= max(dev.count, before[dev.id].used)
        assert dev.usedmem <= max(dev.totalmem, before[dev.id].usedmem)
        assert dev.usedcores <= max(dev.totalcore, before[dev.id].usedcores)
    chosen = [d for c in verdict.fit.containers for d in c]
    assert all(d.uuid not in state.cordoned for d in chosen)
    assert all(before[d.uuid].health for d in chosen)


# ---------------------------------------------------------------------------------------------------
# 5. Determinism
# ---------------------------------------------------------------------------------------------------


def _choice(verdict) -> tuple:
    containers = verdict.fit.containers if verdict.fit and verdict.fits else []
    return (
        verdict.fits,
        verdict.reason,
        tuple(tuple((d.uuid, d.usedmem, d.usedcores) for d in c) for c in containers),
    )


@PROPS
@given(st.data())
def test_device_choice_is_deterministic_and_input_is_not_mutated(data):
    state = data.draw(node_states(max_devices=6))
    apps = data.draw(st.lists(device_requests(), min_size=1, max_size=2))
    pod_obj = pod(
        containers=[container(f"c{i}", **r) for i, r in enumerate(apps)],
        annotations=data.draw(pod_annotations()),
    )
    snapshot = copy.deepcopy(state)
    pod_snapshot = copy.deepcopy(pod_obj)
    warm = Simulator()
    first = _choice(_evaluate(warm, pod_obj, state))
    for _ in range(2):
        assert _choice(_evaluate(warm, pod_obj, state)) == first
    assert _choice(_evaluate(Simulator(), pod_obj, state.copy())) == first
    assert state == snapshot
    assert pod_obj == pod_snapshot


@st.composite
def template_nodes(draw, name: str) -> dict:
    n = draw(st.integers(1, 4))
    devmem = draw(st.sampled_from([8192, 16384, 23028, 81920]))
    devices = [
        gpu(
            f"{name}-GPU-{i}",
            index=i,
            devmem=devmem,
            numa=draw(st.integers(0, 1)),
            health=draw(st.booleans() | st.just(True)),
        )
        for i in range(n)
    ]
    return node(name, devices)


@PROPS
@given(st.data())
def test_a_nodes_verdict_does_not_depend_on_the_other_nodes(data):
    """CA sends the same templates in any order and any company: each answer must be the same."""
    names = ["tmpl-a", "tmpl-b", "tmpl-c"]
    nodes = [data.draw(template_nodes(n)) for n in names]
    req = data.draw(device_requests())
    pod_obj = pod(containers=[container("c", **req)], annotations=data.draw(pod_annotations()))
    sim = Simulator()
    ctx = sim.pod_context(pod_obj)
    alone = {n["metadata"]["name"]: _choice(Simulator().filter_nodes(ctx, [n])[0]) for n in nodes}
    order = data.draw(st.permutations(nodes))
    together = {v.name: _choice(v) for v in sim.filter_nodes(ctx, order)}
    assert together == alone
    # a warm simulator (memoised verdicts) answers the same again
    assert {v.name: _choice(v) for v in sim.filter_nodes(ctx, nodes)} == alone


@pytest.mark.django_db
@pytest.mark.api
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_filter_simulation_answers_are_deterministic_over_http(client, data):
    """The same ExtenderArgs twice: byte-identical answers (the memo caches never change an answer)."""
    nodes = [data.draw(template_nodes(n)) for n in ("tmpl-a", "tmpl-b")]
    pod_obj = pod(
        containers=[container("c", **data.draw(device_requests()))], annotations=data.draw(pod_annotations())
    )
    body = extender_args(pod_obj, nodes)
    first = client.post("/filter-simulation", body, content_type="application/json")
    second = client.post("/filter-simulation", body, content_type="application/json")
    assert first.status_code == second.status_code == 200
    assert first.content == second.content

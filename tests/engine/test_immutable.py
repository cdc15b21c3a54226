"""What a cache hands out cannot be changed by a reader: every object reachable from each kind of
cached object (given to every request asking the same) refuses a write, found by walking the object
graph. One table of cases, a case per kind: verdicts, pod contexts, registrations and their devices
(every vendor's, with pair scores and vendor data), tagged inventories, vendor plans, node-group
entries with their templates, and the gRPC expander's decoded pods and nodes and its packings."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from types import FunctionType, MappingProxyType

import pytest

from hami_sim.engine.annotations import NVIDIA_PAIR_SCORE, encode_pair_scores
from hami_sim.engine.frozen import FrozenDict, FrozenList, ReadOnly, freeze
from hami_sim.engine.model import Inventory
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import Vendor
from hami_sim.engine.vendors.ascend import NODE_HAMI_CORE
from hami_sim.engine.vendors.metax import TOPOLOGY_LOSSES, TOPOLOGY_SCORES
from tests.engine.test_cache import _Usage, _Use, gpu_node, gpu_pod
from tests.factories import gpu, node

_LEAVES = (str, bytes, int, float, bool, type(None), FunctionType)
#: handed out by identity, not content: the simulator's rule objects (one per backend, per simulator)
_SHARED = (Vendor,)
#: fields the walk does not enter, each with why
_NOT_CONTENT = {
    (
        Inventory,
        "entry",
    ): "the cache's own record of the inventory (its verdict memos), never read as content",
}
_CONTAINERS = (tuple, frozenset, FrozenList)
_MAPPINGS = (FrozenDict, MappingProxyType)


def _writable(obj: object, path: str = "obj", seen: set[int] | None = None) -> list[str]:
    """Every place under ``obj`` a reader could write to."""
    seen = set() if seen is None else seen
    if isinstance(obj, _LEAVES + _SHARED) or id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, _CONTAINERS):
        return [w for i, item in enumerate(obj) for w in _writable(item, f"{path}[{i}]", seen)]
    if isinstance(obj, _MAPPINGS):
        return [w for k, v in obj.items() for w in _writable((k, v), f"{path}[{k!r}]", seen)]
    if dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj) if (type(obj), f.name) not in _NOT_CONTENT]
        return _fields(obj, names, path, seen)
    if isinstance(obj, ReadOnly):  # (a slotted class of the engine's that is not a dataclass)
        names = [n for c in type(obj).__mro__ for n in getattr(c, "__slots__", ()) if n != "__weakref__"]
        items = list(obj) if isinstance(obj, Sequence) else []  # (its devices, built when read)
        return _fields(obj, names, path, seen) + _writable(tuple(items), f"{path}[:]", seen)
    return [f"{path} ({type(obj).__name__})"]  # a list, dict, set or other mutable object


def _fields(obj: object, names: list[str], path: str, seen: set[int]) -> list[str]:
    found = []
    for name in names:
        value = getattr(obj, name)
        try:
            setattr(obj, name, value)  # the same value: harmless if it were allowed
            found.append(f"{path}.{name}")
        except dataclasses.FrozenInstanceError:
            pass
        found.extend(_writable(value, f"{path}.{name}", seen))
    return found


# -- the cached objects, by kind ------------------------------------------------------------------
def _verdicts() -> list[tuple[str, object]]:
    """Zero-usage and live verdicts (the fit, and what the cache holds: a shared fit and UUIDs)."""
    sim = Simulator(EngineConfig(cache_bytes=1 << 22))
    out = []
    for label, pod in [("fits", gpu_pod()), ("fails", gpu_pod(mem=90000)), ("too few", gpu_pod(gpus=9))]:
        ctx = sim.pod_context(pod)
        for name in ("template-node-for-a-0", "template-node-for-a-1"):  # fit, then shared by shape
            [verdict] = sim.filter_nodes(ctx, [gpu_node(name)])
            [again] = sim.filter_nodes(ctx, [gpu_node(name)])
            assert again.device_fit is verdict.device_fit  # handed out from the cache
            out += [
                (f"verdict {label} {name}", verdict.fit),
                (f"verdict {label} {name} as cached", verdict.device_fit),
            ]
        usage = _Usage({"ip-1-GPU-0": _Use(1, 1000, 10)})
        [live] = sim.filter_nodes(ctx, [gpu_node("ip-1")], live=lambda name, u=usage: u)
        out += [(f"verdict {label} live", live.fit), (f"verdict {label} live as cached", live.device_fit)]
    return out


def _pod_contexts() -> list[tuple[str, object]]:
    """A parsed pod (its view, annotations, requests), handed to every call sending the same JSON."""
    sim = Simulator(EngineConfig(cache_bytes=1 << 26))  # (a pod's entry is a 64th of a 64th)
    annotated = gpu_pod() | {"metadata": {"name": "p", "annotations": {"nvidia.com/use-gputype": "A100"}}}
    out = []
    for label, pod in [("plain", gpu_pod()), ("annotated", annotated)]:
        ctx = sim.pod_context(pod)
        assert sim.pod_context(pod) is ctx  # handed out from the memo
        out.append((f"pod context {label}", ctx))
    return out


#: what some vendors read beside their registration: pair scores (NVIDIA), topology (MetaX),
#: the hami-vnpu-core switch (Ascend): each lands in the inventory or its devices' vendor data
_EXTRA = {
    NVIDIA_PAIR_SCORE: "",  # (filled per node with its own UUIDs)
    TOPOLOGY_LOSSES: '{"0":{"1":10}}',
    TOPOLOGY_SCORES: '{"0":{"1":90}}',
    NODE_HAMI_CORE: "true",
}


def _with_extras(raw: dict) -> dict:
    """``raw`` with ``_EXTRA``'s annotations; pair scores between its first two NVIDIA devices."""
    annotations = dict(raw["metadata"].get("annotations") or {})
    annotations.update({k: v for k, v in _EXTRA.items() if v})
    sim = Simulator()
    ids = [d.id for d in sim.inventory(raw).devices]
    if len(ids) > 1:
        annotations[NVIDIA_PAIR_SCORE] = encode_pair_scores({ids[0]: {ids[1]: 50}, ids[1]: {ids[0]: 50}})
    return {**raw, "metadata": {**raw["metadata"], "annotations": annotations}}


def _inventories() -> list[tuple[str, object]]:
    """Every vendor's registrations decoded and cached (the first of a shape, one rebuilt from its
    template, one with the extra annotations), a registration the general decoder reads (vendor
    data, MIG profiles), and a copy tagged with its node group; each with the plan of its kind."""
    from tests.reliability.differential import ALL_VENDORS, vendor_nodes

    sim = Simulator(EngineConfig(cache_bytes=1 << 24))
    uncommon = node(
        "n-uncommon", [gpu("GPU-u0") | {"customInfo": {"zone": ["a", "b"]}}, gpu("GPU-u1", index=1)]
    )
    nodes = [("nvidia uncommon entry", uncommon)]
    for vendor in ALL_VENDORS:
        first, second = vendor_nodes(vendor)[:2]
        nodes += [
            (f"{vendor} first", first),
            (f"{vendor} same shape", second),
            (f"{vendor} extras", _with_extras(first)),
        ]
    out: list[tuple[str, object]] = []
    for label, raw in nodes:
        inventory = sim.inventory(raw)
        assert sim.inventory(raw) is inventory  # handed out from the cache
        assert inventory.devices and not inventory.error, label
        tagged = sim.tag_inventory(inventory, "group-a", "profile")
        meta = raw["metadata"]
        plan = sim.kinds.plan(meta.get("annotations") or {}, raw)
        assert sim.kinds.plan(meta.get("annotations") or {}, raw) is plan
        out += [(f"inventory {label}", inventory), (f"tagged {label}", tagged), (f"plan {label}", plan)]
    return out


_CASES: list[tuple[str, object]] = [*_verdicts(), *_pod_contexts(), *_inventories()]


@pytest.mark.parametrize(("label", "cached"), _CASES, ids=[label for label, _ in _CASES])
def test_nothing_reachable_from_a_cached_object_can_be_written(label, cached):
    assert cached is not None
    assert _writable(cached) == []


def test_pair_scores_and_vendor_data_are_read_only_where_cached():
    """(The cases above reach both; this says they do, so the table cannot lose them unnoticed.)"""
    by_label = dict(_CASES)
    assert by_label["inventory NVIDIA extras"].pair_scores  # type: ignore[attr-defined]
    for label in ("Metax-GPU extras", "Ascend910B3 extras", "Enflame first", "nvidia uncommon entry"):
        assert any(d.custom_info for d in by_label[f"inventory {label}"].devices), label  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_nothing_reachable_from_a_node_group_entry_can_be_written():
    """A node group as the catalog holds it (its profile node, rendered template and the "no
    profile" inventory): shared by every call until the next reload."""
    from profiles.inventory import load_snapshot
    from tests.factories.models import NodeGroupFactory
    from tests.profiles.conftest import A10

    NodeGroupFactory(
        name="gpu-a10", rows=[{**A10, "quantity": 4}], taints=[{"key": "k", "effect": "NoSchedule"}]
    )
    entry = load_snapshot().groups["gpu-a10"]
    assert entry.template is not None and entry.template["spec"]["taints"]
    assert _writable(entry, "entry") == []


def test_nothing_reachable_from_the_expanders_cached_objects_can_be_written():
    """The gRPC expander's decoded pods and template nodes (by their bytes, across calls) and its
    packings (by what they depend on)."""
    from profiles.inventory import Catalog
    from simulations.grpcexpander.caches import CallCache, ExpanderCaches, pods_digest
    from simulations.grpcexpander.options import evaluate
    from simulations.grpcexpander.protos import expander_pb2 as pb
    from tests.expander.test_grpc_expander import pod_msg, warm_a10

    sim = Simulator(EngineConfig(cache_bytes=1 << 24))
    cache = CallCache(sim, shared=ExpanderCaches(sim.budgets))
    raw_pods = [pod_msg(f"p{i}", 1000).SerializeToString() for i in range(3)]
    raw_node = warm_a10("template-node-for-gpu-a10-1").SerializeToString()
    request = pb.BestOptionsRequest(
        options=[pb.Option(nodeGroupId="gpu-a10", nodeCount=2, podBytes=raw_pods)],
        nodeBytesMap={"gpu-a10": raw_node},
    )
    [verdict] = evaluate(cache, request, Catalog())
    assert verdict.placed == 3, verdict.reason
    template = cache.node(raw_node)
    key = cache.key(2, pods_digest(raw_pods), False, template, sim.inventory(template))
    packed = cache.shared.packed.get(key)
    assert packed is not None and cache.pod(raw_pods[0])["spec"]["containers"]
    cached = {"pod": cache.pod(raw_pods[0]), "node": template, "packing": packed}
    assert {k: _writable(v, k) for k, v in cached.items()} == {k: [] for k in cached}


# -- the walk and the read-only containers -----------------------------------------------------------
def test_the_walk_finds_a_writable_field():
    @dataclasses.dataclass
    class Loose:
        items: list

    assert _writable((Loose([1]),)) == ["obj[0].items", "obj[0].items (list)"]
    assert _writable(FrozenDict({"a": {"b": 1}})) == ["obj['a'][1] (dict)"]


_WRITES: list[tuple[str, Callable[[object], object]]] = [
    ("set", lambda c: c.__setitem__(0, 1)),  # type: ignore[attr-defined]
    ("delete", lambda c: c.__delitem__(0)),  # type: ignore[attr-defined]
    ("clear", lambda c: c.clear()),  # type: ignore[attr-defined]
    ("pop", lambda c: c.pop(0)),  # type: ignore[attr-defined]
]
_DICT_WRITES = [("update", lambda c: c.update({1: 2})), ("setdefault", lambda c: c.setdefault(1, 2)),
                ("popitem", lambda c: c.popitem()), ("|=", lambda c: c.__ior__({1: 2}))]  # fmt: skip
_LIST_WRITES = [("append", lambda c: c.append(1)), ("extend", lambda c: c.extend([1])), ("insert", lambda c: c.insert(0, 1)),
                ("remove", lambda c: c.remove(0)), ("sort", lambda c: c.sort()), ("reverse", lambda c: c.reverse()),
                ("+=", lambda c: c.__iadd__([1])), ("*=", lambda c: c.__imul__(2))]  # fmt: skip


_CONTAINER_WRITES = [(f"dict {n}", {0: 0}, w) for n, w in _WRITES + _DICT_WRITES] + [
    (f"list {n}", [0], w) for n, w in _WRITES + _LIST_WRITES
]


@pytest.mark.parametrize(
    ("label", "value", "write"), _CONTAINER_WRITES, ids=[c[0] for c in _CONTAINER_WRITES]
)
def test_a_read_only_container_refuses_every_write_and_reads_as_json(label, value, write):
    import orjson

    container = freeze(value)
    with pytest.raises(TypeError, match="read-only"):
        write(container)
    assert container == value
    # orjson (sessions, cache keys) writes it out as the dict or list it is
    assert orjson.dumps(container, option=orjson.OPT_NON_STR_KEYS) == orjson.dumps(
        value, option=orjson.OPT_NON_STR_KEYS
    )

"""A cached answer cannot be changed by a reader: every object reachable from a verdict the cache
hands out (to every request asking the same) refuses a write, found by walking the object graph."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from hami_sim.engine.simulate import EngineConfig, Simulator
from tests.engine.test_cache import _Usage, _Use, gpu_node, gpu_pod

_LEAVES = (str, bytes, int, float, bool, type(None), frozenset)


def _writable(obj: object, path: str = "verdict", seen: set[int] | None = None) -> list[str]:
    """Every place under ``obj`` a reader could write to."""
    seen = set() if seen is None else seen
    if isinstance(obj, _LEAVES) or id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, tuple):
        return [w for i, item in enumerate(obj) for w in _writable(item, f"{path}[{i}]", seen)]
    if isinstance(obj, MappingProxyType):
        return [w for k, v in obj.items() for w in _writable(v, f"{path}[{k!r}]", seen)]
    if dataclasses.is_dataclass(obj):
        found = []
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            try:
                setattr(obj, f.name, value)  # the same value: harmless if it were allowed
                found.append(f"{path}.{f.name}")
            except dataclasses.FrozenInstanceError:
                pass
            found.extend(_writable(value, f"{path}.{f.name}", seen))
        return found
    return [f"{path} ({type(obj).__name__})"]  # a list, dict, set or other mutable object


def _cached_answers() -> list[tuple[str, object]]:
    sim = Simulator(EngineConfig(cache_bytes=1 << 22))
    out = []
    for label, pod in [("fits", gpu_pod()), ("fails", gpu_pod(mem=90000)), ("too few", gpu_pod(gpus=9))]:
        ctx = sim.pod_context(pod)
        for node in ("template-node-for-a-0", "template-node-for-a-1"):  # fit, then shared by shape
            [verdict] = sim.filter_nodes(ctx, [gpu_node(node)])
            [again] = sim.filter_nodes(ctx, [gpu_node(node)])
            assert again.device_fit is verdict.device_fit  # handed out from the cache
            out.append((f"{label} {node}", verdict.fit))
            # what the cache itself holds: the fit, or a shared fit and this node's UUIDs
            out.append((f"{label} {node} as cached", verdict.device_fit))
        usage = _Usage({"ip-1-GPU-0": _Use(1, 1000, 10)})
        [live] = sim.filter_nodes(ctx, [gpu_node("ip-1")], live=lambda name, u=usage: u)
        out.append((f"{label} live", live.fit))
        out.append((f"{label} live as cached", live.device_fit))
    return out


@pytest.mark.parametrize(("label", "fit"), _cached_answers(), ids=lambda x: x if isinstance(x, str) else "")
def test_no_field_of_a_cached_answer_can_be_written(label, fit):
    assert fit is not None
    assert _writable(fit) == []


def test_the_walk_finds_a_writable_field():
    @dataclasses.dataclass
    class Loose:
        items: list

    assert _writable((Loose([1]),)) == ["verdict[0].items", "verdict[0].items (list)"]


@pytest.mark.parametrize(
    "pod",
    [
        gpu_pod(),
        gpu_pod() | {"metadata": {"name": "p", "annotations": {"nvidia.com/use-gputype": "A100"}}},
    ],
)
def test_no_field_of_a_cached_pod_context_can_be_written(pod):
    """A parsed pod is handed to every call sending the same JSON: changing one (its annotations,
    its requests) would change the answers of the next pod, so nothing in it can be written."""
    sim = Simulator(EngineConfig(cache_bytes=1 << 26))  # (a pod's entry is a 64th of a 64th)
    ctx = sim.pod_context(pod)
    assert sim.pod_context(pod) is ctx  # handed out from the memo
    assert _writable(ctx, "ctx") == []

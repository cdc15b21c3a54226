"""The stores' one table (``engine.stores``): one budget split by declared shares, and a switch that
turns each store off alone without changing a single answer (what ``bench/cache_ab.py`` measures)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hami_sim.engine.dra import selectors
from hami_sim.engine.dra.hamidra import hami_dra_class
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.stores import PROCESS_MEMOS, STORES, budgets, off_from_env
from hami_sim.engine.vendors.nvidia_mig_defaults import template_mig
from tests.engine.test_cache import gpu_pod
from tests.engine.test_sightings import NODES, answers, expected, sent

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parents[2]
ENGINE_STORES = [s.name for s in STORES if not s.name.startswith("expander")]


@pytest.mark.parametrize(
    ("raw", "off"),
    [
        ("", frozenset()),
        ("pods", {"pods"}),
        (" node bytes , shape fits,", {"node bytes", "shape fits"}),
    ],
)
def test_the_switch_names_stores(raw, off):
    assert off_from_env({"HAMI_SIM_NO_STORE": raw}) == off


def test_the_switch_refuses_a_name_that_is_no_store():
    with pytest.raises(ValueError, match="names no store"):
        off_from_env({"HAMI_SIM_NO_STORE": "pods,verdicts"})


@pytest.mark.parametrize("total", [0, 4 << 20, 128 << 20])
def test_one_budget_holds_every_store_the_expanders_included(total):
    sizes = budgets(total)
    assert sum(sizes.values()) == total
    assert {"expander pods", "expander nodes", "expander packings", "registrations"} <= set(sizes)


@pytest.mark.parametrize("name", ["pods", "node bytes", "expander packings", "registrations"])
def test_a_store_switched_off_gets_nothing_and_the_others_keep_theirs(name):
    sizes, off = budgets(4 << 20), budgets(4 << 20, frozenset({name}))
    assert off[name] == 0
    assert {k: v for k, v in off.items() if k != name} == {k: v for k, v in sizes.items() if k != name}


@pytest.mark.parametrize("name", ENGINE_STORES)
def test_a_store_switched_off_alone_changes_no_answer(name):
    sim = Simulator(EngineConfig(cache_bytes=1 << 24, stores_off=frozenset({name})))
    for _ in range(3):  # first sight, then from whatever the other stores keep
        assert answers(sim, sent(sim, NODES)) == expected()
    for lru in (sim.cache.lru, sim.sightings.lru, sim._pods, sim.kinds.lru, sim.templates):
        if lru.name == name:
            assert lru.stats()["entries"] == 0


@pytest.mark.parametrize("name", ["zero-usage verdicts", "group-tagged copies"])
def test_an_entry_store_switched_off_keeps_nothing_in_the_entry(name):
    sim = Simulator(EngineConfig(cache_bytes=1 << 24, stores_off=frozenset({name})))
    inventory = sim.annotation_inventory(NODES[1])
    sim.filter_nodes(sim.pod_context(gpu_pod()), [NODES[1]])
    sim.tag_inventory(inventory, "gpu-a100")
    assert inventory.entry is not None
    assert not (inventory.entry.verdicts if name == "zero-usage verdicts" else inventory.entry.tagged)


@pytest.mark.parametrize("total", [4 << 20, 128 << 20])
def test_a_real_pod_is_remembered_parsed_at_any_budget(total):
    """A pod of a few KB of JSON (labels, env, probes) is kept: the per-entry limit follows the
    largest pod the memo takes, not a share of a small budget (a 1 KB limit refused nearly all)."""
    pod = gpu_pod()
    pod["metadata"]["labels"] = {f"app.kubernetes.io/label-{i}": "x" * 40 for i in range(40)}
    sim = Simulator(EngineConfig(cache_bytes=total))
    assert sim.pod_context(pod) is sim.pod_context(pod)
    assert sim._pods.stats()["refused"] == 0


def _process_caches() -> set[str]:
    """Every function of the engine memoized for the process (``functools.cache``/``lru_cache``)."""
    found = set()
    for path in (ROOT / "hami_sim" / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                "cache" in ast.unparse(d).split("(")[0].rsplit(".", 1)[-1] for d in node.decorator_list
            ):
                found.add(f"{path.relative_to(ROOT / 'hami_sim' / 'engine').as_posix()} {node.name}")
    return found


def test_every_memo_of_the_process_is_declared_with_its_bound():
    declared = {m.where: m.bound for m in PROCESS_MEMOS}
    assert _process_caches() <= set(declared)
    assert template_mig.cache_info().maxsize == declared["vendors/nvidia_mig_defaults.py template_mig"]
    assert hami_dra_class() is hami_dra_class()


def test_the_cel_programs_stay_within_their_bound(monkeypatch):
    monkeypatch.setattr(selectors, "MAX_CEL_PROGRAMS", 4)
    monkeypatch.setattr(selectors, "_programs", {})
    programs = [selectors.compile_selector(f"device.driver == 'd{i}'") for i in range(10)]
    assert len(selectors._programs) <= 4
    assert selectors.compile_selector("device.driver == 'd9'") is programs[-1]

"""The profile catalog is one immutable snapshot swapped in one assignment: readers resolving nodes
while groups are deleted and restored never see half a reload (a group found by name and then gone
raised ``KeyError``, a 500, before)."""

from __future__ import annotations

import threading
from types import MappingProxyType

import pytest

from hami_sim.engine.simulate import Inventory
from profiles.inventory import Catalog, GroupEntry, Snapshot, match_group

pytestmark = pytest.mark.api


def _snapshot(names: list[str]) -> Snapshot:
    groups = {
        name: GroupEntry(
            name, (("pool", name),), "annotation-only", None, Inventory(source="none", error="-")
        )
        for name in names
    }
    labelled = tuple(sorted(groups.values(), key=lambda g: g.name))
    return Snapshot(MappingProxyType(groups), MappingProxyType({}), labelled)


def test_groups_deleted_while_eight_threads_resolve():
    names = [f"gpu-{i}" for i in range(40)]
    full, cat = _snapshot(names), Catalog()
    cat.snapshot = full
    nodes = [{"metadata": {"name": f"template-node-for-{n}-1", "labels": {"pool": n}}} for n in names]
    stop = threading.Event()
    errors: list[BaseException] = []
    wrong: list[tuple[str, str]] = []

    def resolve() -> None:
        try:
            while not stop.is_set():
                for node in nodes:
                    found = match_group(node, cat)
                    if found is not None and node["metadata"]["labels"]["pool"] != found.name:
                        wrong.append((node["metadata"]["name"], found.name))
        except BaseException as exc:  # noqa: BLE001 (reported by the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=resolve) for _ in range(8)]
    for t in threads:
        t.start()
    try:
        for round_ in range(300):  # delete every other group (then others), restore, again
            cat.snapshot = _snapshot(names[round_ % 2 :: 2])
            cat.snapshot = full
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert errors == []
    assert wrong == []
    assert all(match_group(node, cat) is not None for node in nodes)

"""Concurrent writers on PostgreSQL: nothing lost, nothing double-counted, revisions strictly increase.

Real threads, each with its own database connection, drive the HTTP API through Django's request
handling (the same code path as a web replica). The session row lock serialises writers per session,
while two sessions proceed in parallel.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict

import pytest
from django.db import connection, connections
from django.test import Client

from simulations.models import SimulationSession
from tests.factories import gpu, node, pod

from .conftest import Api

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are proven on PostgreSQL"),
]

THREADS = 8
PER_THREAD = 100
NODE_COUNT = 50  # 2 cards x split 10 = 20 slots a node; 8 threads x 2 pods per node fit everywhere


def _nodes() -> list[dict]:
    return [
        node(f"n{i:02d}", [gpu(f"GPU-{i:02d}-a", count=10), gpu(f"GPU-{i:02d}-b", index=1, count=10)])
        for i in range(NODE_COUNT)
    ]


def _worker(sid: str, tag: str, nodes: list[dict], out: dict, errors: list) -> None:
    api = Api(Client())
    revisions = []
    try:
        for i in range(PER_THREAD):
            target = nodes[i % len(nodes)]
            status, body = api.place(sid, pod(f"{tag}-{i}", uid=f"{tag}-{i}", gpumem=100), target)
            if status != 201:
                errors.append((tag, i, status, body))
                continue
            revisions.append(body["revision"])
    except Exception as exc:  # surfaced by the assertion below
        errors.append((tag, repr(exc)))
    finally:
        out[tag] = revisions
        connections.close_all()


def _run(assignments: list[tuple[str, str]], nodes: list[dict]) -> tuple[dict, list]:
    out: dict[str, list[int]] = {}
    errors: list = []
    threads = [
        threading.Thread(target=_worker, args=(sid, tag, nodes, out, errors)) for sid, tag in assignments
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    return out, errors


def _check_session(api: Api, sid: str, tags: list[str], out: dict) -> None:
    expected = PER_THREAD * len(tags)
    state = api.get(sid)
    assert len(state["placements"]) == expected
    assert {p["podUID"] for p in state["placements"]} == {f"{t}-{i}" for t in tags for i in range(PER_THREAD)}
    assert state["revision"] == expected
    # every revision handed out exactly once, 1..N, and each thread saw its own strictly increasing
    seen = [r for t in tags for r in out[t]]
    assert sorted(seen) == list(range(1, expected + 1))
    for t in tags:
        assert all(a < b for a, b in zip(out[t], out[t][1:], strict=False)), t
    # device usage equals what the placements hold: nothing lost, nothing double-counted
    held: Counter = Counter()
    mem: dict[str, int] = defaultdict(int)
    for p in state["placements"]:
        for container in p["containers"]:
            for dev in container:
                held[dev["uuid"]] += 1
                mem[dev["uuid"]] += dev["usedmem"]
    total_used = 0
    for n in state["nodes"]:
        for dev in n["devices"]:
            assert dev["used"] == held[dev["uuid"]] and dev["usedmem"] == mem[dev["uuid"]]
            total_used += dev["used"]
    assert total_used == expected


def test_eight_threads_into_one_session(client):
    api = Api(client)
    sid = api.create(name="one")["id"]
    tags = [f"t{k}" for k in range(THREADS)]
    out, errors = _run([(sid, t) for t in tags], _nodes())
    assert errors == []
    _check_session(api, sid, tags, out)


def test_two_sessions_in_parallel(client):
    api = Api(client)
    first = api.create(name="a")["id"]
    second = api.create(name="b")["id"]
    tags_a = [f"a{k}" for k in range(THREADS // 2)]
    tags_b = [f"b{k}" for k in range(THREADS // 2)]
    out, errors = _run([(first, t) for t in tags_a] + [(second, t) for t in tags_b], _nodes())
    assert errors == []
    _check_session(api, first, tags_a, out)
    _check_session(api, second, tags_b, out)
    assert SimulationSession.objects.count() == 2

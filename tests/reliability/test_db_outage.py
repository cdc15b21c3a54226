"""PostgreSQL goes away under CA's load: the extender keeps answering from the last state it read.

The production server (``python -m hami_sim.server.serve``: gunicorn, one worker, four threads, decision
recording on) reaches PostgreSQL through a TCP proxy this test owns (``tcpproxy.TcpProxy``); cutting
the proxy resets every database connection and refuses new ones, as a stopped PostgreSQL does,
without touching the shared server. Meanwhile the test plays the usage watcher, confirming the
usage every fifth of a second, and four clients send CA's filter and prioritize calls for a full live
node, a free live node and a template.

What must hold: every call is answered 200 in the extender's shape, never a 503; the template and
the free live node keep their answers; a live node keeps its live usage (the full node keeps
failing with HAMi's reason) until the last state read is older than ``USAGE_STALE_SECONDS``, then
it fails with the stale reason naming the unreadable store (policy ``fail``); once the database is
back and the usage confirmed again, the answers are the ones from before the outage.
"""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson
import pytest

from hami_sim.server.serve import start_server, stop_server
from tests.factories import extender_args, pod
from tests.usage.conftest import gpu_node

from .tcpproxy import TcpProxy

pytestmark = [pytest.mark.slow]

FULL, FREE, TEMPLATE = "ip-10-0-9-1", "ip-10-0-9-2", "template-node-for-gpu-a10-x7"
STALE_SECONDS = 6
NODES = [gpu_node(FULL), gpu_node(FREE), gpu_node(TEMPLATE)]
BODY = extender_args(pod("train", gpu_count=4, gpumem=23000, uid="uid-outage"), NODES)
FULL_REASON = "4/4 CardInsufficientMemory"


def _usage(name: str, full: bool) -> dict:
    used = (1, 23000, 100) if full else (0, 0, 0)
    return {
        f"GPU-{name}-{i}": {
            "used": used[0],
            "usedmem": used[1],
            "usedcores": used[2],
            "mig": [],
            "unhealthy": False,
            "pods": [f"ml/holder-{i}"] if full else [],
        }
        for i in range(4)
    }


def _store_usage() -> None:
    """What a cluster sync leaves: both live nodes' usage and a fresh confirmation."""
    from django.utils import timezone

    from tests.factories.models import NodeUsageFactory, UsageStateFactory

    now = timezone.now()
    for name, full in ((FULL, True), (FREE, False)):
        NodeUsageFactory(name=name, devices=_usage(name, full), observed_at=now)
    UsageStateFactory(generation=1, confirmed_at=now, source="test")


def _confirm() -> None:
    """The watcher's heartbeat: the usage is confirmed as of now."""
    from django.utils import timezone

    from usage.models import UsageState

    UsageState.objects.filter(pk=1).update(confirmed_at=timezone.now())


@dataclass
class _Answers:
    """What the clients got, per phase: (status, verb, parsed body)."""

    phase: str = "before"
    got: dict[str, list[tuple[int, str, object]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, status: int, verb: str, body: object) -> None:
        with self.lock:
            self.got.setdefault(self.phase, []).append((status, verb, body))


def _client(base: str, answers: _Answers, stop: threading.Event) -> None:
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)  # a hang detector
    while not stop.is_set():
        for verb in ("filter", "prioritize"):
            try:
                conn.request("POST", f"/{verb}-simulation", BODY, {"Content-Type": "application/json"})
                response = conn.getresponse()
                answers.add(response.status, verb, orjson.loads(response.read()))
            except (OSError, http.client.HTTPException) as exc:
                answers.add(0, verb, repr(exc))
                conn.close()


def _until(check, what: str, confirm: bool = True, within: float = 90.0) -> None:
    """Confirm the usage (the watcher's heartbeat) until ``check()`` holds: each phase starts when
    the server shows what the phase is about, however slowly a busy machine gets there (a bound
    for the suite, not a timed assertion)."""
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"never {what}"
        if confirm:
            _confirm()
        time.sleep(0.2)


def _probe(base: str) -> dict:
    """One filter call of our own, beside the clients'."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("POST", "/filter-simulation", BODY, {"Content-Type": "application/json"})
        return orjson.loads(conn.getresponse().read())
    finally:
        conn.close()


def _filters(answers: _Answers, phase: str) -> int:
    with answers.lock:
        return sum(1 for _, verb, _ in answers.got.get(phase, ()) if verb == "filter")


def _filter(body: dict) -> tuple[list[str], dict]:
    return [n["metadata"]["name"] for n in (body["Nodes"] or {}).get("items", [])], body["FailedNodes"]


@pytest.fixture
def server_behind_proxy(child_database_url):
    if not child_database_url or not child_database_url.startswith("postgres"):
        pytest.skip("needs PostgreSQL")
    url = urlsplit(child_database_url)
    proxy = TcpProxy((url.hostname, url.port or 5432))
    proxied = url._replace(netloc=f"{url.username}@127.0.0.1:{proxy.port}").geturl()
    env = {
        "DATABASE_URL": proxied,
        "HAMI_SIM_THREADS": "4",
        "USAGE_STALE_SECONDS": str(STALE_SECONDS),
        "USAGE_STALE_POLICY": "fail",
        "USAGE_CACHE_SECONDS": "0.2",
        "DECISION_RECORDING": "async",
        "CONN_MAX_AGE": "60",
        "LOG_LEVEL": "ERROR",
    }
    proc, base = start_server(workers=1, env=env)
    try:
        yield proxy, base
    finally:
        stop_server(proc)
        proxy.close()


def test_filter_and_prioritize_keep_answering_while_postgres_is_down(server_behind_proxy):
    proxy, base = server_behind_proxy
    _store_usage()
    answers, stop = _Answers(), threading.Event()
    healthy = ([FREE, TEMPLATE], {FULL: FULL_REASON})
    _until(lambda: _filter(_probe(base)) == healthy, "read the usage")  # the server's refresher
    clients = [threading.Thread(target=_client, args=(base, answers, stop)) for _ in range(4)]
    for c in clients:
        c.start()
    try:
        _until(lambda: _filters(answers, "before") >= 2, "answered before the outage")
        proxy.cut()
        answers.phase = "down"  # confirmed all along (_until), but the server cannot see it
        _until(lambda: _filters(answers, "down") >= 1, "answered from the last state read")
        _until(lambda: _filter(_probe(base))[0] == [TEMPLATE], "went stale")
        answers.phase = "down, stale"
        _until(lambda: _filters(answers, "down, stale") >= 2, "answered while stale", confirm=False)
        proxy.restore()
        answers.phase = "back"
        _until(lambda: _filter(_probe(base)) == healthy, "recovered")
        answers.phase = "after"
        _until(lambda: _filters(answers, "after") >= 2, "answered after the outage")
    finally:
        stop.set()
        for c in clients:
            c.join()

    got = answers.got
    statuses = {phase: {s for s, _, _ in calls} for phase, calls in got.items()}
    assert statuses == {phase: {200} for phase in got}, statuses  # never a 503, never a dropped call
    for phase in ("before", "after"):
        for _, verb, body in got[phase]:
            if verb == "filter":
                assert _filter(body) == ([FREE, TEMPLATE], {FULL: FULL_REASON}), (phase, body)
            else:
                assert [p["Host"] for p in body] == [FREE, TEMPLATE], (phase, body)

    # down: the last state read answers; the full node fails with HAMi's reason, then as stale
    reasons = []
    for _, verb, body in got["down"] + got["down, stale"]:
        fitting = _filter(body)[0] if verb == "filter" else [p["Host"] for p in body]
        assert fitting == [FREE, TEMPLATE] or fitting == [TEMPLATE], (verb, body)
        if verb == "filter":
            reasons.append(body["FailedNodes"].get(FULL))
            if fitting == [TEMPLATE]:  # the free live node is only refused as stale
                assert body["FailedNodes"][FREE].startswith("live usage is stale: last confirmed")
    assert reasons[0] == FULL_REASON  # the outage began with the last state read, not an error
    stale = [r for r in reasons if r != FULL_REASON]
    assert stale, "the state never went stale"
    assert all(r.startswith("live usage is stale: last confirmed") for r in stale), stale
    assert all("usage store unreadable for" in r for r in stale), stale
    # by the end of the outage the free live node is refused as stale too (the last filter answer:
    # four clients interleave filter and prioritize, so the last two calls may both be prioritize)
    last_filter = [body for _, verb, body in got["down, stale"] if verb == "filter"][-1]
    assert _filter(last_filter)[0] == [TEMPLATE], last_filter

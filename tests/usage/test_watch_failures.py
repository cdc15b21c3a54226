"""What a platform engineer expects of ``watch_cluster`` when one of its steps fails: the failure is
logged with its traceback and counted, and pod events keep reaching the usage store. A periodic
step (FailedScheduling reasons, confirm, node sync) is best effort and tried again at its next turn;
a batch of pod events that the database refuses (SQLite's "database table is locked" under a
concurrent reader) is written again, not lost; a watch that fails in an unexpected way reconnects."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from django.db import OperationalError

from tests.waiting import eventually

from .conftest import gpu_node, hami_pod
from .test_watch import card, watching

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def failing(real: Callable, error: BaseException, times: int | None = None, after: int = 0) -> Callable:
    """``real`` that raises ``error`` on ``times`` calls (None: on every call) after the first ``after``."""
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > after and (times is None or calls["n"] <= after + times):
            raise error
        return real(*args, **kwargs)

    return wrapper


def garbage_events(monkeypatch, kube_api) -> None:
    """The events list answers a JSON array instead of an EventList (a proxy's error page, say):
    reading it raises an AttributeError, not a ``SourceError``."""
    monkeypatch.setattr(kube_api, "_list_events", lambda handler, *_: kube_api._send(handler, 200, []))


def confirm_refused(monkeypatch, kube_api) -> None:
    import usage.cluster

    monkeypatch.setattr(usage.cluster, "confirm", failing(usage.cluster.confirm, OperationalError("boom")))


def locked_table(monkeypatch, kube_api) -> None:
    import usage.cluster

    locked = OperationalError("database table is locked")
    monkeypatch.setattr(usage.cluster, "apply_pod_events", failing(usage.cluster.apply_pod_events, locked, 2))


def node_sync_breaks_once(monkeypatch, kube_api) -> None:
    """The start-up relist's node sync goes through; the first one after a node event raises."""
    import profiles.sync

    broken = failing(profiles.sync.sync_nodes, ValueError("bad"), times=1, after=1)
    monkeypatch.setattr(profiles.sync, "sync_nodes", broken)


def watch_breaks(monkeypatch, kube_api) -> None:
    import usage.cluster

    broken = failing(usage.cluster.watch_resource, RuntimeError("unexpected"), 3)
    monkeypatch.setattr(usage.cluster, "watch_resource", broken)


@pytest.mark.parametrize(
    ("inject", "logged"),
    [
        (garbage_events, "FailedScheduling reasons refresh failed"),
        (confirm_refused, "confirm failed"),
        (locked_table, "writing pod events failed"),
        (node_sync_breaks_once, "node sync failed"),
        (watch_breaks, "failed unexpectedly, reconnecting"),
    ],
    ids=["events-read-garbage", "confirm-refused", "table-locked", "node-sync-breaks", "watch-breaks"],
)
def test_a_failing_step_is_logged_and_counted_and_pod_events_still_arrive(
    kube_api, source, monkeypatch, caplog, inject, logged
):
    kube_api.add_node(gpu_node("n1"))
    inject(monkeypatch, kube_api)
    caplog.set_level(logging.WARNING, logger="hami_sim.usage")
    with watching(source, reasons_seconds=0.1, node_sync_seconds=0.1) as watcher:
        kube_api.add_pod(hami_pod("first", "n1", [("GPU-n1-0", 4000, 20)]))
        assert eventually(lambda: card("n1", "GPU-n1-0") == (1, 4000, ("ml/first",)))
        kube_api.add_node(gpu_node("n2", cards=2))  # a node change: the node sync runs
        kube_api.add_pod(hami_pod("second", "n2", [("GPU-n2-1", 3000, 10)]))
        assert eventually(lambda: card("n2", "GPU-n2-1") == (1, 3000, ("ml/second",)))
        kube_api.delete_pod("ml", "first")
        assert eventually(lambda: card("n1", "GPU-n1-0") == (0, 0, ()))
        assert eventually(lambda: any(logged in r.getMessage() for r in caplog.records))
        # a watch thread logs its failure, then the main thread counts the ERROR it queued
        assert eventually(lambda: watcher.counts["errors"] >= 1) and not watcher.stopped
    failures = [r for r in caplog.records if logged in r.getMessage()]
    assert failures[0].exc_info is not None  # with the traceback

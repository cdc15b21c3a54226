"""``watch_cluster``'s watcher against the loopback API server through the real kubernetes client:
events, bookmarks, 410 Gone and relist, dropped connections and failing watches, node changes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.waiting import eventually

from .conftest import gpu_node, hami_pod

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def card(name: str, uuid: str):
    from usage.store import get_store

    get_store().refresh(force=True)
    live = get_store().get(name)
    if live is None or uuid not in live.devices:
        return None
    d = live.devices[uuid]
    return (d.used, d.usedmem, d.pods)


@contextmanager
def watching(source: str, **options) -> Iterator:
    from django.db import connections

    from usage.cluster import ClusterWatcher

    watcher = ClusterWatcher(
        source, watch_seconds=options.pop("watch_seconds", 2), backoff_cap=0.3, **options
    )
    failure: list[BaseException] = []

    def run() -> None:
        try:
            watcher.run()
        except BaseException as exc:  # surfaced by the test below
            failure.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield watcher
    finally:  # the watcher's own failure is reported even when the body failed (often because of it)
        watcher.stop()
        thread.join(timeout=15)
        if failure:
            raise AssertionError(f"the watcher failed: {failure[0]!r}") from failure[0]
    assert not thread.is_alive()


def test_pod_events_reach_the_store_and_deletion_frees_the_card(kube_api, source):
    kube_api.add_node(gpu_node("n1"))
    kube_api.add_pod(hami_pod("before", "n1", [("GPU-n1-0", 4000, 20)]))
    with watching(source) as watcher:
        assert kube_api.wait_for_watches(2)
        assert card("n1", "GPU-n1-0") == (1, 4000, ("ml/before",))  # from the initial list
        kube_api.add_pod(hami_pod("big", "n1", [("GPU-n1-1", 23000, 100)]))
        assert eventually(lambda: card("n1", "GPU-n1-1") == (1, 23000, ("ml/big",)))
        kube_api.modify_pod(hami_pod("big", "n1", [("GPU-n1-1", 23000, 100)], phase="Succeeded"))
        assert eventually(lambda: card("n1", "GPU-n1-1") == (0, 0, ()))
        kube_api.delete_pod("ml", "before")
        assert eventually(lambda: card("n1", "GPU-n1-0") == (0, 0, ()))
    assert watcher.counts["relists"] == 2 and watcher.counts["pod_events"] >= 3


def test_410_gone_relists_and_catches_up(kube_api, source):
    from usage.models import UsageState

    kube_api.add_node(gpu_node("n1"))
    with watching(source) as watcher:
        assert kube_api.wait_for_watches(2)
        # history the watch never sees: only a relist can find this pod
        kube_api.pods.append(hami_pod("unseen", "n1", [("GPU-n1-2", 7000, 30)]))
        kube_api.compact()
        assert eventually(lambda: card("n1", "GPU-n1-2") == (1, 7000, ("ml/unseen",)))
        # the relist writes the card, then counts itself: wait for the count too, not the card alone
        assert eventually(lambda: watcher.counts["relists"] >= 3)
        assert kube_api.wait_for_watches(2)  # watching again from the relist's version
        kube_api.add_pod(hami_pod("after", "n1", [("GPU-n1-3", 1000, 10)]))
        assert eventually(lambda: card("n1", "GPU-n1-3") == (1, 1000, ("ml/after",)))
    assert UsageState.objects.get().relisted_at is not None


def test_dropped_and_failing_watches_reconnect_with_backoff(kube_api, source):
    from usage.models import UsageState

    kube_api.add_node(gpu_node("n1"))
    with watching(source) as watcher:
        assert kube_api.wait_for_watches(2)
        kube_api.watch_fail_status = 500
        kube_api.drop_watches()
        assert eventually(lambda: watcher.counts["errors"] >= 2)
        # counted, then recorded: wait for the record itself
        assert eventually(lambda: "watch of" in UsageState.objects.get().error)
        kube_api.add_pod(hami_pod("during", "n1", [("GPU-n1-0", 2000, 10)]))  # while the watch is down
        kube_api.watch_fail_status = None
        assert eventually(lambda: card("n1", "GPU-n1-0") == (1, 2000, ("ml/during",)))
        assert eventually(lambda: UsageState.objects.get().error == "")  # confirmed again


def test_bookmarks_keep_an_idle_cluster_confirmed(kube_api, source):
    from usage.models import UsageState

    kube_api.add_node(gpu_node("n1"))
    kube_api.bookmark_every = 0.2
    with watching(source, watch_seconds=30):
        assert kube_api.wait_for_watches(2)
        first = eventually(lambda: UsageState.objects.get().confirmed_at)
        assert eventually(lambda: UsageState.objects.get().confirmed_at > first)
    assert any("allowWatchBookmarks=true" in r for r in kube_api.requests)


def test_node_changes_reach_inventory_and_usage(kube_api, source):
    from profiles.models import NodeInventory

    kube_api.add_node(gpu_node("n1"))
    with watching(source, node_sync_seconds=0.1):
        assert kube_api.wait_for_watches(2)
        kube_api.add_pod(hami_pod("early", "n2", [("GPU-n2-1", 3000, 10)]))  # bound before n2 registered
        kube_api.add_node(gpu_node("n2", cards=2))
        assert eventually(lambda: card("n2", "GPU-n2-1") == (1, 3000, ("ml/early",)))
        kube_api.delete_node("n1")
        assert eventually(lambda: NodeInventory.objects.filter(name="n1", gone_at__isnull=False).exists())
        assert eventually(lambda: card("n1", "GPU-n1-0") is None)  # a deleted node is never live

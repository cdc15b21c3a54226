"""Keep inventories and usage in step with the cluster for ever (``ClusterWatcher``, ``manage.py
watch_cluster``): list, then watch from the list's resourceVersion, relist on 410 Gone. The one-shot
sync (``sync_cluster``, ``relist_nodes``, ``relist_pods``) is in ``usage.relist`` and re-exported here.

The watcher has two watch threads (nodes, pods) that only read the API and queue events; one main
thread writes the database, so every write is serialised and batches of pod events share a
transaction. Node events are debounced (``node_sync_seconds``): a node's registration rarely changes
and ``sync_nodes`` diffs the whole set by content hash. Pod events are applied at once, so a new
allocation reaches every web replica within the store's cache period (``USAGE_CACHE_SECONDS``).

Failures never end the watch silently. A database error while writing a batch of pod events (a
locked table, a dropped connection) is retried with backoff, and every write is idempotent, so no
event is lost to it; a write the database refuses for what an event holds is written event by
event instead, the refused event skipped and named (``hami_sim.runtime.rejects``). A periodic step that fails (node sync, FailedScheduling reasons, confirm) is
best effort: logged with its traceback, counted (``counts["errors"]``), recorded in
``UsageState.error``, and tried again at its next turn while pod events keep flowing. A watch that
fails in any way reconnects. Anything else (a bug while applying events) is logged and ends
``run()`` with the exception, so ``watch_cluster`` exits non-zero, Kubernetes restarts it, and the
restart relists.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DatabaseError, DataError, IntegrityError, close_old_connections, transaction

from hami_sim.project.conf import conf
from hami_sim.runtime.rejects import note, object_name, rejections
from profiles.kube import SourceError

from .capacity import assert_capacity
from .dra import DRA_KINDS, apply_dra_events, relist_dra
from .kube import WatchExpired, watch_resource
from .pending import BoundIndex, apply_pending_events, sync_node_facts, write_requested
from .podrows import admissible
from .relist import nodes_changed, refresh_reasons, relist_nodes, relist_pods, sync_cluster
from .sync import apply_pod_events, confirm, recompute_all, record_error

__all__ = [
    "sync_cluster",
    "relist_nodes",
    "relist_pods",
    "nodes_changed",
    "refresh_reasons",
    "ClusterWatcher",
    "Backoff",
]

log = logging.getLogger("hami_sim.usage")

#: what the database answers for what a write holds (psycopg refuses a NUL with ``ValueError``
#: before the server sees it): the same write is refused again, so it is never retried as it is
_REFUSED = (DataError, IntegrityError, ValueError)


@dataclass
class Backoff:
    """Exponential backoff with jitter: 1 s, 2 s, 4 s ... up to ``cap``; ``reset`` after a success."""

    base: float = 1.0
    cap: float = 30.0
    attempts: int = 0

    def next(self) -> float:
        delay = min(self.cap, self.base * 2**self.attempts)
        self.attempts += 1
        return delay * random.uniform(0.8, 1.2)

    def reset(self) -> None:
        self.attempts = 0


@dataclass
class ClusterWatcher:
    """``manage.py watch_cluster``: keep inventories and usage fresh until ``stop()``."""

    source: str
    selector: str = ""
    watch_seconds: int = 60
    node_sync_seconds: float = 2.0
    backoff_cap: float = 30.0
    reasons_seconds: float = 30.0  # how often FailedScheduling messages are read again
    counts: dict = field(
        default_factory=lambda: {"relists": 0, "pod_events": 0, "node_syncs": 0, "errors": 0}
    )

    def __post_init__(self) -> None:
        self._events: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        # the DRA resources (resource.k8s.io/v1) are watched too when DRA_SYNC is on (usage.dra)
        self._resources = ("nodes", "pods", *(DRA_KINDS if conf().dra_sync else ()))
        self._start_from = {r: queue.Queue(maxsize=1) for r in self._resources}
        self._healthy = dict.fromkeys(self._resources, False)
        self._nodes: dict[str, dict] = {}
        self._dirty = False
        self._last_node_sync = 0.0
        self._last_confirm = 0.0
        self._last_reasons = time.monotonic()
        self._bound = BoundIndex()  # each bound pod's request: a pod event moves its node's sum
        self._changed_nodes: set[str] = set()  # node events since the last node sync
        self._unwritten: set[str] = set()  # nodes whose requested sums the database has not taken yet
        self._threads: list[threading.Thread] = []

    # -- control ---------------------------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self, until: Callable[[], bool] | None = None) -> dict:
        """Relist, start the watches, apply events until ``stop()`` (or ``until()`` is true)."""
        for resource in self._resources:
            self._relist_until_done(resource)
        for resource in self._resources:
            thread = threading.Thread(
                target=self._watch_loop, args=(resource,), name=f"watch-{resource}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        try:
            while not self._stop.is_set() and not (until and until()):
                self._step()
        except Exception:
            self.counts["errors"] += 1
            log.exception("watcher stopped by an unexpected error; exiting so that a restart relists")
            raise
        finally:
            self._stop.set()
            for thread in self._threads:
                thread.join(timeout=self.watch_seconds + 20)
        return self.counts

    # -- main thread -----------------------------------------------------------------------------
    def _relist_until_done(self, resource: str) -> None:
        with rejections("watch_cluster"):
            self._relist(resource)

    def _relist(self, resource: str) -> None:
        backoff = Backoff(cap=self.backoff_cap)
        while not self._stop.is_set():
            close_old_connections()
            try:
                if resource == "nodes":
                    nodes, rv, _counts = relist_nodes(self.source, self.selector)
                    self._nodes = {n["metadata"]["name"]: n for n in nodes}
                    self._changed_nodes = set()  # the relist covers them
                    self._reassert(nodes)
                    self._dirty = False
                    self._last_node_sync = time.monotonic()
                    recompute_all()  # registrations may have changed while nobody watched
                elif resource in DRA_KINDS:
                    _count, rv = relist_dra(self.source, resource)
                else:  # the node relist just recomputed every node: only what the pods change
                    rv, _counts = relist_pods(self.source, everything=False, bound=self._bound)
            except (SourceError, DatabaseError) as exc:
                self._failed(f"relist of {resource}", exc, trace=isinstance(exc, DatabaseError))
                if resource in DRA_KINDS:  # best effort: never holds up nodes and pods; its watch retries
                    self._start_from[resource].put("")
                    return
                self._stop.wait(backoff.next())
                continue
            self.counts["relists"] += 1
            self._healthy[resource] = True
            self._start_from[resource].put(rv)
            return

    def _step(self) -> None:
        """Drain a batch of queued events and apply it; sync nodes when due."""
        batch = self._drain()
        close_old_connections()
        with rejections("watch_cluster"):  # what this step could not store as read, named
            self._handle(batch)
            self._periodic(bool(batch))

    def _drain(self) -> list:
        """Up to 500 queued events (waiting up to 0.2 s for the first)."""
        batch = []
        try:
            batch.append(self._events.get(timeout=0.2))
            while len(batch) < 500:
                batch.append(self._events.get_nowait())
        except queue.Empty:
            pass
        return batch

    def _handle(self, batch: list) -> None:
        """Apply a batch in order: pod events together, node events one by one; an expired watch
        applies what came before it, then relists its resource."""
        pod_events, dra_events = [], []
        for resource, kind, obj in batch:
            if kind in ("ADDED", "MODIFIED", "DELETED"):
                if resource == "pods":
                    if admissible(obj):  # one whose identity cannot be stored: skipped and noted
                        pod_events.append((kind, obj))
                elif resource in DRA_KINDS:
                    dra_events.append((resource, kind, obj))
                else:
                    self._node_event(kind, obj)
            if kind == "EXPIRED":
                self._healthy[resource] = False
                if pod_events:
                    self._apply(pod_events)
                    pod_events = []
                self._relist_until_done(resource)
            elif kind == "ERROR":
                self._healthy[resource] = False
                self.counts["errors"] += 1
                self._record(f"watch of {resource}: {obj.get('message', '')}")
            else:  # an event, a bookmark or a clean end: the stream is alive
                self._healthy[resource] = True
        if pod_events:
            self._apply(pod_events)
        if dra_events:
            self._guarded("DRA events", apply_dra_events, dra_events)

    def _periodic(self, had_events: bool) -> None:
        """What is due by time: the node sync (when nodes changed), the pending pods' reasons, and
        confirming usage (at most once a second, while every watch is healthy). Each is best effort:
        one that fails is logged, counted and recorded, and tried again at its next turn, while the
        pod events keep flowing."""
        due = self._dirty and time.monotonic() - self._last_node_sync >= self.node_sync_seconds
        if due and not self._guarded("node sync", self._sync_nodes):
            self._last_node_sync = time.monotonic()  # still dirty: tried again after node_sync_seconds
        if time.monotonic() - self._last_reasons >= self.reasons_seconds:
            self._last_reasons = time.monotonic()
            self._guarded("FailedScheduling reasons refresh", refresh_reasons, self.source)
        healthy = self._healthy["nodes"] and self._healthy["pods"]  # DRA objects never hold up usage
        if had_events and healthy and time.monotonic() - self._last_confirm >= 1.0:
            self._last_confirm = time.monotonic()
            self._guarded("confirm", confirm, source=self.source)

    def _guarded(self, what: str, step: Callable[..., object], *args: object, **kwargs: object) -> bool:
        """Run a best-effort step; an exception is logged (with its traceback), counted and recorded."""
        try:
            step(*args, **kwargs)
        except Exception as exc:
            self._failed(what, exc, trace=True)
            return False
        return True

    def _failed(self, what: str, exc: BaseException, *, trace: bool = False) -> None:
        """Count a failure, log it and record it in ``UsageState.error`` (what the dashboard shows)."""
        self.counts["errors"] += 1
        log.warning("%s failed, retrying: %s: %s", what, exc.__class__.__name__, exc, exc_info=trace)
        self._record(f"{what}: {exc}")

    @staticmethod
    def _record(error: str) -> None:
        with contextlib.suppress(DatabaseError):  # the database is what failed: the log keeps it
            record_error(error)

    def _apply(self, pod_events: list) -> None:
        """Write a batch of pod events. A database error (a locked table, a dropped connection) is
        retried with backoff until it goes through or the watcher stops: ``apply_pod_events`` is one
        transaction and every write is idempotent, so a retry loses and doubles nothing. A write the
        database refuses for what an event holds (``_REFUSED``) would be refused again: the batch is
        then written event by event, and each refused event skipped and noted."""
        for kind, pod in pod_events:
            self._unwritten |= self._bound.update(pod, deleted=kind == "DELETED")
        backoff = Backoff(cap=self.backoff_cap)
        write = self._write
        while True:
            try:
                write(pod_events)
                if self._unwritten:
                    write_requested(self._bound.sums, self._unwritten)
                    self._unwritten = set()
                break
            except _REFUSED as exc:
                log.warning("a batch of pod events was refused (%s); writing them one by one", exc)
                write = self._write_each
            except DatabaseError as exc:
                self._failed("writing pod events", exc, trace=True)
                if self._stop.wait(backoff.next()):
                    return
                close_old_connections()
        self.counts["pod_events"] += len(pod_events)

    @staticmethod
    def _write(pod_events: list) -> None:
        with transaction.atomic():
            apply_pod_events(pod_events)
            apply_pending_events(pod_events)

    def _write_each(self, pod_events: list) -> None:
        """Each event in its own transaction; one the database refuses is skipped and noted."""
        for kind, pod in pod_events:
            try:
                self._write([(kind, pod)])
            except _REFUSED as exc:
                self.counts["errors"] += 1
                meta = pod.get("metadata") if isinstance(pod, dict) else None
                note("pod", object_name(meta), "refused", "skipped", f"{exc.__class__.__name__}: {exc}")

    def _node_event(self, kind: str, node: dict) -> None:
        name = (node.get("metadata") or {}).get("name")
        if not name:
            return
        if kind == "DELETED":
            self._nodes.pop(name, None)
            self._changed_nodes.discard(name)
        else:
            self._nodes[name] = node
            self._changed_nodes.add(name)
        self._dirty = True

    def _sync_nodes(self) -> None:
        from profiles.sync import sync_nodes

        counts = sync_nodes(list(self._nodes.values()))
        sync_node_facts(self._nodes.values())
        self._dirty, self._last_node_sync = False, time.monotonic()
        changed, self._changed_nodes = self._changed_nodes, set()
        self._reassert([self._nodes[n] for n in sorted(changed) if n in self._nodes])
        self.counts["node_syncs"] += 1
        if counts.get("created") or counts.get("updated") or counts.get("gone"):
            recompute_all()

    def _reassert(self, nodes: list[dict]) -> None:
        """Aggregate capacity mode: patch the nodes whose advertised device totals are missing or
        differ (kubelet drops them when it restarts without its checkpoint). Off: nothing."""
        if not conf().ca_aggregate_capacity or not nodes:
            return
        try:
            result = assert_capacity(self.source, nodes)
        except SourceError as exc:
            self.counts["errors"] += 1
            log.warning("aggregate capacity: cannot patch nodes: %s", exc)
            return
        self.counts["capacity_patches"] = self.counts.get("capacity_patches", 0) + len(result.patched)
        if result.failed:
            self.counts["errors"] += 1

    # -- watch threads ---------------------------------------------------------------------------
    def _watch_loop(self, resource: str) -> None:
        backoff = Backoff(cap=self.backoff_cap)
        rv: str | None = None
        selector = self.selector if resource == "nodes" else ""
        while not self._stop.is_set():
            if rv is None:
                try:
                    rv = self._start_from[resource].get(timeout=0.2)
                except queue.Empty:
                    continue
            try:
                for kind, obj in watch_resource(
                    self.source,
                    resource,
                    rv,
                    label_selector=selector,
                    timeout_seconds=self.watch_seconds,
                    stop=self._stop.is_set,
                ):
                    rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                    self._events.put((resource, kind, obj))
                self._events.put((resource, "END", {}))
                backoff.reset()
            except WatchExpired:
                rv = None
                self._events.put((resource, "EXPIRED", {}))
            except SourceError as exc:
                self._events.put((resource, "ERROR", {"message": str(exc)}))
                self._stop.wait(backoff.next())
            except Exception as exc:  # not the client's own failure (a bug): still reconnect
                log.exception("watch of %s failed unexpectedly, reconnecting", resource)
                self._events.put((resource, "ERROR", {"message": f"{exc.__class__.__name__}: {exc}"}))
                self._stop.wait(backoff.next())

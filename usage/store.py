"""Read live usage: an O(1) lookup per node behind a small process cache over the database.

Every web replica reads the same rows (``usage.models``), so whichever replica CA reaches answers
the same. The cache holds every live node's usage keyed by name; at most every
``USAGE_CACHE_SECONDS`` it asks the database for ``UsageState.generation`` (one tiny query) and,
when that moved, loads only the node rows stamped with a newer generation. A lookup between checks
is a dictionary read. A generation that went backwards (the store was emptied) reloads everything.

The database is not needed to answer. A refresh that fails keeps the last state read (``unavailable``
says since when and why) and is retried after ``RETRY_SECONDS``; readers never wait for a refresh
another thread is doing once something was read. In the production server a ``refresher`` thread
per worker (``start_refresher``) keeps this store and the profile catalog fresh, so a request never
queries the database for them at all: with PostgreSQL down, CA's answers come from the last state,
aged by ``usage.live`` per ``USAGE_STALE_POLICY``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db import DatabaseError
from django.utils import timezone

from hami_sim.engine.cache import usage_keys
from hami_sim.engine.model import MigPlacement
from hami_sim.project.conf import conf

__all__ = [
    "DeviceLive",
    "LiveUsage",
    "Outage",
    "StoreView",
    "UsageStore",
    "get_store",
    "reset",
    "start_refresher",
]

log = logging.getLogger("hami_sim.usage")

#: after a failed refresh, the next attempt waits this long (an outage costs one attempt per interval)
RETRY_SECONDS = 2.0


@dataclass(slots=True, frozen=True)
class DeviceLive:
    """One registered device's usage as stored (what HAMi's DeviceUsage starts from on a live node)."""

    used: int
    usedmem: int
    usedcores: int
    mig: tuple[tuple[str, MigPlacement], ...]
    unhealthy: bool
    pods: tuple[str, ...]
    pod_infos: tuple[dict[str, str], ...] = ()  # what vendor rules read of the pods (HAMi PodInfos)


@dataclass(slots=True, frozen=True, weakref_slot=True)
class LiveUsage:
    """A live node's usage: per device UUID, plus when the source last confirmed it.

    The store keeps one object per node until that node's usage changes (a refresh loads only newer
    rows), so the engine may remember a verdict for the object it was computed on (weakly). ``keys``
    is ``usage_keys(devices)`` (the engine's rule for sharing a verdict between nodes at equal usage),
    computed when the row is loaded rather than for every node of every CA call.
    """

    name: str
    devices: dict[str, DeviceLive]
    observed_at: datetime
    version: int
    keys: Mapping[str, tuple] | None

    def age_seconds(self, confirmed_at: datetime | None, now: datetime | None = None) -> float:
        """Seconds since the newer of this row's observation and the source's last confirmation."""
        now = now or timezone.now()
        seen = max(self.observed_at, confirmed_at) if confirmed_at else self.observed_at
        return max(0.0, (now - seen).total_seconds())


def _device(data: dict) -> DeviceLive:
    return DeviceLive(
        int(data.get("used", 0)),
        int(data.get("usedmem", 0)),
        int(data.get("usedcores", 0)),
        tuple((str(p), MigPlacement(int(s), int(z))) for p, s, z in data.get("mig") or ()),
        bool(data.get("unhealthy")),
        tuple(data.get("pods") or ()),
        tuple(data.get("pod_infos") or ()),
    )


class StoreView(NamedTuple):
    """The store's state at one instant (``UsageStore.view``): every live node's usage, when the
    source last confirmed it, whether it is a fixed ``file://`` snapshot, and the store (outages)."""

    nodes: Mapping[str, LiveUsage]
    confirmed_at: datetime | None
    from_snapshot: bool
    store: UsageStore


@dataclass(slots=True, frozen=True)
class Outage:
    """The database could not be read: since when (monotonic seconds) and the error's class and text."""

    since: float
    error: str

    def seconds(self) -> float:
        return max(0.0, time.monotonic() - self.since)


class UsageStore:
    """Process-wide cache of ``NodeUsage`` rows; thread-safe (gunicorn threads share it)."""

    def __init__(self, check_seconds: float | None = None) -> None:
        self._check = check_seconds
        self._lock = threading.Lock()
        self._generation = -1
        self._nodes: dict[str, LiveUsage] = {}
        self._confirmed_at: datetime | None = None
        self._snapshot_source = False
        self._checked = float("-inf")
        self.unavailable: Outage | None = None  # set while the last refresh failed
        self.fed = False  # a refresher thread keeps it fresh: readers never query the database

    @property
    def loaded(self) -> bool:
        """Something was read from the database at least once (possibly an empty store)."""
        return self._generation >= 0

    @property
    def check_seconds(self) -> float:
        if self._check is not None:
            return self._check
        return conf().usage_cache_seconds

    def refresh(self, force: bool = False) -> bool:
        """Bring the cache up to the database's generation (at most once per ``check_seconds``).

        Never raises for the database: a failure keeps the last state, sets ``unavailable`` and
        returns False (retried after ``RETRY_SECONDS``). While a store that has read once is being
        refreshed by another thread, this returns at once: readers get the state they had. A store
        fed by a refresher is only refreshed by it (``force``) or before its first read.
        """
        if not force and (self.fed or time.monotonic() - self._checked < self._interval()):
            return self.unavailable is None
        if not self._lock.acquire(blocking=not self.loaded):
            return self.unavailable is None
        try:
            if not force and time.monotonic() - self._checked < self._interval():
                return self.unavailable is None
            try:
                self._load()
            except DatabaseError as exc:
                self._failed(exc)
                return False
            finally:
                self._checked = time.monotonic()
            if self.unavailable is not None:
                log.warning("usage store readable again after %.0fs", self.unavailable.seconds())
                self.unavailable = None
            return True
        finally:
            self._lock.release()

    def _interval(self) -> float:
        return self.check_seconds if self.unavailable is None else max(self.check_seconds, RETRY_SECONDS)

    def _failed(self, exc: DatabaseError) -> None:
        error = f"{exc.__class__.__name__}: {str(exc).strip()[:200]}"
        if self.unavailable is None:
            log.warning("usage store unreadable, answering from the last state read: %s", error)
            self.unavailable = Outage(time.monotonic(), error)

    def _load(self) -> None:
        from .models import NodeUsage, UsageState

        state = UsageState.objects.filter(pk=1).values_list("generation", "confirmed_at", "source").first()
        generation, confirmed_at, source = state if state else (0, None, "")
        if generation != self._generation:
            full = generation < self._generation or self._generation < 0
            rows = NodeUsage.objects.all() if full else NodeUsage.objects.filter(version__gt=self._generation)
            nodes = {} if full else dict(self._nodes)
            for name, devices, observed_at, version, gone in rows.values_list(
                "name", "devices", "observed_at", "version", "gone"
            ).iterator(chunk_size=2000):
                if gone:
                    nodes.pop(name, None)
                else:
                    parsed = {uuid: _device(d) for uuid, d in (devices or {}).items()}
                    nodes[name] = LiveUsage(name, parsed, observed_at, version, usage_keys(parsed))
            self._nodes, self._generation = nodes, generation
        # published after the rows: a reader never pairs a newer confirmation with older rows
        self._confirmed_at = confirmed_at
        self._snapshot_source = source.startswith("file://")

    def get(self, name: str) -> LiveUsage | None:
        """The node's usage, or ``None`` when the store has none for it (not a live node, or not yet)."""
        self.refresh()
        return self._nodes.get(name)

    def view(self) -> StoreView:
        """The state to read live nodes from, after one freshness check: a CA call reads each of its
        nodes from one view (a check per node would read the clock and the settings per node)."""
        self.refresh()
        return StoreView(self._nodes, self._confirmed_at, self._snapshot_source, self)

    @property
    def confirmed_at(self) -> datetime | None:
        self.refresh()
        return self._confirmed_at

    @property
    def from_snapshot(self) -> bool:
        """The usage came from a ``file://`` snapshot: a fixed picture that never goes stale."""
        self.refresh()
        return self._snapshot_source

    def snapshot(self) -> dict[str, LiveUsage]:
        """Every live node's usage (the metrics collector and the dashboard read this)."""
        self.refresh()
        return self._nodes

    def clear(self) -> None:
        with self._lock:
            self._generation, self._nodes, self._confirmed_at = -1, {}, None
            self._checked = float("-inf")
            self.unavailable = None


_store: UsageStore | None = None


def get_store() -> UsageStore:
    global _store
    if _store is None:
        _store = UsageStore()
    return _store


def reset() -> None:
    """Forget the cache (tests roll the database back underneath it)."""
    if _store is not None:
        _store.clear()


# -- the production server's refresher ------------------------------------------------------------------
_refresher: threading.Thread | None = None


def start_refresher(interval: float | None = None) -> threading.Thread:
    """Start (once per process) the thread that keeps the usage store and the profile catalog fresh,
    and mark both as fed: from then on the request path reads them and never the database.

    Called in each production server worker once it has loaded the application (``post_worker_init`` in
    ``hami_sim/server/gunicorn_conf.py``).
    The first refresh runs here, before the worker takes requests, so a live node is known at once
    when the database is up; when it is down, live nodes answer per ``USAGE_STALE_POLICY``.
    """
    global _refresher
    if _refresher is not None and _refresher.is_alive():
        return _refresher
    from django.db import connection

    from profiles.inventory import catalog

    store = get_store()
    store.refresh(force=True)
    catalog.refresh()
    connection.close()  # the caller's thread (the worker's main loop) never queries again
    store.fed = catalog.fed = True
    every = interval if interval is not None else min(store.check_seconds, conf().profile_cache_check_seconds)
    _refresher = threading.Thread(
        target=_refresh_forever, args=(store, catalog, every), name="state-refresher"
    )
    _refresher.daemon = True
    _refresher.start()
    return _refresher


def _refresh_forever(store: UsageStore, catalog, every: float) -> None:
    from django.db import connection

    next_catalog = 0.0
    while True:
        time.sleep(max(0.05, every if store.unavailable is None else max(every, RETRY_SECONDS)))
        try:
            ok = store.refresh(force=True)
            if time.monotonic() >= next_catalog:
                catalog.refresh()
                next_catalog = time.monotonic() + conf().profile_cache_check_seconds
            if not ok:
                connection.close()  # a broken connection is not reused; the next attempt reconnects
        except Exception:  # never let the thread die: a dead refresher would freeze the state
            log.exception("state refresher")
            with contextlib.suppress(Exception):
                connection.close()

"""Read live usage: an O(1) lookup per node behind a small process cache over the database.

Every web replica reads the same rows (``usage.models``), so whichever replica CA reaches answers
the same. The cache holds every live node's usage keyed by name; at most every
``USAGE_CACHE_SECONDS`` it asks the database for ``UsageState.generation`` (one tiny query) and,
when that moved, loads only the node rows stamped with a newer generation. A lookup between checks
is a dictionary read. A generation that went backwards (the store was emptied) reloads everything.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from hami_sim.conf import conf
from hami_sim.engine.model import MigPlacement

__all__ = ["DeviceLive", "LiveUsage", "UsageStore", "get_store", "reset"]


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
    rows), so the engine may remember a verdict for the object it was computed on (weakly).
    """

    name: str
    devices: dict[str, DeviceLive]
    observed_at: datetime
    version: int

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

    @property
    def check_seconds(self) -> float:
        if self._check is not None:
            return self._check
        return conf().usage_cache_seconds

    def refresh(self, force: bool = False) -> None:
        """Bring the cache up to the database's generation (at most once per ``check_seconds``)."""
        if not force and time.monotonic() - self._checked < self.check_seconds:
            return
        from .models import NodeUsage, UsageState

        with self._lock:
            if not force and time.monotonic() - self._checked < self.check_seconds:
                return
            state = (
                UsageState.objects.filter(pk=1).values_list("generation", "confirmed_at", "source").first()
            )
            generation, confirmed_at, source = state if state else (0, None, "")
            self._confirmed_at = confirmed_at
            self._snapshot_source = source.startswith("file://")
            if generation != self._generation:
                full = generation < self._generation or self._generation < 0
                rows = (
                    NodeUsage.objects.all()
                    if full
                    else NodeUsage.objects.filter(version__gt=self._generation)
                )
                nodes = {} if full else dict(self._nodes)
                for name, devices, observed_at, version, gone in rows.values_list(
                    "name", "devices", "observed_at", "version", "gone"
                ).iterator(chunk_size=2000):
                    if gone:
                        nodes.pop(name, None)
                    else:
                        parsed = {uuid: _device(d) for uuid, d in (devices or {}).items()}
                        nodes[name] = LiveUsage(name, parsed, observed_at, version)
                self._nodes, self._generation = nodes, generation
            self._checked = time.monotonic()

    def get(self, name: str) -> LiveUsage | None:
        """The node's usage, or ``None`` when the store has none for it (not a live node, or not yet)."""
        self.refresh()
        return self._nodes.get(name)

    def read(self, name: str) -> tuple[LiveUsage | None, datetime | None, bool]:
        """``(get(name), confirmed_at, from_snapshot)`` after one freshness check: the extender's
        per-node lookup (three properties would check the clock three times per node)."""
        self.refresh()
        return self._nodes.get(name), self._confirmed_at, self._snapshot_source

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

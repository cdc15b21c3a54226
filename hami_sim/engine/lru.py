"""The engine's one cache type: a least-recently-used memo bounded in bytes, safe to share between a
worker's threads, reporting hits, misses and evictions (``cache_metrics``, ``/metrics``).

The simulator memoises parsed inventories and zero-usage verdicts because CA repeats the same template
nodes every loop. A bound on the number of entries does not bound memory (an entry for a 100-GPU node
is a hundred times one for a 1-GPU node), so every entry is charged an estimate of its size, computed
once when it is inserted, and the least recently used entries leave when the total passes the budget.
An entry larger than ``max_entry_bytes`` is not kept at all: a one-off giant would evict hundreds of
entries that CA will ask for again.

Values must be immutable (frozen dataclasses, tuples): one cached object is handed to every request.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from types import MappingProxyType
from typing import Generic, TypeVar

__all__ = [
    "CACHE_BYTES_ENV",
    "DEFAULT_CACHE_BYTES",
    "ENTRY_OVERHEAD",
    "ByteLRU",
    "approx_size",
    "cache_bytes_from_env",
    "cache_metrics",
]

#: the environment variable the runtime may set (``EngineConfig.cache_bytes`` reads it by default)
CACHE_BYTES_ENV = "HAMI_SIM_CACHE_BYTES"

#: 128 MiB per process. Production gives the extender container 2 GiB for 4 gunicorn workers
#: (``deploy/production/web-resources.yaml``; base: 1 GiB for 2), i.e. 512 MiB per worker, of which
#: ~90 MiB is the idle process and a 1,000-node request's parsed body and answer take ~100 MiB more
#: (several times that with 100-GPU nodes); a quarter of the share keeps the sum well inside the
#: limit even if the size estimate is off by half. A 1,000-node 8-GPU fleet needs ~10 MiB.
DEFAULT_CACHE_BYTES = 128 * 1024 * 1024

#: the largest single entry, as a share of the budget
_MAX_ENTRY_SHARE = 64

#: what the memo itself spends per entry (its hash-table slot and order link, the [value, size,
#: used] list), charged on top of the entry's own size
ENTRY_OVERHEAD = 192

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def cache_bytes_from_env(environ: dict[str, str] | None = None) -> int:
    """``HAMI_SIM_CACHE_BYTES`` (a plain byte count; ``0`` turns memoising off), else the default."""
    raw = (os.environ if environ is None else environ).get(CACHE_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_CACHE_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{CACHE_BYTES_ENV} must be a whole number of bytes, not {raw!r}") from None
    if value < 0:
        raise ValueError(f"{CACHE_BYTES_ENV} must not be negative (0 turns the cache off)")
    return value


_LEAVES = (str, bytes, int, float, complex, bool, type(None))
_SEQUENCES = (list, tuple, set, frozenset)
_MAPPINGS = (dict, MappingProxyType)
#: per dataclass type, its field names (``dataclasses.fields`` is too slow to call per object)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        is_data = dataclasses.is_dataclass(cls)
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls)) if is_data else ()
    return names


def approx_size(*objs: object) -> int:
    """Bytes ``objs`` hold: ``sys.getsizeof`` over everything reachable through lists, tuples, sets,
    dicts and dataclasses, each object once. Anything else (functions, classes, vendors) is shared,
    not owned, and counted by its own size only. Objects shared with other entries are counted in
    each (the estimate errs high, so the budget errs safe)."""
    seen: set[int] = set()
    stack = list(objs)
    total = 0
    getsizeof = sys.getsizeof
    while stack:
        obj = stack.pop()
        ident = id(obj)
        if ident in seen:
            continue
        seen.add(ident)
        total += getsizeof(obj)
        if isinstance(obj, _LEAVES):
            continue
        if isinstance(obj, _SEQUENCES):
            stack.extend(obj)
        elif isinstance(obj, _MAPPINGS):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        else:
            for name in _field_names(type(obj)):
                stack.append(getattr(obj, name, None))
    return total


class ByteLRU(Generic[K, V]):
    """LRU memo whose entries are charged their size, shared by a worker's threads.

    Recency is kept the CLOCK way (second chance): a read only marks its entry as used, and an
    eviction passes over the oldest entries that were used since, unmarking them and moving them to
    the recent end. A read is then one dictionary lookup and one store (moving the entry on every
    read cost a second hash of its key, for each of the thousands of nodes of a CA call).

    Every write (insert, evict, clear) holds one lock, so two gunicorn threads never interleave an
    eviction with an insert and the accounted bytes always equal the entries' sizes; the lock is
    held for dictionary operations only, never while computing a value or its size. Reads are
    lock-free (see ``get``).
    """

    def __init__(self, max_bytes: int, max_entry_bytes: int | None = None, name: str = "") -> None:
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_bytes // _MAX_ENTRY_SHARE if max_entry_bytes is None else max_entry_bytes
        self.name = name  # its label in ``/metrics`` (``cache_metrics``); unnamed caches are not reported
        # key -> [value, size, used since last pass, owner token (``grow``)]
        self._data: OrderedDict[K, list] = OrderedDict()
        self._lock = threading.Lock()
        self._bytes = 0
        self.hits = 0  # (counted without the lock: under racing threads a count may be lost, never a value)
        self.misses = 0
        self.evictions = 0
        self.refused = 0  # entries above ``max_entry_bytes``, not kept
        if name:
            _CACHES.add(self)

    @property
    def bytes(self) -> int:
        """The accounted size of every entry (never above ``max_bytes``)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: K) -> V | None:
        """The value, marked as used; None when absent. Raises ``TypeError`` for unhashable keys.

        Reads take no lock (they run for every node of every CA call): the lookup is one C-level
        dictionary operation, atomic under the GIL, and the mark is a store into the entry, which
        ``put`` reads under its lock only to decide the order of evictions.
        """
        entry = self._data.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        entry[2] = True
        value: V = entry[0]
        return value

    def put(self, key: K, value: V, size: int, owner: object = None) -> bool:
        """Keep ``value`` charged ``size`` bytes, evicting the least recently used entries to fit.
        ``owner`` (default: the value) is what ``grow`` asks for to charge more to this entry.

        Returns False (and keeps nothing) when the entry alone is above ``max_entry_bytes``.
        """
        size += ENTRY_OVERHEAD
        if size > self.max_entry_bytes or size > self.max_bytes:
            self.refused += 1
            return False
        with self._lock:
            data = self._data
            old = data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._make_room(size)
            data[key] = [value, size, False, value if owner is None else owner]
            self._bytes += size
        return True

    def grow(self, key: K, delta: int, owner: object) -> bool:
        """Charge ``key``'s entry ``delta`` more bytes (less when negative) for what was added to its
        value (a verdict remembered with an inventory), evicting others to fit. False, charging
        nothing, when ``key``'s entry is no longer ``owner``'s (``put``: evicted, maybe replaced) or
        would pass ``max_entry_bytes``: the caller keeps nothing more."""
        with self._lock:
            entry = self._data.get(key)
            if entry is None or entry[3] is not owner:
                return False
            if delta > 0 and entry[1] + delta > self.max_entry_bytes:
                return False
            if delta > 0:
                self._data.move_to_end(key)  # (never its own victim)
                entry[2] = True
                self._make_room(delta)
            entry[1] += delta
            self._bytes += delta
        return True

    def _make_room(self, size: int) -> None:
        """Evict until ``size`` more bytes fit (under the lock): room first, the total never passes."""
        data = self._data
        chances = len(data)  # a bound, though readers may mark entries while this runs
        while data and self._bytes + size > self.max_bytes:
            oldest, entry = data.popitem(last=False)
            if entry[2] and chances > 0:  # used since the last pass: a second chance
                chances -= 1
                entry[2] = False
                data[oldest] = entry
                continue
            self._bytes -= entry[1]
            self.evictions += 1

    def stats(self) -> dict[str, int]:
        """Entries, accounted bytes, hits, misses, evictions and refused entries so far."""
        return {
            "entries": len(self._data),
            "bytes": self._bytes,
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
            "refused": self.refused,
        }

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0


#: every named cache of the process (weakly: a dropped simulator takes its caches with it)
_CACHES: weakref.WeakSet[ByteLRU] = weakref.WeakSet()


def cache_metrics() -> dict[str, dict[str, int]]:
    """Per cache name, ``ByteLRU.stats`` summed over the process's caches of that name (one per
    simulator; a process serves with one): what ``/metrics`` and the dashboard report."""
    totals: dict[str, dict[str, int]] = {}
    for cache in list(_CACHES):
        into = totals.setdefault(
            cache.name, dict.fromkeys(("entries", "bytes", "hits", "misses", "evictions", "refused"), 0)
        )
        for field, value in cache.stats().items():
            into[field] += value
    return dict(sorted(totals.items()))

"""Objects read from the cluster that a sync could not store as they were: repaired or skipped,
counted and named, while the rest of the sync lands.

Every object read from the cluster is untrusted input: anyone who may create a pod chooses its
annotations, and PostgreSQL refuses a NUL character or a name longer than its column. A sync that
meets such an object stores it repaired (``hami_sim.runtime.storable``) or, when what identifies it
cannot be stored, skips it, and says so with ``note``. The notes of one sync are written when it
ends (``rejections``): one ``RejectedObject`` row per object and reason (what the Task runs page
lists) and the totals ``hami_sim_sync_rejected_objects_total{kind,reason}`` exports, read from the
database at scrape time so the worker's and the watcher's rejections show on every web replica.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily

from hami_sim.project.metrics import DatabaseSeries

from .storable import clean_text, text_needs_cleaning

__all__ = [
    "Rejections",
    "rejections",
    "note",
    "bad_identity",
    "object_name",
    "RejectionCollector",
    "KEEP_ROWS",
]

log = logging.getLogger("hami_sim.runtime.rejects")

#: how many named rejections the Task runs page can show; older ones are pruned (totals stay)
KEEP_ROWS = 1000
#: what Kubernetes allows, and what our columns hold: a longer name, namespace or uid is not one
_LIMITS = {"name": 253, "namespace": 63, "uid": 64}


@dataclass
class Rejections:
    """The rejections noted during one sync (``source``: the task or process), one per object and
    reason."""

    source: str
    found: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)

    def add(self, kind: str, name: str, reason: str, action: str, detail: str = "") -> None:
        key = (kind, clean_text(name, 300), reason)
        if key not in self.found:
            log.warning("%s %s %s by %s: %s %s", kind, key[1], action, self.source, reason, detail)
        self.found[key] = (action, clean_text(detail, 2000))

    def summary(self) -> list[str]:
        """``kind name: reason (action)`` of each, for a task run's counts."""
        return [f"{k} {n}: {r} ({a})" for (k, n, r), (a, _d) in sorted(self.found.items())]


_current: ContextVar[Rejections | None] = ContextVar("hami_sim_rejections", default=None)


def note(kind: str, name: str, reason: str, action: str, detail: str = "") -> None:
    """Say that an object read from the cluster was stored repaired (``action="sanitised"``) or
    skipped. Outside ``rejections`` (a caller that records nothing) it is only logged."""
    current = _current.get()
    if current is None:
        log.warning("%s %s %s: %s %s", kind, name, action, reason, detail)
        return
    current.add(kind, name, reason, action, detail)


@contextmanager
def rejections(source: str) -> Iterator[Rejections]:
    """Collect the notes of one sync and write them when it ends (also when it fails: what was
    rejected was rejected). Nested: the outer scope collects and writes."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    found = Rejections(source)
    token = _current.set(found)
    try:
        yield found
    finally:
        _current.reset(token)
        if found.found:
            _write(found)


def _write(found: Rejections) -> None:
    """Upsert one row per object and reason and add to the totals; never fails the sync."""
    now = timezone.now()
    try:
        with transaction.atomic():
            for (kind, name, reason), (action, detail) in found.found.items():
                _upsert(kind, name, reason, action, detail, found.source, now)
            _prune()
    except DatabaseError as exc:  # the database is what failed: the log keeps the notes
        log.warning("rejections of %s not recorded: %s", found.source, exc)


def _upsert(kind: str, name: str, reason: str, action: str, detail: str, source: str, now) -> None:
    from .models import RejectedObject, RejectionTotal

    fields = {"action": action, "detail": detail, "source": source[:100], "last_seen": now}
    for _attempt in range(2):  # another process may create the same row first
        try:
            with transaction.atomic():
                if not RejectedObject.objects.filter(kind=kind, name=name, reason=reason).update(
                    count=F("count") + 1, **fields
                ):
                    RejectedObject.objects.create(
                        kind=kind, name=name, reason=reason, first_seen=now, **fields
                    )
                if not RejectionTotal.objects.filter(kind=kind, reason=reason).update(total=F("total") + 1):
                    RejectionTotal.objects.create(kind=kind, reason=reason, total=1)
            return
        except IntegrityError:
            continue


def _prune() -> None:
    """Keep the newest ``KEEP_ROWS`` named rejections (the totals keep counting)."""
    from .models import RejectedObject

    cutoff = RejectedObject.objects.values_list("last_seen", flat=True)[KEEP_ROWS : KEEP_ROWS + 1]
    if cutoff:
        RejectedObject.objects.filter(last_seen__lte=cutoff[0]).delete()


def object_name(meta: object) -> str:
    """``namespace/name`` (or ``name``) of an object's metadata, whatever it holds, for a note."""
    meta = meta if isinstance(meta, Mapping) else {}
    name = str(meta.get("name") or "?")
    return f"{meta['namespace']}/{name}" if meta.get("namespace") else name


def bad_identity(meta: object, *, named: bool = True) -> str | None:
    """Why an object's name, namespace or uid cannot be stored as its identity (not a string, a
    NUL or lone surrogate, longer than Kubernetes allows), or None. ``named``: a missing name is
    a problem too (nodes); pods may fall back to their uid."""
    if not isinstance(meta, Mapping):
        return "metadata is not an object"
    if named and not meta.get("name"):
        return "no metadata.name"
    for key, limit in _LIMITS.items():
        value = meta.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            return f"metadata.{key} is not a string"
        if text_needs_cleaning(value, limit):
            return f"metadata.{key} holds a NUL, a lone surrogate or more than {limit} characters"
    return None


class RejectionCollector(DatabaseSeries):
    """``hami_sim_sync_rejected_objects_total{kind,reason}`` from the database, at scrape time (the
    same in every replica: the web listener exports it, read with ``max by``)."""

    def collect(self):
        counter = CounterMetricFamily(
            "hami_sim_sync_rejected_objects",
            "Objects read from the cluster that a sync stored repaired or skipped, by kind and reason",
            labels=["kind", "reason"],
        )
        try:
            from .models import RejectionTotal

            for kind, reason, total in RejectionTotal.objects.values_list("kind", "reason", "total"):
                counter.add_metric([kind, reason], total)
        except Exception as exc:  # a scrape must not fail because the database is away
            log.debug("rejection totals unavailable: %s", exc)
        yield counter

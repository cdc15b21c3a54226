"""Decision rows into the database: summaries folded by digest, each new row in its own savepoint.

A burst of identical questions becomes one row whose ``count`` moves; a row the database refuses is
repaired (``repair``) and never rolls back the others of its batch, so recording cannot lose a
batch to one odd pod name.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from prometheus_client import Counter

from .models import Decision
from .repair import marker, storable

__all__ = ["write_batch", "bump", "RECORD_REPAIRED"]

log = logging.getLogger("hami_sim.decisions")

RECORD_REPAIRED = Counter(
    "hami_sim_decision_records_repaired_total",
    "Decision rows the database refused as they were, stored trimmed or as a marker",
    ["how"],
)


def write_batch(rows: Sequence[dict]) -> int:
    """Upsert summaries, folding by digest; returns the number of distinct rows touched.

    Each new row goes in its own savepoint (``_insert``): a row the database refuses is stored
    trimmed or as a marker, and never rolls back the others of its batch."""
    folded: dict[str, dict] = {}
    for row in rows:
        seen = folded.get(row["digest"])
        if seen is None:
            folded[row["digest"]] = dict(row, count=row.get("count", 1))
        else:
            seen["count"] += row.get("count", 1)
            seen["first_seen"] = min(seen["first_seen"], row["first_seen"])
            if row["last_seen"] >= seen["last_seen"]:
                seen["last_seen"] = row["last_seen"]
                seen["latency_ms"] = row["latency_ms"]
    with transaction.atomic():
        for digest, row in folded.items():
            if not bump(digest, row):
                _insert(digest, row)
    return len(folded)


def _insert(digest: str, row: dict) -> None:
    """Create one row: as summarised but storable (``storable``: trimmed, NUL characters replaced),
    else as a marker naming the database's refusal; a race with another writer bumps its row."""
    clean = storable(row)
    if clean != row:
        RECORD_REPAIRED.labels("trimmed").inc()
    error = _try_create(digest, clean)
    if error is None:
        return
    log.warning("decision %s stored as a marker: %s", digest, error)
    RECORD_REPAIRED.labels("marker").inc()
    error = _try_create(digest, marker(clean, error))
    if error is not None:
        raise error


def _try_create(digest: str, row: dict) -> Exception | None:
    """Create ``row`` in its own savepoint; None when it (or another writer's row) is now stored,
    else the database's refusal (the savepoint is rolled back, the batch goes on)."""
    try:
        with transaction.atomic():
            Decision.objects.create(**row)
        return None
    except IntegrityError as exc:  # another writer created it first (or a constraint refused it)
        with transaction.atomic():
            return None if bump(digest, row) else exc
    except (DatabaseError, ValueError) as exc:  # psycopg refuses NUL before the server sees it
        return exc


def bump(digest: str, row: dict) -> bool:
    """Move an existing row's ``count``, ``last_seen`` and ``latency_ms``; False when there is none."""
    return bool(
        Decision.objects.filter(digest=digest).update(
            count=F("count") + row["count"], last_seen=row["last_seen"], latency_ms=row["latency_ms"]
        )
    )

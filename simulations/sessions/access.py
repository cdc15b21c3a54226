"""Which session a call acts on, and how every change to one is made.

A call names a session that must be live (an expired one is unknown: 404), belong to the caller
unless the caller is an operator (403), and, for a change, be at the revision the caller last saw
(``If-Match``, 412). Every change runs in one transaction that locks the session row first and is
retried when the database reports a lock conflict, then moves the revision and restarts the TTL
(``touch``). Kept in one place so each operation module only says what it changes.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.db import OperationalError, connection
from django.db.models import F
from django.utils import timezone

from hami_sim.project.conf import judging_releases
from hami_sim.project.permissions import Caller

from ..models import SessionPlacement, SimulationSession

__all__ = [
    "SessionError",
    "retrying",
    "live",
    "visible_sessions",
    "parse_if_match",
    "check_revision",
    "touch",
    "header",
    "placement_json",
]


class SessionError(Exception):
    """A 4xx answer: HTTP status, the message and optional extra fields for the JSON body.

    ``simulations.api`` answers it in the API's one error shape: ``{"detail": error, **extra}``.
    """

    def __init__(self, status: int, error: str, **extra: object) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.extra = extra


def retrying(func: Callable) -> Callable:
    """Retry a whole session transaction when the database says "locked" or "deadlock".

    SQLite (the embedded demo) has no row locks: two writers collide with ``database is locked``
    instead of waiting. PostgreSQL may report a deadlock under unusual interleavings. Either way the
    transaction rolled back completely, so running it again is safe. Inside an outer transaction
    (tests) there is nothing to retry.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        for attempt in range(6):
            try:
                return func(*args, **kwargs)
            except OperationalError as exc:
                text = str(exc).lower()
                if connection.in_atomic_block or ("locked" not in text and "deadlock" not in text):
                    raise
                if attempt == 5:
                    raise SessionError(503, "the database is busy; retry the request") from None
                time.sleep(0.05 * (attempt + 1))
        return None  # pragma: no cover

    return wrapper


def _parse_id(session_id: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(session_id))
    except (TypeError, ValueError):
        raise SessionError(404, f"unknown or expired session {session_id}") from None


def _check_owner(session: SimulationSession, caller: Caller | None) -> None:
    """403 when ``caller`` is neither the session's owner nor an operator (None: the server itself)."""
    if caller is None or caller.operator or session.owner == caller.identity:
        return
    raise SessionError(
        403,
        f"session {session.id} belongs to another identity; only its owner or an operator may use it "
        f"(this request is {caller.identity})",
    )


def visible_sessions(caller: Caller | None):
    """The live sessions ``caller`` may see (all for an operator or the server itself), newest first."""
    qs = SimulationSession.objects.filter(expires_at__gt=timezone.now())
    if caller is not None and not caller.operator:
        qs = qs.filter(owner=caller.identity)
    return qs.order_by("-created_at", "id")


def live(session_id: object, *, lock: bool, caller: Caller | None = None) -> SimulationSession:
    sid = _parse_id(session_id)
    qs = SimulationSession.objects.filter(pk=sid, expires_at__gt=timezone.now())
    if lock:
        if connection.vendor == "sqlite":
            # SQLite has no row locks; writing first takes the database write lock up front, so
            # concurrent writers wait (busy timeout) instead of failing to upgrade a read snapshot.
            SimulationSession.objects.filter(pk=sid).update(revision=F("revision"))
        qs = qs.select_for_update()
    session = qs.first()
    if session is None:
        raise SessionError(404, f"unknown or expired session {session_id}")
    _check_owner(session, caller)
    return session


def parse_if_match(value: str | None) -> int | None:
    """``If-Match: 7`` or ``"7"`` (an ETag as we send it); ``*`` or absent means no condition."""
    if value is None:
        return None
    text = value.strip()
    if text.startswith("W/"):
        text = text[2:]
    text = text.strip('"')
    if text == "*" or text == "":
        return None
    if not text.isdigit():
        raise SessionError(400, f"If-Match must be a session revision number, got {value!r}")
    return int(text)


def check_revision(session: SimulationSession, expected: int | None) -> None:
    if expected is not None and expected != session.revision:
        raise SessionError(
            412,
            f"revision mismatch: If-Match {expected}, session is at {session.revision}",
            revision=session.revision,
        )


def placement_json(p: SessionPlacement) -> dict:
    return {
        "podUID": p.pod_uid,
        "namespace": p.namespace,
        "name": p.name,
        "nodeName": p.node_name,
        "containers": p.containers,
    }


def header(session: SimulationSession) -> dict:
    return {
        "id": str(session.id),
        "name": session.name,
        "owner": session.owner,
        "revision": session.revision,
        "depth": session.depth,
        "expiresAt": session.expires_at.isoformat().replace("+00:00", "Z"),
        "hamiVersion": session.hami_release,
        "caVersion": session.ca_release,
    }


def touch(session: SimulationSession, **fields: object) -> None:
    """Every successful mutation: revision + 1, the TTL restarts (sessions expire when idle), and the
    releases that judged it are this process's."""
    session.revision += 1
    session.expires_at = timezone.now() + timedelta(seconds=session.ttl_seconds)
    fields = {**judging_releases(), **fields}
    for key, value in fields.items():
        setattr(session, key, value)
    session.save(update_fields=["revision", "expires_at", "updated_at", *fields])

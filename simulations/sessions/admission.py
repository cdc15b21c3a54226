"""Bounds on what sessions may hold: their lifetime, how many an identity may create, their size.

Sessions are rows that anyone allowed to call the API can create; without bounds one client could
fill the database or use up the live-session cap that Cluster Autoscaler needs. Creation is limited
per identity (a rate and a quota), a share of ``SESSION_MAX_LIVE`` is reserved for the client
certificate identities (``SESSION_QUOTA_PER_IDENTITY`` each), every other identity holds at most
``SESSION_QUOTA_PER_USER`` (well under the shared rest: before, four tokens filled it for a day),
and a session stops growing at ``SESSION_MAX_PLACEMENTS``/``_NODES`` and at ``SESSION_MAX_BYTES``
of stored JSON (its nodes, placements and checkpoints, measured as written: one session grew the
database by 67.8 MiB).
"""

from __future__ import annotations

import hashlib
import time

import orjson
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from hami_sim.project.conf import conf

from ..models import SessionNode, SessionPlacement, SimulationSession
from .access import SessionError

__all__ = [
    "DEFAULT_TTL",
    "MAX_TTL",
    "validate_ttl",
    "admit_new_session",
    "reserved_for_certificates",
    "check_session_size",
    "json_bytes",
    "admit_bytes",
]

DEFAULT_TTL = 900
MAX_TTL = 86400


def validate_ttl(ttl: object) -> int:
    """``ttlSeconds`` of a new session (``DEFAULT_TTL`` when absent); 400 outside 1..``MAX_TTL``."""
    if ttl is None:
        return DEFAULT_TTL
    if isinstance(ttl, bool) or not isinstance(ttl, int):
        raise SessionError(400, "ttlSeconds must be an integer number of seconds")
    if ttl <= 0 or ttl > MAX_TTL:
        raise SessionError(400, f"ttlSeconds must be between 1 and {MAX_TTL}, got {ttl}")
    return ttl


def admit_new_session(owner: str, certificate: bool) -> None:
    """Growth bounds on creation, per identity (429 past any of them): a rate, a quota of live
    sessions, and the shared cap.

    ``SESSION_MAX_LIVE`` bounds all live sessions; ``SESSION_QUOTA_PER_IDENTITY`` of it is reserved
    for each allowed client certificate identity (Cluster Autoscaler), and every other identity
    (users, tokens, the demo's anonymous, the dashboard) shares the rest. Before this one token with
    no permissions filled the whole cap in seconds and CA's own creates got 429 until the sessions
    expired. Runs inside the creating transaction, under a lock per pool on PostgreSQL, so
    concurrent creates cannot overshoot a count.
    """
    limits = conf()
    _lock_pool(owner if certificate else "shared")
    key = f"hami-sim:session-creates:{_hashed(owner)}:{int(time.time() // 60)}"
    cache.add(key, 0, 120)
    try:
        created = cache.incr(key)
    except ValueError:
        created = 1
    if created > limits.session_create_per_minute:
        raise SessionError(
            429,
            f"more than {limits.session_create_per_minute} new sessions this minute from {_who(owner)}; "
            "retry later",
        )
    live = SimulationSession.objects.filter(expires_at__gt=timezone.now())
    own = live.filter(owner=owner).count()
    quota, setting = (
        (limits.session_quota_per_identity, "SESSION_QUOTA_PER_IDENTITY")
        if certificate
        else (limits.session_quota_per_user, "SESSION_QUOTA_PER_USER")
    )
    if own >= quota:
        raise SessionError(
            429,
            f"{_who(owner)} holds {own} live sessions, its quota ({setting}) is {quota}; delete some or let them expire",
        )
    if certificate:
        return  # a certificate identity's quota is reserved inside the cap
    shared_cap = max(0, limits.session_max_live - reserved_for_certificates())
    shared = live.exclude(owner__startswith="cert:").count()
    if shared >= shared_cap:
        raise SessionError(
            429,
            f"{shared} live sessions of clients other than the extender's certificates: their share of "
            f"SESSION_MAX_LIVE is {shared_cap}; delete some or let them expire",
        )


def reserved_for_certificates() -> int:
    """Live sessions kept for the allowed client certificate identities (CA), out of ``SESSION_MAX_LIVE``."""
    limits = conf()
    return limits.session_quota_per_identity * len(limits.client_identities())


def _who(owner: str) -> str:
    return owner or "the server"


def _hashed(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _lock_pool(name: str) -> None:
    """A transaction-scoped PostgreSQL advisory lock per admission pool (SQLite's IMMEDIATE
    transactions already serialise writers)."""
    if connection.vendor == "postgresql":
        key = int.from_bytes(
            hashlib.sha256(f"hami-sim:sessions:{name}".encode()).digest()[:8], "big", signed=True
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def check_session_size(session: SimulationSession, new_node: bool) -> None:
    """A placement may not grow a session past its caps: no caller grows one session without bound."""
    limits = conf()
    placements = SessionPlacement.objects.filter(session=session).count()
    if placements >= limits.session_max_placements:
        raise SessionError(409, f"session holds {placements} placements, the limit of one session")
    if new_node and SessionNode.objects.filter(session=session).count() >= limits.session_max_nodes:
        raise SessionError(409, f"session holds {limits.session_max_nodes} nodes, the limit of one session")


def json_bytes(*values: object) -> int:
    """What ``values`` take as stored JSON: the measure ``SESSION_MAX_BYTES`` bounds."""
    return len(orjson.dumps(values))


def admit_bytes(session: SimulationSession, growth: int) -> int:
    """The session's stored bytes after writing ``growth`` more; a 400 naming the limit when that
    passes ``SESSION_MAX_BYTES`` (nothing is written then)."""
    limit = conf().session_max_bytes
    after = max(0, session.stored_bytes + growth)
    if growth > 0 and after > limit:
        raise SessionError(
            400,
            f"this change would make the session store {after} bytes, over SESSION_MAX_BYTES ({limit}): "
            "remove placements, commit or revert checkpoints, or use another session",
        )
    return after

"""Checkpoints of a session: ``fork`` saves its rows, ``revert`` restores them, ``commit`` drops one.

A checkpoint is a snapshot of every node and placement row, so a revert restores the session row for
row (no replay of placements); its cost is bounded by ``MAX_DEPTH`` and
``SESSION_MAX_CHECKPOINT_ROWS`` (every checkpoint copies the session's rows).
"""

from __future__ import annotations

from django.db import transaction

from hami_sim.project.conf import conf
from hami_sim.project.permissions import Caller

from ..models import SessionCheckpoint, SessionNode, SessionPlacement, SimulationSession
from .access import SessionError, check_revision, live, retrying, touch
from .admission import admit_bytes, json_bytes

__all__ = ["MAX_DEPTH", "fork", "revert", "commit"]

MAX_DEPTH = 256


def _snapshot(session: SimulationSession) -> dict:
    nodes = SessionNode.objects.filter(session=session).values(
        "name", "position", "node_group", "digest", "devices", "pair_scores", "cordoned", "inventory_error"
    )
    placements = SessionPlacement.objects.filter(session=session).values(
        "pod_uid", "namespace", "name", "node_name", "seq", "containers", "delta"
    )
    return {"nodes": list(nodes), "placements": list(placements)}


@retrying
def fork(session_id: object, if_match: int | None, *, caller: Caller | None = None) -> dict:
    with transaction.atomic():
        session = live(session_id, lock=True, caller=caller)
        check_revision(session, if_match)
        if session.depth >= MAX_DEPTH:
            raise SessionError(409, f"checkpoint depth limit {MAX_DEPTH} reached: commit or revert first")
        rows = SessionNode.objects.filter(session=session).count()
        rows += SessionPlacement.objects.filter(session=session).count()
        budget = conf().session_max_checkpoint_rows
        if (session.depth + 1) * rows > budget:  # every checkpoint copies the session's rows
            raise SessionError(
                409, f"{session.depth + 1} checkpoints of {rows} rows exceed {budget}: commit or revert first"
            )
        snapshot = _snapshot(session)
        size = json_bytes(snapshot)
        after = admit_bytes(session, size)  # a checkpoint copies the session: it counts again
        # what reverting or committing it gives back (the session's bytes before it, its own size)
        snapshot.update(bytes_before=session.stored_bytes, size=size)
        SessionCheckpoint.objects.create(session=session, depth=session.depth + 1, snapshot=snapshot)
        touch(session, depth=session.depth + 1, stored_bytes=after)
        return {"depth": session.depth, "revision": session.revision}


@retrying
def revert(session_id: object, if_match: int | None, *, caller: Caller | None = None) -> dict:
    with transaction.atomic():
        session = live(session_id, lock=True, caller=caller)
        check_revision(session, if_match)
        if session.depth == 0:
            raise SessionError(409, "no checkpoint to revert to: fork first")
        checkpoint = SessionCheckpoint.objects.get(session=session, depth=session.depth)
        snap = checkpoint.snapshot
        SessionPlacement.objects.filter(session=session).delete()
        SessionNode.objects.filter(session=session).delete()
        SessionNode.objects.bulk_create(SessionNode(session=session, **n) for n in snap["nodes"])
        SessionPlacement.objects.bulk_create(
            SessionPlacement(session=session, **p) for p in snap["placements"]
        )
        checkpoint.delete()
        touch(session, depth=session.depth - 1, stored_bytes=int(snap.get("bytes_before") or 0))
        return {"depth": session.depth, "revision": session.revision}


@retrying
def commit(session_id: object, if_match: int | None, *, caller: Caller | None = None) -> dict:
    with transaction.atomic():
        session = live(session_id, lock=True, caller=caller)
        check_revision(session, if_match)
        if session.depth == 0:
            raise SessionError(409, "no checkpoint to commit: fork first")
        checkpoints = SessionCheckpoint.objects.filter(session=session, depth=session.depth)
        size = sum(int(s or 0) for s in checkpoints.values_list("snapshot__size", flat=True))
        checkpoints.delete()
        touch(session, depth=session.depth - 1, stored_bytes=admit_bytes(session, -size))
        return {"depth": session.depth, "revision": session.revision}

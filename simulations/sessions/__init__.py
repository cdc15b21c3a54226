"""Session operations (docs/sessions.md): create, place, remove, fork/revert/commit, read.

Every mutation runs in one transaction that first locks the session row with ``select_for_update``,
so concurrent writers (threads, processes, replicas) serialise per session and never lose or
double-count a placement. Expired sessions behave as unknown everywhere (404) until the
``expire_sessions`` task deletes them.

Every session belongs to the identity that made it (``hami_sim.project.permissions.Caller``: CA's client
certificate, a user, ``anonymous`` on the demo listener). A function given a ``caller`` acts only on
that caller's sessions (403 on another's) unless the caller is an operator; without one (the
dashboard's operator pages, the demo, tasks) it acts on any. Creation is bounded per identity: a
rate, a quota of live sessions, and a share of ``SESSION_MAX_LIVE`` reserved for the client
certificate identities, so no other client can use up Cluster Autoscaler's.

Device choice is the engine's (``Simulator.evaluate`` on the node's current usage), so a placement
lands on exactly the devices HAMi's live scheduler would pick on a node with that usage. A placement
stores the usage delta it applied per device (slots, memory, cores and MIG placements); removing it
subtracts exactly that delta, and a revert restores a checkpoint snapshot row for row.

The operations live by concept: ``access`` (which session a call acts on, retried locked
transactions), ``admission`` (bounds on lifetime, creation and size), ``placement`` (place and
remove), ``checkpoints`` (fork, revert, commit) and ``stored`` (devices as rows keep them). This
package re-exports what the API, the dashboard and the tasks call.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from hami_sim.engine.model import NodeState
from hami_sim.project.conf import judging_releases
from hami_sim.project.permissions import Caller

from ..models import SessionNode, SessionPlacement, SimulationSession
from .access import SessionError, header, live, parse_if_match, placement_json, retrying, visible_sessions
from .admission import DEFAULT_TTL, MAX_TTL, admit_new_session, reserved_for_certificates, validate_ttl
from .checkpoints import MAX_DEPTH, commit, fork, revert
from .placement import place_pod, remove_placement
from .stored import device_json, node_state, public_device

__all__ = [
    "DEFAULT_TTL",
    "MAX_TTL",
    "MAX_DEPTH",
    "SessionError",
    "parse_if_match",
    "create_session",
    "session_state",
    "visible_sessions",
    "delete_session",
    "place_pod",
    "remove_placement",
    "fork",
    "revert",
    "commit",
    "node_states",
    "expire_sessions",
    "device_json",
    "reserved_for_certificates",
]


@retrying
def create_session(body: object, *, caller: Caller | None = None) -> dict:
    """A new session owned by ``caller`` (no caller: the server itself, e.g. the dashboard form)."""
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise SessionError(400, "body must be a JSON object")
    name = body.get("name") or ""
    if not isinstance(name, str) or len(name) > 200:
        raise SessionError(400, "name must be a string of at most 200 characters")
    ttl = validate_ttl(body.get("ttlSeconds"))
    owner = caller.identity if caller is not None else ""
    with transaction.atomic():
        admit_new_session(owner, caller is not None and caller.certificate)
        session = SimulationSession.objects.create(
            name=name,
            owner=owner,
            ttl_seconds=ttl,
            expires_at=timezone.now() + timedelta(seconds=ttl),
            **judging_releases(),
        )
    return {**header(session), "nodes": [], "placements": []}


@retrying
def delete_session(session_id: object, *, caller: Caller | None = None) -> None:
    """Delete a session with its nodes, placements and checkpoints."""
    with transaction.atomic():
        session = live(session_id, lock=True, caller=caller)
        session.delete()


@retrying
def session_state(session_id: object, *, caller: Caller | None = None) -> dict:
    """The full state (GET): header, nodes with per-device usage, placements in order."""
    with transaction.atomic():  # the row lock makes header, nodes and placements one consistent view
        session = live(session_id, lock=True, caller=caller)
        nodes = list(SessionNode.objects.filter(session=session).order_by("position"))
        placements = list(SessionPlacement.objects.filter(session=session).order_by("seq"))
    return {
        **header(session),
        "nodes": [
            {
                "name": n.name,
                "nodeGroup": n.node_group or None,
                "devices": [public_device(d) for d in n.devices],
            }
            for n in nodes
        ],
        "placements": [placement_json(p) for p in placements],
    }


def node_states(session_id: object, *, caller: Caller | None = None) -> dict[str, NodeState]:
    """``{node name: NodeState}`` for the session-scoped extender verbs; ``SessionError`` when the
    session is unknown, expired (404) or another identity's (403)."""
    session = live(session_id, lock=False, caller=caller)
    return {row.name: node_state(row) for row in SessionNode.objects.filter(session=session)}


def expire_sessions(now=None) -> int:
    """Delete sessions past their expiry (and, by cascade, their nodes, placements, checkpoints)."""
    now = now or timezone.now()
    deleted, per_model = SimulationSession.objects.filter(expires_at__lte=now).delete()
    return per_model.get(SimulationSession._meta.label, 0)

"""Session operations (design.md section 3): create, place, remove, fork/revert/commit, read.

Every mutation runs in one transaction that first locks the session row with ``select_for_update``,
so concurrent writers (threads, processes, replicas) serialise per session and never lose or
double-count a placement. Expired sessions behave as unknown everywhere (404) until the
``expire_sessions`` task deletes them.

Every session belongs to the identity that made it (``hami_sim.permissions.Caller``: CA's client
certificate, a user, ``anonymous`` on the demo listener). A function given a ``caller`` acts only on
that caller's sessions (403 on another's) unless the caller is an operator; without one (the
dashboard's operator pages, the demo, tasks) it acts on any. Creation is bounded per identity: a
rate, a quota of live sessions, and a share of ``SESSION_MAX_LIVE`` reserved for the client
certificate identities, so no other client can use up Cluster Autoscaler's.

Device choice is the engine's (``Simulator.evaluate`` on the node's current usage), so a placement
lands on exactly the devices HAMi's live scheduler would pick on a node with that usage. A placement
stores the usage delta it applied per device (slots, memory, cores and MIG placements); removing it
subtracts exactly that delta, and a revert restores a checkpoint snapshot row for row.
"""

from __future__ import annotations

import functools
import hashlib
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

import orjson
from django.core.cache import cache
from django.db import OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from hami_sim.conf import conf
from hami_sim.engine.model import ContainerDevice, DeviceUsage, MigPlacement, MigProfile, NodeState
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.predicates import node_problem
from hami_sim.engine.requests import PodError
from hami_sim.engine.simulate import PodContext, Simulator
from hami_sim.permissions import Caller
from hami_sim.runtime.simulator import get_simulator
from usage.live import live_state

from .models import SessionCheckpoint, SessionNode, SessionPlacement, SimulationSession

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
]

DEFAULT_TTL = 900
MAX_TTL = 86400
MAX_DEPTH = 256


class SessionError(Exception):
    """A 4xx answer: HTTP status, the message and optional extra fields for the JSON body.

    ``simulations.api`` answers it in the API's one error shape: ``{"detail": error, **extra}``.
    """

    def __init__(self, status: int, error: str, **extra: object) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.extra = extra


def _retrying(func: Callable) -> Callable:
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


# -- conversions ----------------------------------------------------------------------------------------


def _mig_profiles_json(profiles: tuple[MigProfile, ...]) -> list[dict]:
    return [
        {
            "name": p.name,
            "memoryMB": p.memory_mb,
            "core": p.core,
            "sliceCount": p.slice_count,
            "placements": [{"start": pl.start, "size": pl.size} for pl in p.placements],
        }
        for p in profiles
    ]


def _mig_profiles(data: list) -> tuple[MigProfile, ...]:
    return tuple(
        MigProfile(
            p["name"],
            p["memoryMB"],
            p["core"],
            p["sliceCount"],
            tuple(MigPlacement(pl["start"], pl["size"]) for pl in p["placements"]),
        )
        for p in data
    )


def device_json(dev: DeviceUsage) -> dict:
    """A device's usage as the API shows it (sessions and estimate share this shape)."""
    out = {
        "uuid": dev.id,
        "index": dev.index,
        "type": dev.type,
        "count": dev.count,
        "used": dev.used,
        "devmem": dev.totalmem,
        "usedmem": dev.usedmem,
        "devcore": dev.totalcore,
        "usedcores": dev.usedcores,
        "numa": dev.numa,
        "mode": dev.mode,
        "health": dev.health,
    }
    if dev.mig_profiles or dev.mig_in_use:
        out["migInUse"] = [{"profile": name, "start": p.start, "size": p.size} for name, p in dev.mig_in_use]
    return out


def _stored_device(dev: DeviceUsage) -> dict:
    out = device_json(dev)
    out["vendor"] = dev.vendor
    out["migProfiles"] = _mig_profiles_json(dev.mig_profiles)
    out["migInUse"] = [[name, p.start, p.size] for name, p in dev.mig_in_use]
    if dev.custom_info:
        out["customInfo"] = dev.custom_info  # vendor data Fit reads (Enflame DRS, Ascend topology, AWS)
    if dev.pod_infos:
        out["podInfos"] = list(dev.pod_infos)  # what MetaX sGPU reads of the pods on the card
    return out


def _device_from_stored(d: Mapping) -> DeviceUsage:
    return DeviceUsage(
        d["uuid"],
        d["index"],
        d["count"],
        d["devmem"],
        d["devcore"],
        d["type"],
        d["numa"],
        d["mode"],
        d["health"],
        d.get("vendor", ""),
        _mig_profiles(d.get("migProfiles") or []),
        d["used"],
        d["usedmem"],
        d["usedcores"],
        [(name, MigPlacement(start, size)) for name, start, size in d.get("migInUse") or []],
        0.0,
        d.get("customInfo"),
        tuple(d.get("podInfos") or ()),
    )


def _public_device(d: Mapping) -> dict:
    out = {
        k: d[k]
        for k in (
            "uuid",
            "index",
            "type",
            "count",
            "used",
            "devmem",
            "usedmem",
            "devcore",
            "usedcores",
            "numa",
            "mode",
            "health",
        )
    }
    if d.get("migProfiles") or d.get("migInUse"):
        out["migInUse"] = [
            {"profile": name, "start": start, "size": size} for name, start, size in d.get("migInUse") or []
        ]
    return out


def _node_state(row: SessionNode) -> NodeState:
    return NodeState(
        row.name,
        [_device_from_stored(d) for d in row.devices],
        {k: dict(v) for k, v in (row.pair_scores or {}).items()},
        frozenset(row.cordoned or ()),
    )


def _container_json(dev: ContainerDevice) -> dict:
    out = {"uuid": dev.uuid, "type": dev.type, "usedmem": dev.usedmem, "usedcores": dev.usedcores}
    if dev.mig_profile:
        out["migProfile"] = dev.mig_profile
        if dev.mig_placement is not None:
            out["migPlacement"] = {"start": dev.mig_placement.start, "size": dev.mig_placement.size}
    return out


def _digest(node: Mapping) -> str:
    return hashlib.sha256(orjson.dumps(node, option=orjson.OPT_SORT_KEYS)).hexdigest()


# -- reading ------------------------------------------------------------------------------------------


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


def _live(session_id: object, *, lock: bool, caller: Caller | None = None) -> SimulationSession:
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


def _check_revision(session: SimulationSession, expected: int | None) -> None:
    if expected is not None and expected != session.revision:
        raise SessionError(
            412,
            f"revision mismatch: If-Match {expected}, session is at {session.revision}",
            revision=session.revision,
        )


def _placement_json(p: SessionPlacement) -> dict:
    return {
        "podUID": p.pod_uid,
        "namespace": p.namespace,
        "name": p.name,
        "nodeName": p.node_name,
        "containers": p.containers,
    }


def _header(session: SimulationSession) -> dict:
    return {
        "id": str(session.id),
        "name": session.name,
        "owner": session.owner,
        "revision": session.revision,
        "depth": session.depth,
        "expiresAt": session.expires_at.isoformat().replace("+00:00", "Z"),
    }


@_retrying
def session_state(session_id: object, *, caller: Caller | None = None) -> dict:
    """The full state (GET): header, nodes with per-device usage, placements in order."""
    with transaction.atomic():  # the row lock makes header, nodes and placements one consistent view
        session = _live(session_id, lock=True, caller=caller)
        nodes = list(SessionNode.objects.filter(session=session).order_by("position"))
        placements = list(SessionPlacement.objects.filter(session=session).order_by("seq"))
    return {
        **_header(session),
        "nodes": [
            {
                "name": n.name,
                "nodeGroup": n.node_group or None,
                "devices": [_public_device(d) for d in n.devices],
            }
            for n in nodes
        ],
        "placements": [_placement_json(p) for p in placements],
    }


def node_states(session_id: object, *, caller: Caller | None = None) -> dict[str, NodeState]:
    """``{node name: NodeState}`` for the session-scoped extender verbs; ``SessionError`` when the
    session is unknown, expired (404) or another identity's (403)."""
    session = _live(session_id, lock=False, caller=caller)
    return {row.name: _node_state(row) for row in SessionNode.objects.filter(session=session)}


# -- writing ------------------------------------------------------------------------------------------


def _validate_ttl(ttl: object) -> int:
    if ttl is None:
        return DEFAULT_TTL
    if isinstance(ttl, bool) or not isinstance(ttl, int):
        raise SessionError(400, "ttlSeconds must be an integer number of seconds")
    if ttl <= 0 or ttl > MAX_TTL:
        raise SessionError(400, f"ttlSeconds must be between 1 and {MAX_TTL}, got {ttl}")
    return ttl


def _admit_new_session(owner: str, certificate: bool) -> None:
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
    if own >= limits.session_quota_per_identity:
        raise SessionError(
            429,
            f"{_who(owner)} holds {own} live sessions, its quota (SESSION_QUOTA_PER_IDENTITY) is "
            f"{limits.session_quota_per_identity}; delete some or let them expire",
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


def _check_session_size(session: SimulationSession, new_node: bool) -> None:
    """A placement may not grow a session past its caps (issue 16 item 10)."""
    limits = conf()
    placements = SessionPlacement.objects.filter(session=session).count()
    if placements >= limits.session_max_placements:
        raise SessionError(409, f"session holds {placements} placements, the limit of one session")
    if new_node and SessionNode.objects.filter(session=session).count() >= limits.session_max_nodes:
        raise SessionError(409, f"session holds {limits.session_max_nodes} nodes, the limit of one session")


@_retrying
def create_session(body: object, *, caller: Caller | None = None) -> dict:
    """A new session owned by ``caller`` (no caller: the server itself, e.g. the dashboard form)."""
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise SessionError(400, "body must be a JSON object")
    name = body.get("name") or ""
    if not isinstance(name, str) or len(name) > 200:
        raise SessionError(400, "name must be a string of at most 200 characters")
    ttl = _validate_ttl(body.get("ttlSeconds"))
    owner = caller.identity if caller is not None else ""
    with transaction.atomic():
        _admit_new_session(owner, caller is not None and caller.certificate)
        session = SimulationSession.objects.create(
            name=name, owner=owner, ttl_seconds=ttl, expires_at=timezone.now() + timedelta(seconds=ttl)
        )
    return {**_header(session), "nodes": [], "placements": []}


@_retrying
def delete_session(session_id: object, *, caller: Caller | None = None) -> None:
    with transaction.atomic():
        session = _live(session_id, lock=True, caller=caller)
        session.delete()


def _bump(session: SimulationSession, **fields: object) -> None:
    """Every successful mutation: revision + 1 and the TTL restarts (sessions expire when idle)."""
    session.revision += 1
    session.expires_at = timezone.now() + timedelta(seconds=session.ttl_seconds)
    for key, value in fields.items():
        setattr(session, key, value)
    session.save(update_fields=["revision", "expires_at", "updated_at", *fields])


@dataclass(slots=True)
class _PlaceInput:
    pod: Mapping
    node: Mapping | None
    node_name: str


def _place_input(body: object) -> _PlaceInput:
    if not isinstance(body, Mapping):
        raise SessionError(400, "body must be a JSON object with pod and node (or nodeName)")
    pod = body.get("pod")
    if not isinstance(pod, Mapping):
        raise SessionError(400, "pod must be a Pod object")
    node = body.get("node")
    node_name = body.get("nodeName")
    if node is not None:
        problem = node_problem(node)
        if problem:
            raise SessionError(400, f"node {problem}")
        meta = node.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not isinstance(name, str) or not name:
            raise SessionError(400, "node has no metadata.name")
        if node_name is not None and node_name != name:
            raise SessionError(400, f"nodeName {node_name!r} differs from node.metadata.name {name!r}")
        return _PlaceInput(pod, node, name)
    if not isinstance(node_name, str) or not node_name:
        raise SessionError(400, "give node (a Node object) or nodeName (a node the session already knows)")
    return _PlaceInput(pod, None, node_name)


def _delta(before: Sequence[DeviceUsage], after: Sequence[DeviceUsage]) -> dict:
    prior = {d.id: d for d in before}
    out: dict[str, list] = {}
    for dev in after:
        old = prior[dev.id]
        mig = [[name, p.start, p.size] for name, p in dev.mig_in_use[len(old.mig_in_use) :]]
        change = [dev.used - old.used, dev.usedmem - old.usedmem, dev.usedcores - old.usedcores, mig]
        infos = list(dev.pod_infos[len(old.pod_infos) :])  # the pod, listed on the card (pod_infos)
        if infos:
            change.append(infos)
        if change[0] or change[1] or change[2] or mig or infos:
            out[dev.id] = change
    return out


def _first_state(name: str, inventory, requests: bool) -> NodeState:
    """A node's state when a session first sees it: a live node starts from its live usage
    (``SessionError`` 422 when that usage is stale and the pod asks for devices), others from zero."""
    if inventory.error:
        return NodeState(name, [])
    live = live_state(name, inventory)
    if isinstance(live, str):
        if requests:
            raise SessionError(422, "pod does not fit", reason=live)
        return inventory.state(name)
    return live if live is not None else inventory.state(name)


@_retrying
def place_pod(
    session_id: object, body: object, if_match: int | None, *, caller: Caller | None = None
) -> tuple[int, dict]:
    """(201 or 200, placement body); raises ``SessionError`` for 4xx answers (nothing changed)."""
    data = _place_input(body)
    sim = get_simulator()
    ctx = _placed_pod(sim, data)
    pod_uid = ctx.pod.key
    digest = _digest(data.node) if data.node is not None else ""
    inventory = sim.inventory(data.node) if data.node is not None else None  # outside the lock
    with transaction.atomic():
        session = _live(session_id, lock=True, caller=caller)
        existing = SessionPlacement.objects.filter(session=session, pod_uid=pod_uid).first()
        row = SessionNode.objects.filter(session=session, name=data.node_name).first()
        if row is not None and data.node is not None and row.digest != digest:
            raise SessionError(
                409, f"template changed: node {data.node_name} differs from the one this session first saw"
            )
        if existing is not None:
            # An identical retry answers 200 even with a stale If-Match: its first attempt succeeded.
            if existing.node_name != data.node_name:
                raise SessionError(409, f"pod {pod_uid} is already placed on node {existing.node_name}")
            return 200, {**_placement_json(existing), "revision": session.revision}
        _check_revision(session, if_match)
        _check_session_size(session, new_node=row is None)
        if row is None:
            if data.node is None:
                raise SessionError(
                    400, f"unknown nodeName {data.node_name!r}: send the Node object the first time"
                )
            assert inventory is not None
            if inventory.error and ctx.pod.requests.has_requests:
                raise SessionError(422, "pod does not fit", reason=inventory.error)
            state = _first_state(data.node_name, inventory, ctx.pod.requests.has_requests)
            node_group = inventory.node_group or ""
        else:
            if row.inventory_error and ctx.pod.requests.has_requests:
                raise SessionError(422, "pod does not fit", reason=row.inventory_error)
            state = _node_state(row)
            node_group = row.node_group
        after, containers = _fit_on(sim, ctx, data.node_name, state)
        delta = _delta(state.devices, after)
        devices = [_stored_device(d) for d in after]
        _bump(session)
        if row is None:
            SessionNode.objects.create(
                session=session,
                name=data.node_name,
                position=session.revision,
                node_group=node_group,
                digest=digest,
                devices=devices,
                pair_scores=state.pair_scores,
                cordoned=sorted(state.cordoned),
                inventory_error=(inventory.error if inventory is not None else "")[:500],
            )
        elif delta:
            row.devices = devices
            row.save(update_fields=["devices"])
        placement = SessionPlacement.objects.create(
            session=session,
            pod_uid=pod_uid,
            namespace=ctx.pod.namespace,
            name=ctx.pod.name,
            node_name=data.node_name,
            seq=session.revision,
            containers=containers,
            delta=delta,
        )
        return 201, {**_placement_json(placement), "revision": session.revision}


def _placed_pod(sim: Simulator, data: _PlaceInput) -> PodContext:
    """The pod to place, parsed; 400 for a malformed pod or over-long names, 422 for bad weights."""
    try:
        ctx = sim.pod_context(data.pod)
    except PodError as exc:
        raise SessionError(400, f"malformed pod: {exc}") from None
    except WeightsError as exc:
        raise SessionError(
            422, "pod does not fit", reason=f"calcScore failed {exc} for pod {_pod_name(data.pod)}"
        ) from None
    if len(ctx.pod.key) > 300 or len(ctx.pod.name) > 253 or len(ctx.pod.namespace) > 253:
        raise SessionError(400, "pod uid must be at most 300 characters, name and namespace at most 253")
    if len(data.node_name) > 253:
        raise SessionError(400, "node name must be at most 253 characters")
    return ctx


def _fit_on(
    sim: Simulator, ctx: PodContext, node_name: str, state: NodeState
) -> tuple[Sequence[DeviceUsage], list[list[dict]]]:
    """The node's devices after the pod and each container's devices; 422 when it does not fit."""
    if not ctx.pod.requests.has_requests:
        return state.devices, [[] for _ in ctx.pod.requests.containers]
    verdict = sim.evaluate(ctx, node_name, state)
    if not verdict.fits or verdict.fit is None or verdict.fit.usage_after is None:
        raise SessionError(422, "pod does not fit", reason=verdict.reason)
    return verdict.fit.usage_after, [[_container_json(d) for d in c] for c in verdict.fit.containers]


def _pod_name(pod: Mapping) -> str:
    meta = pod.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else ""
    return name if isinstance(name, str) else ""


@_retrying
def remove_placement(
    session_id: object, pod_uid: str, if_match: int | None, *, caller: Caller | None = None
) -> dict:
    with transaction.atomic():
        session = _live(session_id, lock=True, caller=caller)
        _check_revision(session, if_match)
        placement = SessionPlacement.objects.filter(session=session, pod_uid=pod_uid).first()
        if placement is None:
            raise SessionError(404, f"pod {pod_uid} is not placed in session {session.id}")
        if placement.delta:
            row = SessionNode.objects.get(session=session, name=placement.node_name)
            devices = list(row.devices)
            for d in devices:
                change = placement.delta.get(d["uuid"])
                if not change:
                    continue
                d["used"] -= change[0]
                d["usedmem"] -= change[1]
                d["usedcores"] -= change[2]
                in_use = list(d.get("migInUse") or [])
                for entry in change[3]:
                    if entry in in_use:
                        in_use.remove(entry)
                d["migInUse"] = in_use
                if len(change) > 4 and d.get("podInfos"):
                    infos = list(d["podInfos"])
                    for entry in change[4]:
                        if entry in infos:
                            infos.remove(entry)
                    d["podInfos"] = infos
            row.devices = devices
            row.save(update_fields=["devices"])
        placement.delete()
        _bump(session)
        return {"revision": session.revision}


def _snapshot(session: SimulationSession) -> dict:
    nodes = SessionNode.objects.filter(session=session).values(
        "name", "position", "node_group", "digest", "devices", "pair_scores", "cordoned", "inventory_error"
    )
    placements = SessionPlacement.objects.filter(session=session).values(
        "pod_uid", "namespace", "name", "node_name", "seq", "containers", "delta"
    )
    return {"nodes": list(nodes), "placements": list(placements)}


@_retrying
def fork(session_id: object, if_match: int | None, *, caller: Caller | None = None) -> dict:
    with transaction.atomic():
        session = _live(session_id, lock=True, caller=caller)
        _check_revision(session, if_match)
        if session.depth >= MAX_DEPTH:
            raise SessionError(409, f"checkpoint depth limit {MAX_DEPTH} reached: commit or revert first")
        rows = SessionNode.objects.filter(session=session).count()
        rows += SessionPlacement.objects.filter(session=session).count()
        budget = conf().session_max_checkpoint_rows
        if (session.depth + 1) * rows > budget:  # every checkpoint copies the session's rows
            raise SessionError(
                409, f"{session.depth + 1} checkpoints of {rows} rows exceed {budget}: commit or revert first"
            )
        SessionCheckpoint.objects.create(
            session=session, depth=session.depth + 1, snapshot=_snapshot(session)
        )
        _bump(session, depth=session.depth + 1)
        return {"depth": session.depth, "revision": session.revision}


@_retrying
def revert(session_id: object, if_match: int | None, *, caller: Caller | None = None) -> dict:
    with transaction.atomic():
        session = _live(session_id, lock=True, caller=caller)
        _check_revision(session, if_match)
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
        _bump(session, depth=session.depth - 1)
        return {"depth": session.depth, "revision": session.revision}


@_retrying
def commit(session_id: object, if_match: int | None, *, caller: Caller | None = None) -> dict:
    with transaction.atomic():
        session = _live(session_id, lock=True, caller=caller)
        _check_revision(session, if_match)
        if session.depth == 0:
            raise SessionError(409, "no checkpoint to commit: fork first")
        SessionCheckpoint.objects.filter(session=session, depth=session.depth).delete()
        _bump(session, depth=session.depth - 1)
        return {"depth": session.depth, "revision": session.revision}


def expire_sessions(now=None) -> int:
    """Delete sessions past their expiry (and, by cascade, their nodes, placements, checkpoints)."""
    now = now or timezone.now()
    deleted, per_model = SimulationSession.objects.filter(expires_at__lte=now).delete()
    return per_model.get(SimulationSession._meta.label, 0)

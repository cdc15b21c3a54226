"""Placing a pod on a session's node and removing it again.

The engine chooses the devices (``Simulator.evaluate`` on the node's current usage), so a placement
lands on exactly the devices HAMi's live scheduler would pick on a node with that usage. A node
enters the session with its first placement (from its live usage when the cluster has it, else
empty) and keeps its template's digest: a later call with a changed template is refused. Each
placement stores the usage delta it applied per device; removing it subtracts exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db import transaction

from hami_sim.engine.model import DeviceUsage, NodeState
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.engine.scheduler_filters import node_problem
from hami_sim.engine.simulate import PodContext, Simulator
from hami_sim.project.permissions import Caller
from hami_sim.runtime.simulator import get_simulator
from usage.live import live_state

from ..models import SessionNode, SessionPlacement
from .access import SessionError, check_revision, live, placement_json, retrying, touch
from .admission import admit_bytes, check_session_size, json_bytes
from .stored import container_json, node_digest, node_state, stored_device

__all__ = ["place_pod", "remove_placement"]


@dataclass(slots=True)
class _PlaceInput:
    pod: Mapping
    node: Mapping | None
    node_name: str


def _place_input(body: object) -> _PlaceInput:
    """The body of a placement: a pod and a Node object or the name of a node the session knows."""
    if not isinstance(body, Mapping):
        raise SessionError(400, "body must be a JSON object with pod and node (or nodeName)")
    pod = body.get("pod")
    if not isinstance(pod, Mapping):
        raise SessionError(400, "pod must be a Pod object")
    node = body.get("node")
    node_name = body.get("nodeName")
    if node is not None:
        return _PlaceInput(pod, node, _node_name(node, node_name))
    if not isinstance(node_name, str) or not node_name:
        raise SessionError(400, "give node (a Node object) or nodeName (a node the session already knows)")
    return _PlaceInput(pod, None, node_name)


def _node_name(node: Mapping, node_name: object) -> str:
    """The name of a Node object sent with a placement; 400 when it is malformed or its name
    disagrees with ``nodeName``."""
    problem = node_problem(node)
    if problem:
        raise SessionError(400, f"node {problem}")
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        raise SessionError(400, "node has no metadata.name")
    if node_name is not None and node_name != name:
        raise SessionError(400, f"nodeName {node_name!r} differs from node.metadata.name {name!r}")
    return name


def _delta(before: Sequence[DeviceUsage], after: Sequence[DeviceUsage]) -> dict:
    """Per changed device, what the placement added: ``[slots, memory, cores, MIG placements]`` and
    the pod infos it listed on the card, so a removal subtracts exactly that."""
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


def _starting_state(
    row: SessionNode | None, data: _PlaceInput, inventory, requests: bool
) -> tuple[NodeState, str]:
    """The node's state before this placement and its node group: the session's row when it has
    one, else the sent Node's (400 for an unknown name without a Node; 422 when the pod asks for
    devices and the node's inventory cannot be read)."""
    if row is not None:
        if row.inventory_error and requests:
            raise SessionError(422, "pod does not fit", reason=row.inventory_error)
        return node_state(row), row.node_group
    if data.node is None:
        raise SessionError(400, f"unknown nodeName {data.node_name!r}: send the Node object the first time")
    assert inventory is not None
    if inventory.error and requests:
        raise SessionError(422, "pod does not fit", reason=inventory.error)
    return _first_state(data.node_name, inventory, requests), inventory.node_group or ""


@retrying
def place_pod(
    session_id: object, body: object, if_match: int | None, *, caller: Caller | None = None
) -> tuple[int, dict]:
    """(201 or 200, placement body); raises ``SessionError`` for 4xx answers (nothing changed)."""
    data = _place_input(body)
    sim = get_simulator()
    ctx = _placed_pod(sim, data)
    pod_uid = ctx.pod.key
    digest = node_digest(data.node) if data.node is not None else ""
    inventory = sim.inventory(data.node) if data.node is not None else None  # outside the lock
    with transaction.atomic():
        session = live(session_id, lock=True, caller=caller)
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
            return 200, {**placement_json(existing), "revision": session.revision}
        check_revision(session, if_match)
        check_session_size(session, new_node=row is None)
        state, node_group = _starting_state(row, data, inventory, ctx.pod.requests.has_requests)
        after, containers = _fit_on(sim, ctx, data.node_name, state)
        delta = _delta(state.devices, after)
        devices = [stored_device(d) for d in after]
        growth = _placement_bytes(pod_uid, ctx.pod.namespace, ctx.pod.name, data.node_name, containers, delta)
        if row is None:
            growth += json_bytes(data.node_name, node_group, digest, devices, state.pair_scores)
        touch(session, stored_bytes=admit_bytes(session, growth))
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
        return 201, {**placement_json(placement), "revision": session.revision}


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
    return verdict.fit.usage_after, [[container_json(d) for d in c] for c in verdict.fit.containers]


def _pod_name(pod: Mapping) -> str:
    meta = pod.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else ""
    return name if isinstance(name, str) else ""


@retrying
def remove_placement(
    session_id: object, pod_uid: str, if_match: int | None, *, caller: Caller | None = None
) -> dict:
    """Take a placed pod off its node, subtracting exactly the usage it added."""
    with transaction.atomic():
        session = live(session_id, lock=True, caller=caller)
        check_revision(session, if_match)
        placement = SessionPlacement.objects.filter(session=session, pod_uid=pod_uid).first()
        if placement is None:
            raise SessionError(404, f"pod {pod_uid} is not placed in session {session.id}")
        if placement.delta:
            row = SessionNode.objects.get(session=session, name=placement.node_name)
            row.devices = [_undo(d, placement.delta.get(d["uuid"])) for d in row.devices]
            row.save(update_fields=["devices"])
        placement.delete()
        freed = _placement_bytes(
            placement.pod_uid,
            placement.namespace,
            placement.name,
            placement.node_name,
            placement.containers,
            placement.delta,
        )
        touch(session, stored_bytes=admit_bytes(session, -freed))
        return {"revision": session.revision}


def _placement_bytes(
    pod_uid: str, namespace: str, name: str, node: str, containers: object, delta: object
) -> int:
    """What one placement row stores, as ``SESSION_MAX_BYTES`` counts it."""
    return json_bytes(pod_uid, namespace, name, node, containers, delta)


def _undo(device: dict, change: list | None) -> dict:
    """A stored device with one placement's ``_delta`` entry subtracted (unchanged without one)."""
    if not change:
        return device
    device["used"] -= change[0]
    device["usedmem"] -= change[1]
    device["usedcores"] -= change[2]
    device["migInUse"] = _without(device.get("migInUse") or [], change[3])
    if len(change) > 4 and device.get("podInfos"):
        device["podInfos"] = _without(device["podInfos"], change[4])
    return device


def _without(entries: list, removed: list) -> list:
    """``entries`` less one occurrence of each of ``removed`` (that is there)."""
    out = list(entries)
    for entry in removed:
        if entry in out:
            out.remove(entry)
    return out

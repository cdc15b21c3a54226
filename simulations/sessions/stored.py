"""A session's devices as stored in its rows and as the API shows them.

A session node keeps its devices as JSON (``SessionNode.devices``): the engine's ``DeviceUsage``
with everything a later fit reads (MIG profiles and placements, vendor data, the pods on a card),
so a placement on it lands exactly as on the first. The public shape drops what only the engine
needs; ``device_json`` is shared with the estimate API.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import orjson

from hami_sim.engine.model import ContainerDevice, DeviceUsage, MigPlacement, MigProfile, NodeState

from ..models import SessionNode

__all__ = ["device_json", "stored_device", "public_device", "node_state", "container_json", "node_digest"]


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


def stored_device(dev: DeviceUsage) -> dict:
    """A device as a session node row keeps it: the public shape plus what a later fit reads."""
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


def public_device(d: Mapping) -> dict:
    """A stored device as the API shows it."""
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


def node_state(row: SessionNode) -> NodeState:
    """A session node row as the engine's ``NodeState`` (its devices with their current usage)."""
    return NodeState(
        row.name,
        [_device_from_stored(d) for d in row.devices],
        {k: dict(v) for k, v in (row.pair_scores or {}).items()},
        frozenset(row.cordoned or ()),
    )


def container_json(dev: ContainerDevice) -> dict:
    """The device a container got, as a placement records it."""
    out = {"uuid": dev.uuid, "type": dev.type, "usedmem": dev.usedmem, "usedcores": dev.usedcores}
    if dev.mig_profile:
        out["migProfile"] = dev.mig_profile
        if dev.mig_placement is not None:
            out["migPlacement"] = {"start": dev.mig_placement.start, "size": dev.mig_placement.size}
    return out


def node_digest(node: Mapping) -> str:
    """A Node's identity: a session refuses a template that changed since it first saw the node."""
    return hashlib.sha256(orjson.dumps(node, option=orjson.OPT_SORT_KEYS)).hexdigest()

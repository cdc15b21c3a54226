"""The answer of ``POST /api/v1/estimate``, compact: pods named once, options pointing at them.

Listing every pod id in every option twice (``scheduledPods`` and its node's ``pods``) and every
device's fixed fields on every new node made the answer of 100 node groups x 1,000 pods about 17 MB,
over ``MAX_ANSWER_BYTES``. The answer names the request's pods once (``pods``, request order); pod
lists are runs ``[first index, count]`` of that list (a Deployment's replicas are consecutive, so a
node's pods are mostly one or two runs); an option lists its new nodes' devices once as the template
has them, and each node only their usage, in the same order. Nothing is dropped: every pod's node
and every device's usage can be read back (``tests/estimate/answers.py`` does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from hami_sim.engine.estimate import (
    DIFFERENCES,
    EstimatedNode,
    EstimateResult,
    GroupOption,
    PendingPods,
    entry_ids,
)
from hami_sim.engine.model import DeviceUsage

from ..sessions import device_json
from .base import check_answer_size

Runs = list[list[int]]


class PodIndex:
    """The request's pod ids in order, and each id's position (what every run counts in)."""

    __slots__ = ("ids", "position")

    def __init__(self, pods: Sequence[PendingPods]) -> None:
        self.ids = [pid for entry in pods for pid in entry_ids(entry)]
        self.position = {pid: i for i, pid in enumerate(self.ids)}

    def runs(self, ids: Iterable[str]) -> Runs:
        """``ids`` (in their order) as runs ``[first, count]`` of consecutive request positions."""
        out: Runs = []
        position = self.position
        last = None
        for pid in ids:
            i = position[pid]
            if last is not None and i == last[0] + last[1]:
                last[1] += 1
            else:
                last = [i, 1]
                out.append(last)
        return out

    def by_reason(self, reasons: dict[str, str]) -> list[dict]:
        """``{pod: reason}`` as one entry per reason (first-seen order) with its pods as runs."""
        grouped: dict[str, list[str]] = {}
        for pid, reason in reasons.items():
            grouped.setdefault(reason, []).append(pid)
        return [{"reason": reason, "pods": self.runs(ids)} for reason, ids in grouped.items()]


_USAGE = frozenset(("used", "usedmem", "usedcores", "migInUse"))


def _template_devices(nodes: list[EstimatedNode]) -> list[dict]:
    """The new nodes' devices as the template has them, without usage: listed once per option, as
    every new node of a group is a copy of its template."""
    if not nodes:
        return []
    return [{k: v for k, v in device_json(dev).items() if k not in _USAGE} for dev in nodes[0].devices]


def _node_devices(devices: list[DeviceUsage], template: list[dict]) -> list[dict]:
    """A node's devices in the option's order: their usage, and any field that differs from the
    option's ``devices`` (none for a copy of the template; kept so nothing is lost if one does)."""
    out = []
    for i, dev in enumerate(devices):
        fixed = template[i] if i < len(template) else {}
        out.append({k: v for k, v in device_json(dev).items() if k in _USAGE or fixed.get(k) != v})
    return out


def _node_json(n: EstimatedNode, index: PodIndex, template: list[dict]) -> dict:
    requested = n.requested
    return {
        "name": n.name,
        "pods": index.runs(n.pods),
        "devices": _node_devices(n.devices, template),
        "requested": {"cpu": f"{requested.cpu}m", "memory": str(requested.memory), "pods": requested.pods},
    }


def option_json(o: GroupOption, index: PodIndex) -> dict:
    """One node group's option; pod lists are runs of the answer's ``pods``."""
    devices = _template_devices(o.nodes)
    out = {
        "nodeGroup": o.node_group,
        "nodeCount": o.node_count,
        "scheduledPods": index.runs(o.scheduled),
        "unschedulablePods": index.by_reason(o.unschedulable),
        "devices": devices,
        "nodes": [_node_json(n, index, devices) for n in o.nodes],
        "waste": {
            "cpu": round(o.waste.cpu, 6),
            "memory": round(o.waste.memory, 6),
            "gpuMemory": round(o.waste.gpu_memory, 6),
            "gpuCores": round(o.waste.gpu_cores, 6),
        },
        "nodeLimit": o.node_limit,
    }
    if o.daemon_pods:
        out["daemonSetPods"] = o.daemon_pods
    if o.skipped:
        out["skipped"] = o.skipped
    if o.timed_out:
        out["timedOut"] = True
    if o.on_existing:
        out["onExistingNodes"] = {name: index.runs(ids) for name, ids in o.on_existing.items()}
    return out


def _encoded_options(options: list[GroupOption], index: PodIndex) -> list[orjson.Fragment]:
    """Each option encoded on its own, refused (413) once they add up past ``MAX_ANSWER_BYTES``: built
    whole, a huge answer took a web worker to hundreds of MiB before it could be refused."""
    out, size = [], len(orjson.dumps(index.ids))
    for option in options:
        body = orjson.dumps(option_json(option, index))
        size += len(body)
        check_answer_size(size, at_least=True)
        out.append(orjson.Fragment(body))
    return out


def result_json(result: EstimateResult, index: PodIndex) -> dict:
    """The answer for ``result``; ``index``: the request's pods (before any went to live nodes)."""
    plan = result.scale_up
    return {
        "pods": index.ids,
        "options": _encoded_options(result.options, index),
        "chosen": result.chosen,
        "explanation": result.explanation,
        "candidates": result.candidates,
        "scaleUp": None
        if plan is None
        else {
            "nodeGroup": plan.node_group,
            "estimatedNodes": plan.estimated,
            "nodeCount": plan.node_count,
            "cappedBy": plan.capped_by,
            "groups": [{"nodeGroup": n, "currentSize": c, "newSize": s} for n, c, s in plan.groups],
        },
        "binpacking": {
            "seconds": round(result.binpacking_seconds, 6),
            "maxBinpackingTimeExceeded": result.binpacking_time_exceeded,
            "timedOutGroups": [o.node_group for o in result.options if o.timed_out],
            "cutShortGroups": [o.node_group for o in result.options if o.cut_short],
        },
        "differencesFromCA": list(DIFFERENCES),
        "caVersion": result.ca_version,
        **_upcoming_json(result, index),
    }


def _upcoming_json(result: EstimateResult, index: PodIndex) -> dict:
    """``upcomingNodes`` (only when the request named some): each node and the pods it absorbed."""
    if result.upcoming is None:
        return {}
    nodes = [
        {
            "name": n.name,
            "nodeGroup": n.node_group,
            "pods": index.runs(n.pods),
            "devices": [device_json(d) for d in n.devices],
        }
        for n in result.upcoming
    ]
    return {"upcomingNodes": {"scheduledPods": index.runs(result.upcoming_scheduled), "nodes": nodes}}

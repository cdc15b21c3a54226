"""One filter answer as the fields of a ``Decision`` row: engine objects to plain JSON-able dicts.

Kept apart from the recorder's queue because the dashboard summarises an answer it shows without
recording it, and because the summary's bounds (``DECISION_LISTED_NODES``, ``DECISION_DETAIL_NODES``,
folded rows for the rest) are what keep a row's size independent of the cluster's.
"""

from __future__ import annotations

import hashlib
from collections import Counter as Tally
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson
from django.utils import timezone

from hami_sim.engine.fit import PodFit
from hami_sim.engine.reasons import parse_reason
from hami_sim.engine.requests import PodView
from hami_sim.engine.simulate import NodeVerdict
from hami_sim.project.conf import conf, judging_releases

from .models import Decision

__all__ = [
    "summarize",
    "fold_digest",
    "request_summary",
    "pod_spec",
    "MAX_REASON_CHARS",
    "MAX_FOLDED_ROWS",
    "MAX_POD_SPEC_BYTES",
]

MAX_REASON_CHARS = 2000
#: distinct (group, verdict, reason) rows kept for the nodes past ``DECISION_LISTED_NODES``
MAX_FOLDED_ROWS = 32
#: a pod whose kept spec (``pod_spec``) is larger is not kept: it cannot be judged again
MAX_POD_SPEC_BYTES = 16384
_SPEC_CONTAINERS = ("initContainers", "containers")


def _kept_containers(spec: Mapping) -> dict:
    """Each container list's names and resources (init containers apart, as HAMi counts them)."""
    return {
        key: [
            {"name": c.get("name") or "", "resources": c.get("resources") or {}}
            for c in spec[key]
            if isinstance(c, Mapping)
        ]
        for key in _SPEC_CONTAINERS
        if isinstance(spec.get(key), list)
    }


def pod_spec(pod: object) -> dict:
    """What a decision keeps of its pod to judge it again under another HAMi release (the upgrade
    page): identity, annotations (HAMi's policies and selections) and each container's name and
    resources, init containers apart. ``{}`` for a pod of another shape or over ``MAX_POD_SPEC_BYTES``."""
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
        return {}
    kept = {
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "annotations") if k in meta},
        "spec": _kept_containers(spec),
    }
    try:
        size = len(orjson.dumps(kept))
    except (TypeError, orjson.JSONEncodeError):
        return {}
    return kept if size <= MAX_POD_SPEC_BYTES else {}


def request_summary(pod: PodView) -> list[dict]:
    """What each container asks of each device vendor, as HAMi reads it (the pod page's request table)."""
    out = []
    for container in pod.requests.containers:
        out.append(
            {
                vtype: {
                    "nums": req.nums,
                    "memreq": req.memreq,
                    "mem_percentage_req": req.mem_percentage_req,
                    "coresreq": req.coresreq,
                }
                for vtype, req in container.items()
            }
        )
    return out


def _node_detail(node: Mapping, verdict: NodeVerdict, inventory_of, with_devices: bool = True) -> dict:
    """Per-node verdict plus every device of the node: chosen / free / rejected (with the rule).

    ``with_devices=False`` (nodes past ``DECISION_DETAIL_NODES``) keeps the verdict and reason only:
    rows averaged 89 KB with every device of every node.
    """
    fit = verdict.fit
    device_reasons = fit.device_reasons if fit is not None else {}
    devices: list[dict] = []
    if with_devices and not verdict.unresolvable and (fit is not None or device_reasons):
        devices = _device_rows(node, verdict, _chosen_devices(fit), device_reasons, inventory_of)
    return {
        "name": verdict.name,
        "group": verdict.node_group or "",
        "source": verdict.source,
        "fits": verdict.fits,
        "unresolvable": verdict.unresolvable,
        "reason": verdict.reason[:MAX_REASON_CHARS],
        "score": round(float(verdict.score_after), 4),
        "failed_container": fit.failed_container if fit is not None else -1,
        "devices": devices,
    }


def _chosen_devices(fit: PodFit | None) -> dict[str, dict]:
    """The devices the fit placed containers on: memory and cores used, and by which containers.
    (Given the fit read once: a shared fit is relabelled for its node each time it is read.)"""
    chosen: dict[str, dict] = {}
    if fit is None:
        return chosen
    for ci, container in enumerate(fit.containers):
        for dev in container:
            slot = chosen.setdefault(dev.uuid, {"usedmem": 0, "usedcores": 0, "containers": []})
            slot["usedmem"] += dev.usedmem
            slot["usedcores"] += dev.usedcores
            slot["containers"].append(ci)
    return chosen


def _device_rows(
    node: Mapping, verdict: NodeVerdict, chosen: dict[str, dict], device_reasons: Mapping, inventory_of
) -> list[dict]:
    """Every device of the node's inventory with what the answer did with it."""
    try:
        inventory = inventory_of(node)
        infos = inventory.devices if not inventory.error else ()
    except Exception:  # an inventory that cannot be rebuilt only loses the device detail
        infos = ()
    rows = []
    for info in infos:
        row = {
            "uuid": info.id,
            "index": info.index,
            "type": info.type,
            "devmem": info.devmem,
            "devcore": info.devcore,
            "count": info.count,
            "numa": info.numa,
            "health": info.health,
            "mode": info.mode,
        }
        if info.id in chosen:
            row.update(verdict="chosen", reason="", **chosen[info.id])
        elif info.id in device_reasons:
            row.update(verdict="rejected", reason=device_reasons[info.id])
        else:
            row.update(verdict="free" if verdict.fits else "unchecked", reason="")
        rows.append(row)
    return rows


def _folded_details(verdicts: Sequence[NodeVerdict]) -> list[dict]:
    """The nodes past ``DECISION_LISTED_NODES``, one row per (group, verdict, reason) with its count.

    CA may send thousands of nodes in one call and each listed node costs ~180 bytes of the row, so a
    row's size would follow the cluster's; folded, it is bounded. The verdict counts and groups of
    the decision are still taken from every node (``summarize``).
    """
    if not verdicts:
        return []
    counts = Tally(
        (v.node_group or "", v.source, v.fits, v.unresolvable, v.reason[:MAX_REASON_CHARS]) for v in verdicts
    )
    kept = counts.most_common(MAX_FOLDED_ROWS)
    rest = sum(counts.values()) - sum(n for _, n in kept)
    rows = [_folded_row(f"{n} more node(s)", n, *verdict) for verdict, n in kept]
    if rest:
        rows.append(_folded_row(f"{rest} more node(s) with other verdicts", rest, "", "", False, False, ""))
    return rows


def _folded_row(
    name: str, folded: int, group: str, source: str, fits: bool, unresolvable: bool, reason: str
) -> dict:
    """A node row of a decision that stands for ``folded`` nodes (no score, no devices)."""
    return {
        "name": name,
        "group": group,
        "source": source,
        "fits": fits,
        "unresolvable": unresolvable,
        "reason": reason,
        "score": 0.0,
        "failed_container": -1,
        "devices": [],
        "folded": folded,
    }


def _reason_names(reason: str) -> list[tuple[str, int]]:
    parsed = parse_reason(reason)
    return list(parsed.items()) if parsed else [(reason, 1)]


def fold_digest(pod: PodView, verdicts: Sequence[NodeVerdict], caller: str) -> str:
    """Identity of a question: pod, caller (and session), the set of (group, fits, reason), and the
    HAMi and CA releases that judged it (a restart under another ``HAMI_VERSION`` starts new rows).

    Template node names change every CA loop (``template-node-for-<group>-<random>``), so nodes are
    identified by their node group; a node without one by its name.
    """
    caller, _, session = caller.partition(":")
    fold = sorted({(v.node_group or v.name, v.fits, v.reason) for v in verdicts})
    releases = judging_releases()
    return hashlib.blake2b(
        orjson.dumps([pod.key, caller, session, fold, releases["hami_release"], releases["ca_release"]]),
        digest_size=20,
    ).hexdigest()


def _details(nodes: Sequence[Mapping], answered: list[NodeVerdict], inventory_of) -> list[dict]:
    """The listed nodes (the first ``DECISION_DETAIL_NODES`` with their devices), then the rest folded."""
    settings_now = conf()
    listed = answered[: settings_now.decision_listed_nodes]
    with_devices = min(settings_now.decision_detail_nodes, len(nodes))  # queued records hold no more
    details = [
        _node_detail(nodes[i] if i < with_devices else {}, v, inventory_of, with_devices=i < with_devices)
        for i, v in enumerate(listed)
    ]
    return details + _folded_details(answered[len(listed) :])


def _overall_verdict(answered: Sequence[NodeVerdict]) -> str:
    """FIT when any node fits, UNRESOLVABLE when every node is, else NO_FIT."""
    if any(v.fits for v in answered):
        return Decision.Verdict.FIT
    if answered and all(v.unresolvable for v in answered):
        return Decision.Verdict.UNRESOLVABLE
    return Decision.Verdict.NO_FIT


def _top_reason(answered: Sequence[NodeVerdict]) -> str:
    """The rule that rejected the most nodes (each reason parsed into its rules and their counts)."""
    tally: Tally[str] = Tally()
    for v in answered:
        if not v.fits and v.reason:
            for name, n in _reason_names(v.reason[:MAX_REASON_CHARS]):
                tally[name] += n
    return tally.most_common(1)[0][0][:300] if tally else ""


def summarize(
    pod: PodView,
    nodes: Sequence[Mapping],
    verdicts: Sequence[NodeVerdict],
    *,
    caller: str,
    seconds: float,
    policies: Mapping[str, Any] | None = None,
    at: datetime | None = None,
    inventory_of=None,
    spec: Mapping | None = None,
) -> dict:
    """The ``Decision`` fields for one answer, plus its fold digest; ``spec`` is the pod as asked
    (its ``pod_spec`` is kept)."""
    if inventory_of is None:
        from hami_sim.runtime.simulator import get_simulator

        inventory_of = get_simulator().inventory
    caller, _, session = caller.partition(":")
    answered = list(verdicts)
    return {
        "digest": fold_digest(pod, verdicts, f"{caller}:{session}" if session else caller),
        "pod_uid": pod.uid,
        "pod_namespace": pod.namespace,
        "pod_name": pod.name,
        "pod_owner": pod.owner,
        "caller": caller if caller in Decision.Caller.values else Decision.Caller.EXTENDER,
        "session": session,
        "verdict": _overall_verdict(answered),
        "node_groups": sorted({v.node_group or v.name for v in answered}),
        "fit_groups": sorted({v.node_group or v.name for v in answered if v.fits}),
        "node_count": len(answered),
        "fit_count": sum(1 for v in answered if v.fits),
        "top_reason": _top_reason(answered),
        "request": request_summary(pod),
        "nodes": _details(nodes, answered, inventory_of),
        "policies": dict(policies or {}),
        **judging_releases(),
        "pod_spec": pod_spec(spec),
        "latency_ms": round(seconds * 1000, 3),
        "first_seen": at or timezone.now(),
        "last_seen": at or timezone.now(),
    }

"""Parse CA and scheduler event messages and CA's status ConfigMap into structure (no Django here).

Message shapes (cluster-autoscaler ``core/scaleup``, kube-scheduler ``FitError``):

- ``TriggeredScaleUp``: ``pod triggered scale-up: [{gpu-a10 0->1 (max: 10)} {gpu-t4 2->3 (max: 5)}]``
- ``NotTriggerScaleUp``: ``pod didn't trigger scale-up: 1 max node group size reached, 2 node(s)
  didn't match Pod's node affinity/selector`` (newer CAs add ``(it wouldn't fit if a new node is
  added)`` before the colon)
- ``FailedScheduling``: ``0/5 nodes are available: 1 Insufficient cpu, 4 2/2 CardInsufficientMemory.
  preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.`` (HAMi's own
  scheduler writes ``0/1 nodes available: 1 node unregistered``)

Reasons are ``<count> <text>`` joined by ``", "``; a reason text may itself contain ``", "`` (taint
lists), so we split only where the next part starts with a count.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import yaml

from hami_sim.project import safeyaml

__all__ = [
    "parse_reason_counts",
    "parse_triggered_scale_up",
    "parse_not_trigger_scale_up",
    "parse_failed_scheduling",
    "parse_event_message",
    "parse_autoscaler_status",
]

_SCALE_UP = re.compile(r"\{(\S+) (\d+)->(\d+) \(max: (\d+)\)\}")
_TRIGGERED = re.compile(r"^pod triggered scale-up: \[(.*)\]\s*$", re.S)
_NOT_TRIGGERED = re.compile(r"^pod didn't trigger scale-up(?: \(([^)]*)\))?:\s*(.*?)\s*$", re.S)
_FAILED = re.compile(
    r"^(\d+)/(\d+) nodes (?:are )?available(?::\s*(.*?))?\.?(?:\s+preemption:\s*(.*?))?\s*$", re.S
)
_SPLIT = re.compile(r",\s+(?=\d+ )")
_COUNTED = re.compile(r"^(\d+) (.+)$", re.S)


def parse_reason_counts(text: str) -> list[dict[str, Any]]:
    """``"1 max node group size reached, 2 node(s) had taint {a: b, c: d}"`` -> [{count, reason}]."""
    text = (text or "").strip().rstrip(".")
    if not text:
        return []
    out = []
    for part in _SPLIT.split(text):
        part = part.strip()
        m = _COUNTED.match(part)
        if m:
            out.append({"count": int(m.group(1)), "reason": m.group(2).strip()})
        elif part:
            out.append({"count": None, "reason": part})
    return out


def parse_triggered_scale_up(message: str) -> dict[str, Any] | None:
    m = _TRIGGERED.match(message.strip())
    if not m:
        return None
    groups = [
        {"group": g, "from": int(cur), "to": int(new), "max": int(mx)}
        for g, cur, new, mx in _SCALE_UP.findall(m.group(1))
    ]
    return {"scaleUps": groups}


def parse_not_trigger_scale_up(message: str) -> dict[str, Any] | None:
    m = _NOT_TRIGGERED.match(message.strip())
    if not m:
        return None
    return {"note": m.group(1) or "", "reasons": parse_reason_counts(m.group(2))}


def parse_failed_scheduling(message: str) -> dict[str, Any] | None:
    m = _FAILED.match(message.strip())
    if not m:
        return None
    out: dict[str, Any] = {
        "available": int(m.group(1)),
        "total": int(m.group(2)),
        "reasons": parse_reason_counts(m.group(3) or ""),
    }
    if m.group(4):
        pre = _FAILED.match(m.group(4).strip())
        out["preemption"] = (
            parse_reason_counts(pre.group(3) or "") if pre else [{"count": None, "reason": m.group(4)}]
        )
    return out


_PARSERS = {
    "TriggeredScaleUp": parse_triggered_scale_up,
    "NotTriggerScaleUp": parse_not_trigger_scale_up,
    "FailedScheduling": parse_failed_scheduling,
}


def parse_event_message(reason: str, message: str) -> tuple[dict[str, Any], list[str]]:
    """(structure, node groups named) for an event; unparsed messages give ``{"unparsed": True}``."""
    parser = _PARSERS.get(reason)
    parsed = parser(message or "") if parser else None
    if parsed is None:
        return {"unparsed": True}, []
    groups = [g["group"] for g in parsed.get("scaleUps", [])]
    return parsed, groups


def parse_autoscaler_status(text: str) -> tuple[dict[str, Any], str]:
    """CA's status ConfigMap (``status`` key): YAML since CA 1.30; older text is kept raw only.

    Returns (parsed mapping or {}, error text or "").
    """
    try:
        data = safeyaml.load(text or "")
    except yaml.YAMLError as exc:
        return {}, f"not YAML: {exc}".splitlines()[0]
    if not isinstance(data, dict):
        return {}, "not the YAML status format (CA < 1.30 writes plain text)"
    # YAML timestamps become datetimes; the JSON column wants strings
    return orjson.loads(orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS)), ""

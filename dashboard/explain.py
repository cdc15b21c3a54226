"""Turn a decision (and CA's events for the pod) into the sentence an engineer on call reads first.

Example: "Scaled group gpu-a10 (0->1): the pod needs 12000 MiB and 30% cores on 1 card; gpu-a10 fits
it on GPU 0 of template-node-for-gpu-a10-0; gpu-t4 cards have 15360 MiB but 1/1 CardInsufficientMemory."
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

__all__ = ["describe_request", "answer", "group_summaries"]

_UNSET_PERCENT = 101  # HAMi's "gpumem-percentage not set" sentinel


def _card_phrase(req: Mapping) -> str:
    nums = int(req.get("nums", 0))
    memreq = int(req.get("memreq", 0))
    pct = int(req.get("mem_percentage_req", _UNSET_PERCENT))
    cores = int(req.get("coresreq", 0))
    if memreq:
        mem = f"{memreq} MiB"
    elif pct not in (0, _UNSET_PERCENT):
        mem = f"{pct}% of the memory"
    else:
        mem = "all the memory"
    parts = [mem]
    if cores:
        parts.append(f"{cores}% cores")
    cards = "one card" if nums == 1 else f"each of {nums} cards"
    return f"{' and '.join(parts)} on {cards}"


def describe_request(request: Sequence[Mapping]) -> str:
    """``"12000 MiB and 30% cores on one card"``; containers joined with ``" + "``."""
    phrases = []
    for container in request:
        for vendor, req in container.items():
            phrase = _card_phrase(req)
            phrases.append(phrase if vendor == "NVIDIA" else f"{phrase} ({vendor})")
    return " + ".join(phrases) if phrases else "no HAMi-managed device"


def group_summaries(nodes: Iterable[Mapping]) -> list[dict]:
    """One entry per node group (node name when the node has none): fits?, reason, card memory sizes."""
    out: dict[str, dict] = {}
    for node in nodes:
        key = node.get("group") or node.get("name", "")
        entry = out.setdefault(
            key, {"group": key, "fits": False, "nodes": [], "reasons": [], "devmem": set()}
        )
        entry["nodes"].append(node.get("name", ""))
        if node.get("fits"):
            entry["fits"] = True
            entry.setdefault("chosen", [d for d in node.get("devices", []) if d.get("verdict") == "chosen"])
            entry.setdefault("chosen_node", node.get("name", ""))
        elif node.get("reason") and node["reason"] not in entry["reasons"]:
            entry["reasons"].append(node["reason"])
        for dev in node.get("devices", []):
            entry["devmem"].add(int(dev.get("devmem", 0)))
    return list(out.values())


def _why_not(entry: Mapping) -> str:
    reason = "; ".join(entry["reasons"]) or "no fitting node"
    if entry["devmem"]:
        sizes = "/".join(str(m) for m in sorted(entry["devmem"]))
        return f"{entry['group']} cards have {sizes} MiB but {reason}"
    return f"{entry['group']}: {reason}"


def _where(entry: Mapping) -> str:
    chosen = entry.get("chosen") or []
    if not chosen:
        return f"{entry['group']} fits it"
    cards = ", ".join(f"GPU {d.get('index', '?')}" for d in chosen)
    return f"{entry['group']} fits it on {cards} of {entry.get('chosen_node', '')}"


def answer(decision, events: Sequence = ()) -> str:
    """One sentence: what CA did (when we know it) and why, from hami-sim's per-group verdicts."""
    groups = group_summaries(decision.nodes or [])
    need = f"the pod needs {describe_request(decision.request or [])}"
    fits = [g for g in groups if g["fits"]]
    rejected = [g for g in groups if not g["fits"]]
    triggered = next((e for e in events if e.reason == "TriggeredScaleUp" and e.parsed.get("scaleUps")), None)
    not_triggered = next((e for e in events if e.reason == "NotTriggerScaleUp"), None)
    tail = [_where(g) for g in fits[:2]] + [_why_not(g) for g in rejected[:3]]
    if len(rejected) > 3:
        tail.append(f"{len(rejected) - 3} more group(s) rejected it")
    details = "; ".join([need, *tail])
    if triggered is not None:
        ups = ", ".join(f"{u['group']} ({u['from']}->{u['to']})" for u in triggered.parsed["scaleUps"])
        head = f"Scaled group {ups}"
        by_group = {g["group"]: g for g in groups}
        for up in triggered.parsed["scaleUps"]:
            entry = by_group.get(up["group"])
            if entry is not None and not entry["fits"]:
                # CA grew a group hami-sim rejected: a stale answer, or CA never asked us about it
                tail.insert(0, f"but hami-sim answered that {up['group']} cannot take it")
        details = "; ".join([need, *tail])
    elif not_triggered is not None:
        head = "CA did not scale up"
    elif fits:
        head = "Fits " + ", ".join(g["group"] for g in fits[:3]) + (" and more" if len(fits) > 3 else "")
    elif decision.verdict == "unresolvable":
        head = "No node group has a usable device inventory"
    else:
        head = "No node group can take this pod"
    return f"{head}: {details}."

"""Turn a filter decision (and CA's events for the pod) into the sentence an engineer on call reads first.

Example: "Scaled group gpu-a10 (0->1): the pod needs 12000 MiB and 30% cores on 1 card; gpu-a10 fits
it on GPU 0 of template-node-for-gpu-a10-0; gpu-t4 cards have 15360 MiB but 1/1 CardInsufficientMemory."

A gRPC expander call is another kind of decision and explains itself (``decisions.expander_calls``);
``decisions.kinds`` picks a decision's explanation. The request helpers here serve both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hami_sim.engine.names import TEMPLATE_PREFIX
from hami_sim.engine.vendors import default_word

__all__ = [
    "describe_request",
    "answer",
    "group_summaries",
    "outcome",
    "request_rows",
    "node_badge",
    "score_note",
]

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
    """``"12000 MiB and 30% cores on one card"``; containers joined with ``" + "``; a vendor other than
    the registry's default (HAMi's first, NVIDIA) is named after its phrase."""
    phrases = []
    default = default_word()
    for container in request:
        for vendor, req in container.items():
            phrase = _card_phrase(req)
            phrases.append(phrase if vendor == default else f"{phrase} ({vendor})")
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


def _triggered(events: Sequence):
    """CA's TriggeredScaleUp event for the pod that names the groups it grew, if any."""
    return next((e for e in events if e.reason == "TriggeredScaleUp" and e.parsed.get("scaleUps")), None)


def _not_triggered(events: Sequence) -> bool:
    return any(e.reason == "NotTriggerScaleUp" for e in events)


def _stale_answers(triggered, groups: Sequence[Mapping]) -> list[str]:
    """The groups CA grew that hami-sim rejected (a stale answer, or CA never asked us about them),
    the last first, as the sentence names them."""
    by_group = {g["group"]: g for g in groups}
    stale = [
        f"but hami-sim answered that {up['group']} cannot take it"
        for up in triggered.parsed["scaleUps"]
        if up["group"] in by_group and not by_group[up["group"]]["fits"]
    ]
    return stale[::-1]


def _head(decision, events: Sequence, triggered, fits: Sequence[Mapping]) -> str:
    """The sentence's first words: what CA did when its events say, else what hami-sim answered."""
    if triggered is not None:
        return "Scaled group " + ", ".join(
            f"{u['group']} ({u['from']}->{u['to']})" for u in triggered.parsed["scaleUps"]
        )
    if _not_triggered(events):
        return "CA did not scale up"
    if fits:
        return "Fits " + ", ".join(g["group"] for g in fits[:3]) + (" and more" if len(fits) > 3 else "")
    if decision.verdict == "unresolvable":
        return "No node group has a usable device inventory"
    return "No node group can take this pod"


def answer(decision, events: Sequence = ()) -> str:
    """One sentence: what CA did (when we know it) and why, from hami-sim's per-group verdicts."""
    groups = group_summaries(decision.nodes or [])
    fits = [g for g in groups if g["fits"]]
    rejected = [g for g in groups if not g["fits"]]
    tail = [_where(g) for g in fits[:2]] + [_why_not(g) for g in rejected[:3]]
    if len(rejected) > 3:
        tail.append(f"{len(rejected) - 3} more group(s) rejected it")
    triggered = _triggered(events)
    if triggered is not None:
        tail = _stale_answers(triggered, groups) + tail
    need = f"the pod needs {describe_request(decision.request or [])}"
    return f"{_head(decision, events, triggered, fits)}: {'; '.join([need, *tail])}."


def _is_template(node_name: str) -> bool:
    return node_name.startswith(TEMPLATE_PREFIX)


def node_badge(node: Mapping) -> dict:
    """A node's row on the pod page: its badge (label, css), the reason beside it, and whether its
    score is shown. A CA template node stands for a node not yet made: it "fits a new node"."""
    if node.get("fits"):
        label = "fits a new node" if _is_template(str(node.get("name", ""))) else "fits this node"
        return {"badge": label, "badge_css": "v-fit", "badge_note": "", "scored": True}
    if node.get("unresolvable"):
        return {"badge": "unresolvable", "badge_css": "v-unresolvable", "badge_note": node.get("reason", "")}
    return {"badge": "failed", "badge_css": "v-no_fit", "badge_note": node.get("reason", "")}


def _fit_outcome(decision) -> tuple[str, str]:
    """The badge when CA's events say nothing: which node (existing, or a new one of which groups) fits."""
    nodes = [n for n in decision.nodes or [] if isinstance(n, Mapping) and n.get("fits")]
    existing = [n for n in nodes if not _is_template(str(n.get("name", "")))]
    if existing:
        return f"fits existing node {existing[0].get('name', '')}", "v-fit"
    if nodes:
        groups = sorted({str(n.get("group") or n.get("name", "")) for n in nodes})
        return f"fits a new node of {', '.join(groups)}", "v-fit"
    if decision.verdict == "unresolvable":
        return "unresolvable: no usable device inventory", "v-unresolvable"
    return "fits no node", "v-no_fit"


def outcome(decision, events: Sequence = ()) -> tuple[str, str]:
    """``(label, css)`` of the pod page's headline badge: what happened, not just the filter verdict.

    A pod that triggered a scale-up "fit" only a template node; saying "fit" read as "it ran here".
    """
    triggered = _triggered(events)
    if triggered is not None:
        groups = ", ".join(u["group"] for u in triggered.parsed["scaleUps"])
        return f"triggered scale-up of {groups}", "v-scaled"
    if _not_triggered(events):
        return "CA did not scale up", "v-no_fit"
    return _fit_outcome(decision)


#: HAMi's per-container request fields, as the pod page names them (unknown keys are shown as is).
_KNOWN_FIELDS = frozenset({"nums", "memreq", "coresreq", "mem_percentage_req"})


def _number(req: Mapping, key: str, default: int = 0) -> int:
    return int(req.get(key, default) or 0)


def _memory_field(req: Mapping) -> tuple[str, str]:
    """Memory per device: MiB when asked, else a percentage (when set: HAMi stores 101 for "no
    percentage asked"), else the whole device."""
    memreq = _number(req, "memreq")
    if memreq:
        return "memory per device", f"{memreq} MiB"
    pct = _number(req, "mem_percentage_req", _UNSET_PERCENT)
    return "memory per device", f"{pct}% of each device" if pct not in (
        0,
        _UNSET_PERCENT,
    ) else "the whole device"


def _request_fields(req: Mapping) -> list[tuple[str, str]]:
    """``(label, value)`` pairs of one vendor's request, HAMi's fields first, unknown keys as is."""
    cores = _number(req, "coresreq")
    fields = [
        ("devices", str(_number(req, "nums"))),
        _memory_field(req),
        ("cores per device", f"{cores}%" if cores else "any share (0% asked)"),
    ]
    return fields + [(str(k), str(v)) for k, v in req.items() if k not in _KNOWN_FIELDS]


def request_rows(container: Mapping) -> list[dict]:
    """One row per vendor a container asks for, with readable fields instead of HAMi's struct."""
    return [
        {"vendor": vendor, "fields": _request_fields(req), "summary": _card_phrase(req)}
        for vendor, req in container.items()
        if isinstance(req, Mapping)
    ]


def score_note(policy: str | None) -> str:
    """The sentence under a score column: what the number is and which end HAMi prefers."""
    base = (
        "Score: HAMi's node score after placing the pod, 10 × (share of device slots used + share of "
        "cores used + share of memory used) over the node's devices, so 0 to 30; some vendors add "
        "their own term (MetaX sGPU: ±10000 × its topology score)."
    )
    if policy == "spread":
        prefer = " Node policy spread: HAMi prefers the lowest score (the emptiest node)."
    elif policy == "binpack":
        prefer = " Node policy binpack: HAMi prefers the highest score (the fullest node)."
    else:
        prefer = " Under binpack HAMi prefers the highest score, under spread the lowest."
    return base + prefer + " The bar places each fitting node between the lowest and highest score shown."

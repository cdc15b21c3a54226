"""Turn a decision (and CA's events for the pod) into the sentence an engineer on call reads first.

Example: "Scaled group gpu-a10 (0->1): the pod needs 12000 MiB and 30% cores on 1 card; gpu-a10 fits
it on GPU 0 of template-node-for-gpu-a10-0; gpu-t4 cards have 15360 MiB but 1/1 CardInsufficientMemory."
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hami_sim.engine.names import TEMPLATE_PREFIX

__all__ = [
    "describe_request",
    "answer",
    "group_summaries",
    "outcome",
    "request_rows",
    "node_fit_label",
    "score_note",
]

_UNSET_PERCENT = 101  # HAMi's "gpumem-percentage not set" sentinel


#: ``Decision.caller`` of CA's gRPC expander calls (one line per scale-up option)
EXPANDER = "expander"


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


def _expander_answer(decision) -> str:
    """A gRPC expander call: which of CA's scale-up options hami-sim kept (each row says why)."""
    nodes = [n for n in decision.nodes or [] if isinstance(n, Mapping)]
    kept = [str(n.get("group") or n.get("name", "")) for n in nodes if n.get("fits")]
    head = (
        f"The gRPC expander kept {', '.join(kept)}"
        if kept
        else "The gRPC expander kept no option, so CA does not scale up in this loop"
    )
    wire = (decision.policies or {}).get("wire") if isinstance(decision.policies, Mapping) else None
    form = f" (CA's request form: {wire})" if wire else ""
    unjudged = [n for n in nodes if n.get("unresolvable")]
    if unjudged:
        fate = "kept" if all(n.get("fits") for n in unjudged) else "dropped (EXPANDER_UNJUDGED=drop)"
        form += f"; {len(unjudged)} option(s) could not be judged and were {fate}"
    return f"{head}, of {len(nodes)} scale-up option(s) CA offered{form}; each option's reason is below."


def answer(decision, events: Sequence = ()) -> str:
    """One sentence: what CA did (when we know it) and why, from hami-sim's per-group verdicts."""
    if decision.caller == EXPANDER:
        return _expander_answer(decision)
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


def _is_template(node_name: str) -> bool:
    return node_name.startswith(TEMPLATE_PREFIX)


def node_fit_label(node: Mapping) -> str:
    """What "fits" means for this node: a CA template node stands for a node not yet made; a gRPC
    expander line is one of CA's scale-up options, kept."""
    if node.get("source") == EXPANDER:
        return "kept"
    return "fits a new node" if _is_template(str(node.get("name", ""))) else "fits this node"


def node_miss_label(node: Mapping) -> str:
    """The badge of a node that does not fit: an expander option is dropped, not failed."""
    return "dropped" if node.get("source") == EXPANDER else "failed"


def outcome(decision, events: Sequence = ()) -> tuple[str, str]:
    """``(label, css)`` of the pod page's headline badge: what happened, not just the filter verdict.

    A pod that triggered a scale-up "fit" only a template node; saying "fit" read as "it ran here".
    """
    if decision.caller == EXPANDER:
        kept = [
            str(n.get("group", "")) for n in decision.nodes or [] if isinstance(n, Mapping) and n.get("fits")
        ]
        return (
            (f"expander kept {', '.join(kept)}", "v-fit") if kept else ("expander kept no option", "v-no_fit")
        )
    triggered = next((e for e in events if e.reason == "TriggeredScaleUp" and e.parsed.get("scaleUps")), None)
    if triggered is not None:
        groups = ", ".join(u["group"] for u in triggered.parsed["scaleUps"])
        return f"triggered scale-up of {groups}", "v-scaled"
    if any(e.reason == "NotTriggerScaleUp" for e in events):
        return "CA did not scale up", "v-no_fit"
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


#: HAMi's per-container request fields, as the pod page names them (unknown keys are shown as is).
_REQUEST_FIELDS = (("nums", "devices"), ("memreq", "memory per device"), ("coresreq", "cores per device"))


def request_rows(container: Mapping) -> list[dict]:
    """One row per vendor a container asks for, with readable fields instead of HAMi's struct.

    ``mem_percentage_req`` is shown only when set: HAMi stores 101 for "no percentage asked".
    """
    rows = []
    for vendor, req in container.items():
        if not isinstance(req, Mapping):
            continue
        fields = []
        for key, label in _REQUEST_FIELDS:
            value = int(req.get(key, 0) or 0)
            if key == "nums":
                fields.append((label, str(value)))
            elif key == "memreq" and value:
                fields.append((label, f"{value} MiB"))
            elif key == "coresreq":
                fields.append((label, f"{value}%" if value else "any share (0% asked)"))
        pct = int(req.get("mem_percentage_req", _UNSET_PERCENT) or 0)
        if not int(req.get("memreq", 0) or 0):
            memory = f"{pct}% of each device" if pct not in (0, _UNSET_PERCENT) else "the whole device"
            fields.insert(1, ("memory per device", memory))
        known = {key for key, _ in _REQUEST_FIELDS} | {"mem_percentage_req"}
        fields += [(str(k), str(v)) for k, v in req.items() if k not in known]
        rows.append({"vendor": vendor, "fields": fields, "summary": _card_phrase(req)})
    return rows


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

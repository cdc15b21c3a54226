"""The sentence an estimate answers with: why the chain chose its option, what the other options were
and why the rest were not options. Text only: no decision is made here."""

from __future__ import annotations

from collections import Counter

from .ca_expanders import WASTE_SCORES, Expander
from .results import GroupOption

__all__ = ["chain_explanation", "why_not"]


def _scores(option: GroupOption, names: tuple[str, ...]) -> str:
    """The score of each waste expander in the chain, named with what it sums: a least-waste score is
    two shares added (0 to 2), never one share, so the reader is not left to guess which."""
    scores = [
        f"{name} score {score(option):.3f} = {summed}"
        for name, (score, summed) in WASTE_SCORES.items()
        if name in names
    ]
    return f" ({'; '.join(scores)})" if scores else ""


def _describe(option: GroupOption, names: tuple[str, ...]) -> str:
    total = len(option.scheduled) + len(option.unschedulable)
    w = option.waste
    return (
        f"{option.node_group!r}: {option.node_count} new node(s) for {len(option.scheduled)}/{total} pod(s), "
        f"waste shares cpu {w.cpu:.3f}, memory {w.memory:.3f}, gpuMemory {w.gpu_memory:.3f}, "
        f"gpuCores {w.gpu_cores:.3f}{_scores(option, names)}"
    )


def why_not(option: GroupOption) -> str:
    if option.skipped:
        return f"{option.node_group!r}: skipped ({option.skipped})"
    reasons = Counter(option.unschedulable.values())
    if not reasons:
        return f"{option.node_group!r}: no pods to place"
    reason, count = reasons.most_common(1)[0]
    return f"{option.node_group!r}: no pod fits ({count} pod(s): {reason})"


def chain_explanation(
    chosen: GroupOption,
    viable: list[GroupOption],
    rejected: list[GroupOption],
    expander: Expander,
    steps: list[str],
    candidates: list[str],
) -> str:
    names = tuple(expander.names)
    parts = [f"Expander {','.join(names)} chose {_describe(chosen, names)}."]
    if len(viable) == 1:
        parts.append("It was the only node group that could schedule any pod.")
    else:
        parts.append("Steps: " + "; ".join(steps) + ".")
        if len(candidates) > 1:
            how = f"seeded pick (randomSeed {expander.seed})" if expander.seed is not None else "the first"
            parts.append(
                f"CA picks at random among {', '.join(repr(c) for c in candidates)}; this answer takes {how}."
            )
        others = [_describe(o, names) for o in viable if o is not chosen]
        parts.append("Other options: " + "; ".join(others) + ".")
    if rejected:
        parts.append("Not options: " + "; ".join(why_not(o) for o in rejected) + ".")
    unsched = len(chosen.unschedulable)
    if unsched:
        parts.append(f"{unsched} pod(s) stay pending even with this scale-up.")
    return " ".join(parts)

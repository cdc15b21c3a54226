"""CA's chain strategy over the options: each expander of ``--expander=a,b`` narrows them; one left
wins, else CA's fallback picks at random among the rest."""

from __future__ import annotations

import random

from .ca_expanders import Expander, expander_filter, pick_option
from .explain import chain_explanation, why_not
from .results import GroupOption

__all__ = ["choose"]


def choose(options: list[GroupOption], expander: Expander) -> tuple[GroupOption | None, list[str], str]:
    """CA's chain strategy: each filter narrows the options; one left wins, else random picks among
    the rest. Returns (chosen, the candidates random picked from, the explanation)."""
    viable = [o for o in options if _viable(o)]
    rejected = [o for o in options if not _viable(o)]
    if not viable:
        detail = "; ".join(why_not(o) for o in rejected) or "no node groups given"
        return None, [], f"No node group can schedule any pending pod. {detail}."
    rng = random.Random(expander.seed) if expander.seed is not None else None
    remaining, candidates, steps = _run_chain(viable, expander, rng)
    if not remaining:  # an empty answer from the grpc expander: CA does not scale up this loop
        return None, [], f"Expander {','.join(expander.names)} kept no option: " + "; ".join(steps) + "."
    if len(remaining) > 1:  # CA's fallback strategy: random among the rest
        candidates = [o.node_group for o in remaining]
        remaining = [pick_option(remaining, rng)]
    chosen = remaining[0]
    return chosen, candidates, chain_explanation(chosen, viable, rejected, expander, steps, candidates)


def _viable(option: GroupOption) -> bool:
    """An option CA's expanders see: it schedules a pod on new nodes, and was packed (not skipped)."""
    return bool(option.scheduled) and option.node_count > 0 and not option.skipped


def _run_chain(
    viable: list[GroupOption], expander: Expander, rng: random.Random | None
) -> tuple[list[GroupOption], list[str], list[str]]:
    """The chain's filters in order until one option is left or none: (the options kept, the ones
    ``random`` picked among, one step line per filter run)."""
    remaining = viable
    steps: list[str] = []
    candidates: list[str] = []
    for name in expander.names:
        before = remaining
        remaining = expander_filter(name, remaining, expander, rng)
        steps.append(f"{name} kept {len(remaining)} of {len(before)}")
        if not remaining:
            break
        if name == "random":
            candidates = [o.node_group for o in before]
        if len(remaining) == 1:
            break
    return remaining, candidates, steps

"""Each kind of decision and how its page explains it: a filter answer (the extender, sessions, the
estimate, the what-if page) or a gRPC expander call. The one place that tells them apart."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import expander_calls, explain
from .models import Decision

__all__ = ["Explanation", "FILTER", "EXPANDER", "explanation_of"]


@dataclass(frozen=True, slots=True)
class Explanation:
    #: ``(decision, CA's events for the pod) -> the sentence read first``
    answer: Callable[[Decision, Sequence], str]
    #: ``(decision, events) -> (label, css)`` of the headline badge
    outcome: Callable[[Decision, Sequence], tuple[str, str]]
    #: ``node line -> {"badge", "badge_css", "badge_note", "scored"?}`` of its row on the page
    row: Callable[[Mapping], dict]
    #: whether its lines are nodes with devices (the node group x device heatmap and table); an
    #: expander call's lines are scale-up options, whose only "device" would be a made-up column
    devices: bool = True


FILTER = Explanation(explain.answer, explain.outcome, explain.node_badge)
EXPANDER = Explanation(
    expander_calls.answer, expander_calls.outcome, expander_calls.option_badge, devices=False
)

_BY_CALLER = {Decision.Caller.EXPANDER: EXPANDER}


def explanation_of(decision: Decision) -> Explanation:
    """The explanation of the decision's kind (every caller but the expander asked a filter question)."""
    return _BY_CALLER.get(decision.caller, FILTER)

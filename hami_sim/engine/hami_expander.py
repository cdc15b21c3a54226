"""hami-sim's expander step: which of CA's scale-up options to keep, from their HAMi packings.

One home for the rule both callers apply: the gRPC expander (``simulations.grpcexpander``), which
answers CA's ``BestOptions`` calls, and the estimator's ``grpc`` step in an expander chain
(``grpc,least-waste``), which answers "what would CA with hami-sim's expander choose". Each option is
summed up as an :class:`OptionVerdict` (pods placed of those it carries, nodes used, GPU waste) by
:func:`packed` from the estimator's :class:`~hami_sim.engine.estimate.GroupOption`, and
:func:`choose` keeps the ones placing the most pods.

The answer fails open: an option hami-sim cannot judge (an unknown group, a group without a device
profile, a template it cannot decode or pack, one copied from a node with an unhealthy card, the
profile catalog never loaded) is kept with its reason by default, because CA reads an empty answer
as "no scale-up" and an option we do not understand is not one HAMi's rules rule out. ``drop`` (the
``EXPANDER_UNJUDGED`` setting) drops them instead, the strict mode.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the estimator imports this module; only its type is needed here
    from .estimate import GroupOption

__all__ = [
    "RETURN_MODES",
    "UNJUDGED_POLICIES",
    "UNJUDGED_REASONS",
    "Packed",
    "OptionVerdict",
    "packed",
    "choose",
    "keep_options",
    "unjudged_head",
]

#: what the step answers: every option placing the most pods (ties go to CA's next expander), or
#: the one of those with the least GPU waste
RETURN_MODES = ("most-placed", "least-gpu-waste")
#: what becomes of an option hami-sim cannot judge
UNJUDGED_POLICIES = ("keep", "drop")
#: why an option could not be judged (the ``reason`` label of the unjudged-options counter)
UNJUDGED_REASONS = (
    "bad-option",  # no node group id, or a nodeCount that is no positive number
    "undecodable-pod",  # a pod's bytes are no v1.Pod
    "undecodable-template",  # the template's bytes are no v1.Node
    "no-template",  # no template Node in the request and no node group of that id
    "unknown-group",  # a template without a device registration, of no known node group
    "no-device-profile",  # a known group without a device profile, template unregistered
    "catalog-unavailable",  # the node groups were never loaded (database unreachable)
    "unhealthy-device",  # the template (copied from a real node) lists unhealthy cards
    "unusable-template",  # the estimator refuses the template (e.g. an unparsable quantity)
    "unusable-pod",  # the engine refuses a pod's spec or annotations (e.g. invalid scoring weights)
)

#: (placed, total, nodes used, gpu waste, reason when none placed, DaemonSet pods on each new node)
Packed = tuple[int, int, int, float, str, tuple[str, ...]]


@dataclass(slots=True)
class OptionVerdict:
    """What became of one option: kept or not, and why (the decision record's per-group line)."""

    node_group: str
    node_count: int
    debug: str = ""
    placed: int = 0
    total: int = 0
    nodes_used: int = 0
    gpu_waste: float = 0.0
    kept: bool = False
    unjudged: str = ""  # one of UNJUDGED_REASONS when hami-sim could not judge the option
    doubt: str = ""  # an UNJUDGED_REASONS code that applies only if the packing falls short
    reason: str = ""
    template: Mapping | None = None
    first_pod: Mapping | None = None
    daemon_pods: tuple[str, ...] = ()  # DaemonSet pods placed on each new node first

    def cannot_judge(self, code: str, detail: str) -> None:
        self.unjudged, self.reason = code, detail

    def fill(self, found: Packed) -> None:
        """Take a packing's numbers; a packing that falls short on a doubtful template is no proof."""
        self.placed, self.total, self.nodes_used, self.gpu_waste, self.reason, self.daemon_pods = found
        if self.doubt and self.placed < self.total:
            self.cannot_judge(self.doubt, _DOUBTS.get(self.doubt, self.doubt))


_DOUBTS = {
    "unknown-group": "the template carries no device registration and no node group matches it",
    "no-device-profile": "the node group has no device profile and the template no device registration",
    "catalog-unavailable": "the node groups could not be loaded (database unreachable) and the "
    "template carries no device registration",
    "unhealthy-device": "the template was copied from a node with unhealthy cards; a new node's "
    "cards are not",
}


def _why_none(unschedulable: Mapping[str, str]) -> str:
    reasons = Counter(unschedulable.values())
    if not reasons:
        return "no pods in the option"
    reason, count = reasons.most_common(1)[0]
    return f"no pod fits a new node ({count} pod(s): {reason})"


def packed(option: GroupOption) -> Packed:
    """An estimator option summed up for :func:`choose`."""
    placed = len(option.scheduled)
    return (
        placed,
        placed + len(option.unschedulable),
        option.node_count,
        round(option.waste.gpu_memory + option.waste.gpu_cores, 9),
        "" if placed else _why_none(option.unschedulable),
        tuple(option.daemon_pods),
    )


def unjudged_head(kept: bool) -> str:
    """How an option hami-sim could not judge reads wherever it appears (the decision lines and list,
    the overview, the expander's answer, ``expander_example``): never like an option that fits."""
    return "kept, not judged" if kept else "dropped, not judged"


def choose(verdicts: Sequence[OptionVerdict], mode: str, unjudged: str = "keep") -> list[OptionVerdict]:
    """Mark and return (in the given order) the options to keep: of the judged ones, those placing
    the most pods (``most-placed``), or the one of those with the least GPU waste, earliest on ties
    (``least-gpu-waste``); and every unjudged one unless ``unjudged`` is ``drop``."""
    judged = [v for v in verdicts if not v.unjudged]
    viable = [v for v in judged if v.placed]
    if viable:
        _keep_best(viable, mode)
    keep = unjudged != "drop"
    for v in verdicts:
        if v.unjudged:
            v.kept = keep
            v.reason = f"{unjudged_head(keep)}: {v.unjudged}: {v.reason}"
        elif v.daemon_pods:
            v.reason += f" (after DaemonSet pods {', '.join(v.daemon_pods)} on each new node)"
    return [v for v in verdicts if v.kept]


def _keep_best(viable: list[OptionVerdict], mode: str) -> None:
    most = max(v.placed for v in viable)
    kept = [v for v in viable if v.placed == most]
    for v in viable:
        if v.placed < most:
            v.reason = f"places {v.placed}/{v.total} pod(s); other options place {most}"
    if mode == "least-gpu-waste" and len(kept) > 1:
        best = min(kept, key=lambda v: v.gpu_waste)
        for v in kept:
            if v is not best:
                v.reason = (
                    f"gpu waste {v.gpu_waste:.3f} is more than {best.node_group!r}'s {best.gpu_waste:.3f}"
                )
        kept = [best]
    for v in kept:
        v.kept = True
        v.reason = (
            f"kept: places {v.placed}/{v.total} pod(s) on {v.nodes_used} of {v.node_count} new node(s), "
            f"gpu waste {v.gpu_waste:.3f}"
        )


def keep_options(options: Sequence[GroupOption], mode: str) -> list[GroupOption]:
    """The estimator's ``grpc`` expander step: the options hami-sim's gRPC expander keeps when CA
    sends them. CA's option carries the pods its estimator placed in that group and their node count,
    and the expander packs those pods onto that many nodes with the same packer, so each verdict is
    the estimator's own packing with the option's pods as its total."""
    verdicts = []
    for option in options:
        verdict = OptionVerdict(option.node_group, option.node_count)
        verdict.fill(packed(option))
        verdict.total = verdict.placed  # CA sends only the pods its estimator placed in the group
        verdicts.append(verdict)
    choose(verdicts, mode)
    return [option for option, verdict in zip(options, verdicts, strict=True) if verdict.kept]

"""A gRPC expander call as its own kind of decision: recorded from CA's scale-up options, explained
as which options hami-sim kept.

CA's ``BestOptions`` call is not a filter question: it offers scale-up options (a node group and
``nodeCount`` new nodes each) and hami-sim answers with the ones to keep (``simulations.grpcexpander``).
One row per call: ``caller`` ``expander``, the call's first pod, one line per option in CA's order
(``kept``, ``unjudged`` with the reason, the packing's numbers) and the wire form CA used in
``policies["wire"]``. A line also carries the fields every decision's node line has (``fits`` is
``kept``, ``unresolvable`` is "not judged"), so the API and the grid read any decision alike.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.utils import timezone

from hami_sim.engine.hami_expander import OptionVerdict, unjudged_head
from hami_sim.engine.requests import PodView
from hami_sim.project.conf import judging_releases

from .models import Decision
from .recorder import policies_of, record_question
from .summary import MAX_REASON_CHARS, pod_spec, request_summary

__all__ = ["ExpanderQuestion", "option_line", "observe_expander", "answer", "outcome", "option_badge"]

EXPANDER = Decision.Caller.EXPANDER
#: what a queued call keeps alive besides its reasons (the PodView, the lines' dicts)
_CALL_BYTES = 2048
_LINE_BYTES = 512


def option_line(verdict: OptionVerdict) -> dict:
    """One scale-up option as its decision line: kept or not and why, the packing's numbers."""
    template = verdict.template or {}
    return {
        "name": (template.get("metadata") or {}).get("name") or verdict.node_group,
        "group": verdict.node_group,
        "source": EXPANDER,
        "kept": verdict.kept,
        "unjudged": verdict.unjudged,
        "node_count": verdict.node_count,
        "placed": verdict.placed,
        "total": verdict.total,
        "nodes_used": verdict.nodes_used,
        "gpu_waste": verdict.gpu_waste,
        "reason": verdict.reason[:MAX_REASON_CHARS],
        # the fields of every decision's node line (the API's ``nodes``, the pod page's grid)
        "fits": verdict.kept,
        "unresolvable": bool(verdict.unjudged),
        "score": 0.0,
        "failed_container": -1,
        "devices": [],
    }


def _kept(line: Mapping) -> bool:
    return bool(line.get("kept", line.get("fits")))  # rows recorded before lines said "kept"


def _unjudged(line: Mapping) -> bool:
    return bool(line.get("unjudged") or line.get("unresolvable"))


def _fits(line: Mapping) -> bool:
    """Kept after being judged: the option's pods fit (an option kept unjudged proves nothing)."""
    return _kept(line) and not _unjudged(line)


def _verdict(lines: Sequence[Mapping]) -> str:
    """FIT when CA keeps a judged option; UNRESOLVABLE when no option could be judged, or the only
    ones kept were kept without being judged; else NO_FIT."""
    if any(_fits(line) for line in lines):
        return Decision.Verdict.FIT
    if lines and (all(_unjudged(line) for line in lines) or any(_kept(line) for line in lines)):
        return Decision.Verdict.UNRESOLVABLE
    return Decision.Verdict.NO_FIT


def _top_reason(lines: list[dict]) -> str:
    """What the list shows of the call: an option kept without being judged first ("kept, not
    judged: <group>: ..."), so it never reads like one that fits; else the commonest reason an
    option was dropped."""
    unjudged = next((line for line in lines if _kept(line) and _unjudged(line)), None)
    if unjudged is not None:
        head = unjudged_head(True)
        detail = str(unjudged["reason"]).removeprefix(head).removeprefix(": ")
        return f"{head}: {unjudged['group'] or unjudged['name']}: {detail}"[:300]
    dropped = Counter(line["reason"][:300] for line in lines if not line["kept"] and line["reason"])
    return dropped.most_common(1)[0][0] if dropped else ""


def _option_fields(lines: list[dict]) -> dict:
    """The row's verdict, groups, counts and top reason; ``fit_groups`` holds the options kept after
    being judged (one kept unjudged is named in ``top_reason``, never among the fits)."""
    return {
        "verdict": _verdict(lines),
        "node_groups": sorted({line["group"] or line["name"] for line in lines}),
        "fit_groups": sorted({line["group"] or line["name"] for line in lines if _fits(line)}),
        "node_count": len(lines),
        "fit_count": sum(1 for line in lines if _fits(line)),
        "top_reason": _top_reason(lines),
        "nodes": lines,
    }


@dataclass(frozen=True, slots=True)
class ExpanderQuestion:
    """One expander call to record (``recorder.Question``): the first pod and one line per option."""

    pod: PodView
    lines: tuple[dict, ...]
    spec: Any = None  # the call's first pod as CA sent it (kept slimmed: ``summary.pod_spec``)

    def digest(self, caller: str) -> str:
        """The pod and the set of (option, kept, reason): CA's next loop with the same answer folds."""
        fold = sorted({(line["group"] or line["name"], line["kept"], line["reason"]) for line in self.lines})
        releases = judging_releases()
        identity = [self.pod.key, EXPANDER, "", fold, releases["hami_release"], releases["ca_release"]]
        return hashlib.blake2b(orjson.dumps(identity), digest_size=20).hexdigest()

    def summarize(
        self,
        *,
        caller: str,
        seconds: float,
        policies: Mapping[str, Any] | None = None,
        at: datetime | None = None,
    ) -> dict:
        return {
            "digest": self.digest(caller),
            "pod_uid": self.pod.uid,
            "pod_namespace": self.pod.namespace,
            "pod_name": self.pod.name,
            "pod_owner": self.pod.owner,
            "caller": EXPANDER,
            "session": "",
            **_option_fields(list(self.lines)),
            "request": request_summary(self.pod),
            "policies": dict(policies or {}),
            **judging_releases(),
            "pod_spec": pod_spec(self.spec),
            "latency_ms": round(seconds * 1000, 3),
            "first_seen": at or timezone.now(),
            "last_seen": at or timezone.now(),
        }

    def queued_bytes(self) -> int:
        return _CALL_BYTES + sum(_LINE_BYTES + len(line["reason"]) for line in self.lines)


def observe_expander(
    sender, *, ctx, options: Sequence[OptionVerdict], seconds: float = 0.0, wire: str = "", **kwargs
) -> None:
    """Receiver of ``simulations.signals.expander_answered``: queue the call as an expander decision."""
    question = ExpanderQuestion(ctx.pod, tuple(option_line(v) for v in options), kwargs.get("spec"))
    record_question(question, caller=EXPANDER, seconds=seconds, policies={**policies_of(ctx), "wire": wire})


# -- its explanation on the pod page --------------------------------------------------------------------
def _lines(decision) -> list[Mapping]:
    return [line for line in decision.nodes or [] if isinstance(line, Mapping)]


def _group_of(line: Mapping) -> str:
    return str(line.get("group") or line.get("name", ""))


def _kept_words(lines: Sequence[Mapping]) -> str:
    """ "gpu-h100; kept, not judged: gpu-l4": the options kept after judging, then those kept without
    ("" when none was kept)."""
    judged = [_group_of(line) for line in lines if _fits(line)]
    unjudged = [_group_of(line) for line in lines if _kept(line) and _unjudged(line)]
    words = ", ".join(judged)
    if unjudged:
        words += ("; " if words else "") + f"{unjudged_head(True)}: {', '.join(unjudged)}"
    return words


def answer(decision, events: Sequence = ()) -> str:
    """Which of CA's scale-up options hami-sim kept (each option's line says why)."""
    lines = _lines(decision)
    kept = _kept_words(lines)
    head = (
        f"The gRPC expander kept {kept}"
        if kept
        else "The gRPC expander kept no option, so CA does not scale up in this loop"
    )
    wire = (decision.policies or {}).get("wire") if isinstance(decision.policies, Mapping) else None
    form = f" (CA's request form: {wire})" if wire else ""
    unjudged = [line for line in lines if _unjudged(line)]
    if unjudged:
        fate = "kept" if all(_kept(line) for line in unjudged) else "dropped (EXPANDER_UNJUDGED=drop)"
        form += f"; {len(unjudged)} option(s) could not be judged and were {fate}"
    return f"{head}, of {len(lines)} scale-up option(s) CA offered{form}; each option's reason is below."


def outcome(decision, events: Sequence = ()) -> tuple[str, str]:
    """``(label, css)`` of the headline badge: the options kept (those kept unjudged named apart), or none."""
    lines = _lines(decision)
    kept = _kept_words(lines)
    if not kept:
        return "expander kept no option", "v-no_fit"
    return f"expander kept {kept}", "v-fit" if any(_fits(line) for line in lines) else "v-unresolvable"


def option_badge(line: Mapping) -> dict:
    """An option's row: kept, kept without being judged, or dropped, with its reason (an option has
    no node score)."""
    reason = line.get("reason", "")
    if _kept(line) and _unjudged(line):
        return {"badge": unjudged_head(True), "badge_css": "v-unresolvable", "badge_note": reason}
    if _kept(line):
        return {"badge": "kept", "badge_css": "v-fit", "badge_note": reason}
    css = "v-unresolvable" if _unjudged(line) else "v-no_fit"
    return {"badge": "dropped", "badge_css": css, "badge_note": reason}

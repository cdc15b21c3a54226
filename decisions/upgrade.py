"""What moving to another HAMi release would change: the pending pods and the recently decided ones,
judged again under that release, and the rule that changes each answer.

Each pod is judged twice against the cluster as it is now (the live nodes with their usage, then a
fresh node of each node group, from its template): under the release hami-sim follows
(``HAMI_VERSION``) and under the other. Its outcome is where HAMi's scheduler would put it: the live
node it picks by the node policy's score, else the node group whose new node it fits, else nowhere,
with the devices it would take. A pod whose verdict, group or devices differ is a change; the rule
that makes it is found by judging it under the current release with one differing rule at a time
taken from the other (``dataclasses.replace`` on ``HamiRules``). When no single rule changes it,
the rules that differ change it together.

The work is bounded: at most ``MAX_PODS`` pods are judged (pending pods first, oldest first, then
the pods of the decisions of the last ``RECENT_HOURS``, newest first), fewer when judging them
against every candidate node under every rule set would pass ``EVALUATION_BUDGET``; the answer says
the cap and whether there were more pods.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import orjson
from django.utils import timezone

from hami_sim.engine.hami_releases import HamiRules, RuleChange, rule_differences, rules_for
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.engine.simulate import NodeVerdict, Simulator
from hami_sim.runtime.simulator import get_simulator
from profiles.models import NodeInventory
from profiles.nodetemplates import estimate_groups
from usage.live import live_usage_reader
from usage.models import PendingPod

from .models import Decision

__all__ = [
    "MAX_PODS",
    "EVALUATION_BUDGET",
    "RECENT_HOURS",
    "Outcome",
    "Subject",
    "Change",
    "Comparison",
    "compare",
    "subjects",
]

#: pods judged per comparison (each is judged once per release, and once per differing rule when
#: its answer changes), so a page or an API call never holds a worker for long
MAX_PODS = 100
#: node evaluations one comparison may spend, counted as pods x candidate nodes x rule sets (both
#: releases and each differing rule): on a cluster of many live nodes fewer pods are judged
EVALUATION_BUDGET = 20000
#: decisions last seen within this many hours are "recent"
RECENT_HOURS = 24
#: decision rows read to find the recent pods (distinct pods among them)
_DECISION_SCAN = 5000


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where HAMi's scheduler would put a pod: a live node, a new node of a group, or nowhere."""

    fits: bool
    node: str = ""  # the live node; "" for a new node or none
    group: str = ""  # the node group of that node (or of the new node)
    devices: tuple[tuple[str, ...], ...] = ()  # per container, the devices chosen
    reason: str = ""  # why it fits nowhere

    def where(self) -> str:
        if not self.fits:
            return "nowhere"
        if self.node:
            return f"{self.node} ({self.group})" if self.group else self.node
        return f"a new {self.group} node"

    def as_dict(self) -> dict:
        return {
            "fits": self.fits,
            "node": self.node or None,
            "nodeGroup": self.group or None,
            "devices": [list(c) for c in self.devices],
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Subject:
    """A pod to judge: a pending pod, or the pod of a recent decision (as the decision kept it)."""

    namespace: str
    name: str
    uid: str
    source: str  # "pending" or "decision"
    pod: Mapping
    decision_id: int | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A pod whose answer differs between the two releases, and the rules that change it."""

    subject: Subject
    current: Outcome
    other: Outcome
    changed: tuple[str, ...]  # of "verdict", "group", "devices"
    rules: tuple[RuleChange, ...]
    together: bool  # no single rule changes it: the differing rules do together
    sentence: str


@dataclass(slots=True)
class Comparison:
    """The pods judged under both releases and the ones whose answer changes."""

    current: str
    other: str
    differences: tuple[RuleChange, ...]
    judged: int = 0
    capped: bool = False
    cap: int = MAX_PODS
    changes: list[Change] = field(default_factory=list)
    unjudged: list[tuple[Subject, str]] = field(default_factory=list)


# -- which pods ---------------------------------------------------------------------------------------
def _pending(cap: int) -> tuple[list[Subject], bool]:
    rows = PendingPod.objects.order_by("created_at", "pk").values_list("namespace", "name", "uid", "pod")
    found = [Subject(ns, name, uid, "pending", pod or {}) for ns, name, uid, pod in rows[: cap + 1]]
    return found[:cap], len(found) > cap


def _recent(cap: int, seen: set[tuple[str, str]]) -> tuple[list[Subject], bool]:
    since = timezone.now() - timedelta(hours=RECENT_HOURS)
    rows = (
        Decision.objects.filter(last_seen__gte=since)
        .exclude(pod_spec={})
        .order_by("-last_seen", "-pk")
        .values_list("pk", "pod_namespace", "pod_name", "pod_uid", "pod_spec")[:_DECISION_SCAN]
    )
    found: list[Subject] = []
    for pk, ns, name, uid, spec in rows.iterator(chunk_size=200):
        if (ns, name) in seen:
            continue
        seen.add((ns, name))
        if len(found) == cap:
            return found, True
        found.append(Subject(ns, name, uid, "decision", spec, pk))
    return found, False


def subjects(cap: int) -> tuple[list[Subject], bool]:
    """Up to ``cap`` pods to judge (pending first, then recent decisions' pods, each pod once), and
    whether there were more."""
    pending, more = _pending(cap)
    if more:
        return pending, True
    recent, more = _recent(cap - len(pending), {(s.namespace, s.name) for s in pending})
    return pending + recent, more


# -- judging ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Candidates:
    """The nodes a pod may go to: live nodes (with their usage), then a new node of each group."""

    nodes: tuple[Mapping, ...]
    groups: tuple[str, ...]
    live: tuple[bool, ...]
    usage: Callable


def _candidates() -> _Candidates:
    nodes: list[Mapping] = []
    groups: list[str] = []
    live: list[bool] = []
    rows = NodeInventory.objects.filter(gone_at__isnull=True).order_by("name")
    for name, labels, registration, capacity, group in rows.values_list(
        "name", "labels", "annotations", "capacity", "node_group__name"
    ).iterator(chunk_size=1000):
        meta = {"name": name, "labels": labels or {}, "annotations": registration or {}}
        nodes.append({"metadata": meta, "status": {"capacity": capacity or {}}})
        groups.append(group or "")
        live.append(True)
    for template in estimate_groups():
        nodes.append(template.template)
        groups.append(template.name)
        live.append(False)
    return _Candidates(tuple(nodes), tuple(groups), tuple(live), live_usage_reader())


def _best(verdicts: Sequence[tuple[int, NodeVerdict]], spread: bool) -> tuple[int, NodeVerdict] | None:
    """The node HAMi's node policy picks among fitting ones (binpack: highest score, spread: lowest),
    the first such in order."""
    best: tuple[int, NodeVerdict] | None = None
    for i, v in verdicts:
        if best is None or (
            v.score_after < best[1].score_after if spread else v.score_after > best[1].score_after
        ):
            best = (i, v)
    return best


def _devices(verdict: NodeVerdict) -> tuple[tuple[str, ...], ...]:
    fit = verdict.fit
    return tuple(tuple(d.uuid for d in c) for c in fit.containers) if fit is not None else ()


def judge(sim: Simulator, pod: Mapping, candidates: _Candidates) -> Outcome:
    """Where ``sim``'s rules put ``pod``. Raises ``PodError``/``WeightsError`` for a malformed pod."""
    ctx = sim.pod_context(pod)
    verdicts = sim.filter_nodes(ctx, candidates.nodes, live=candidates.usage)
    spread = ctx.node_policy == "spread"
    for live in (True, False):
        fitting = [(i, v) for i, v in enumerate(verdicts) if v.fits and candidates.live[i] is live]
        best = _best(fitting, spread)
        if best is not None:
            i, v = best
            return Outcome(True, v.name if live else "", candidates.groups[i], _devices(v))
    reasons = Counter(v.reason for v in verdicts if v.reason)
    return Outcome(False, reason=reasons.most_common(1)[0][0][:500] if reasons else "no node")


def _differs(a: Outcome, b: Outcome) -> tuple[str, ...]:
    changed = []
    if a.fits != b.fits:
        changed.append("verdict")
    if a.fits and b.fits and (a.group, a.node) != (b.group, b.node):
        changed.append("group")  # (another node's devices are other devices: not a change of its own)
    elif a.fits and b.fits and a.devices != b.devices:
        changed.append("devices")
    return tuple(changed)


def _simulator(rules: HamiRules) -> Simulator:
    base = get_simulator()
    config = dataclasses.replace(base.config, hami_release=rules.release, hami_rules=rules)
    return Simulator(config, base.resolver)


def _short(rule: RuleChange) -> str:
    """The newest change's first clause: ``v2.10: each init container is fitted alone``."""
    text = rule.description.split("; v")[-1]
    text = text if text.startswith("v") else f"v{text}"
    return text.split(";")[0].split(" (")[0].rstrip(".")


def _sentence(change: Change, current: str, other: str) -> str:
    a, b = change.current, change.other
    if "verdict" in change.changed:
        fitting, release, not_release = (a, current, other) if a.fits else (b, other, current)
        how = f"fits on {fitting.where()} under {release}, not under {not_release}"
    elif "group" in change.changed:
        how = f"goes to {a.where()} under {current}, to {b.where()} under {other}"
    else:
        how = f"takes {_device_text(a)} under {current}, {_device_text(b)} under {other} on {a.where()}"
    if change.together:
        return f"{how} (the differing rules together, no one of them alone)"
    return f"{'; '.join(_short(r) for r in change.rules)}: {how}"


def _device_text(outcome: Outcome) -> str:
    return " + ".join(",".join(c) or "-" for c in outcome.devices)


def _shape(pod: Mapping) -> bytes | None:
    """What a pod's outcome depends on, as a key: its annotations and spec. A fit reads the pod's
    annotations and its containers' requests (``PodView.FIT_READS``); its name, namespace and uid
    are identity, so pods of one shape (a Deployment's replicas, a Job's) get one outcome per rule
    set. None (judged on its own) for a pod that cannot be keyed."""
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    if not isinstance(meta, Mapping):
        return None
    try:
        return orjson.dumps([meta.get("annotations"), pod.get("spec")], option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None


class _Judges:
    """One simulator per rule set, built on first use and shared by every pod of a comparison, and
    each outcome kept by (rule set, pod shape): a rule's effect on a shape is judged once, however
    many pods have that shape. A pod that fails to parse is never kept (the next one tries again)."""

    def __init__(self, current: HamiRules, other: HamiRules, candidates: _Candidates) -> None:
        self.current, self.other, self.candidates = current, other, candidates
        self.sims: dict[HamiRules, Simulator] = {}
        self.outcomes: dict[tuple[HamiRules, bytes], Outcome] = {}

    def outcome(self, rules: HamiRules, pod: Mapping) -> Outcome:
        shape = _shape(pod)
        found = self.outcomes.get((rules, shape)) if shape is not None else None
        if found is not None:
            return found
        sim = self.sims.get(rules)
        if sim is None:
            process = get_simulator()  # the current release's own rules: the process's simulator
            sim = self.sims[rules] = process if rules == process.rules else _simulator(rules)
        found = judge(sim, pod, self.candidates)
        if shape is not None:
            self.outcomes[(rules, shape)] = found
        return found

    def rules_changing(self, pod: Mapping, now: Outcome, differences: Sequence[RuleChange]) -> tuple:
        """The differing rules that alone, taken from the other release, change the answer."""
        found = []
        for rule in differences:
            mixed = dataclasses.replace(self.current, **{rule.name: getattr(self.other, rule.name)})
            if _differs(now, self.outcome(mixed, pod)):
                found.append(rule)
        return tuple(found)


def compare(other: str, cap: int | None = None) -> Comparison:
    """Judge up to ``cap`` pods under the current release and under ``other`` (a release name
    ``parse_release`` reads; the caller validates it) and list the ones whose answer changes."""
    cap = MAX_PODS if cap is None else cap
    current_rules = get_simulator().rules
    other_rules = rules_for(other)
    differences = rule_differences(current_rules, other_rules)
    candidates = _candidates()
    per_pod = max(1, len(candidates.nodes)) * (2 + len(differences))
    cap = max(1, min(cap, EVALUATION_BUDGET // per_pod))
    result = Comparison(current_rules.release, other_rules.release, differences, cap=cap)
    pods, result.capped = subjects(cap)
    if not differences:
        result.judged = len(pods)
        return result
    judges = _Judges(current_rules, other_rules, candidates)
    for subject in pods:
        try:
            now = judges.outcome(current_rules, subject.pod)
            then = judges.outcome(other_rules, subject.pod)
        except (PodError, WeightsError) as exc:
            result.unjudged.append((subject, str(exc)[:300]))
            continue
        result.judged += 1
        changed = _differs(now, then)
        if not changed:
            continue
        rules = judges.rules_changing(subject.pod, now, differences)
        change = Change(subject, now, then, changed, rules or differences, not rules, "")
        result.changes.append(
            dataclasses.replace(change, sentence=_sentence(change, result.current, result.other))
        )
    return result

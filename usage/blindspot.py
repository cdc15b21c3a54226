"""The pods upstream CA cannot see, from the stored cluster (``hami_sim.engine.blindspot`` does the
work): the live nodes with their usage and what their pods request, the pending HAMi pods CA
considers (``PodScheduled=False``, reason ``Unschedulable``), both views of each, and for the
invisible ones the estimator's answer (which node group and how many new nodes would hold them).

The report is computed at most every ``REPORT_SECONDS`` per process (the metrics scrape, the
overview and the pod page share it). Its data is as fresh as the usage store: when the source has
not confirmed usage for ``USAGE_STALE_SECONDS`` (a ``file://`` snapshot never goes stale) the
report says so and flags nothing, since old data can be wrong either way.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from hami_sim.engine.allocations import apply_usage
from hami_sim.engine.blindspot import (
    CAProfile,
    DrainViews,
    Pending,
    PodViews,
    ViewNode,
    aggregate_names,
    drain_views,
    pod_views,
)
from hami_sim.engine.estimate import EstimateError, GroupTemplate, PendingPods, estimate
from hami_sim.engine.model import NodeState
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.engine.scheduler_filters import Resources
from hami_sim.engine.simulate import Simulator
from hami_sim.pages.ages import human_age
from hami_sim.project.conf import conf

from .store import get_store

__all__ = [
    "ca_profile",
    "live_view_nodes",
    "drain_groups",
    "GroupAnswer",
    "Report",
    "report",
    "report_or_none",
    "compute",
    "banner",
    "left_over",
    "forget",
]

log = logging.getLogger("hami_sim.dashboard")

REPORT_SECONDS = 5.0
#: the scale-down views re-place each node's pods on the other nodes of its group, so their cost grows
#: with the square of a group's size: groups are judged smallest first while their node pairs stay
#: within ``DRAIN_MAX_NODES ** 2`` per report, and a group of more than ``DRAIN_MAX_NODES`` never is
DRAIN_MAX_NODES = 300


def ca_profile(sim: Simulator, aggregate: bool | None = None) -> CAProfile:
    """CA's ``NodeResourcesFit`` as the shipped scheduler profile sets it: every HAMi resource name
    but the device counts ignored (``make ca-config``); with aggregate capacity, the vendors'
    memory and cores names counted against what each node advertises."""
    from profiles.vendors import count_resource

    vendors = list(sim.vendors.values())
    counts = {count_resource(v) for v in vendors}
    ignored = sim.managed_resources() - counts
    if aggregate is None:
        aggregate = conf().ca_aggregate_capacity
    names = aggregate_names(vendors) if aggregate else {}
    return CAProfile(frozenset(ignored), names)


def _resources(data: Mapping) -> Resources:
    scalars = data.get("scalars") or None
    return Resources(
        int(data.get("cpu", 0)),
        int(data.get("memory", 0)),
        int(data.get("ephemeral", 0)),
        int(data.get("pods", 0)),
        {str(k): int(v) for k, v in scalars.items()} if scalars else None,
    )


def live_view_nodes(sim: Simulator) -> list[ViewNode]:
    """Every live node as both views see it: CA's facts (labels, taints, allocatable, requested
    sums) and its cards with the stored usage (a node whose pods were never read: as empty)."""
    from profiles.models import NodeInventory

    from .models import NodeFacts

    facts = {
        name: (node, requested)
        for name, node, requested in NodeFacts.objects.values_list("name", "node", "requested")
    }
    usage = get_store().snapshot()
    rows = NodeInventory.objects.filter(gone_at__isnull=True).values_list(
        "name", "labels", "annotations", "capacity", "node_group__name"
    )
    return [_view_node(sim, row, facts, usage) for row in rows.order_by("name").iterator(chunk_size=1000)]


def _view_node(sim: Simulator, row: tuple, facts: dict, usage: Mapping) -> ViewNode:
    """One live inventory row as both views see it (``live_view_nodes``)."""
    name, labels, registration, capacity, group = row
    obj = {
        "metadata": {"name": name, "labels": labels or {}, "annotations": registration or {}},
        "status": {"capacity": capacity or {}},
    }
    inventory = sim.inventory(obj)
    state = inventory.state(name) if not inventory.error else NodeState(name, [])
    live = usage.get(name)
    if live is not None:
        state = apply_usage(state, live.devices, in_place=True)
    fact = facts.get(name)
    node = dict(fact[0]) if fact else {"status": {"allocatable": capacity or {}}}
    node["metadata"] = {"name": name, "labels": labels or {}}
    requested = _resources(fact[1] or {}) if fact else Resources()
    return ViewNode(name, node, requested, state, group or inventory.node_group or "")


@dataclass
class GroupAnswer:
    """Per node group CA thinks takes them: the invisible pods, the oldest one's age, and what the
    estimator answers for them (the group and the number of new nodes that would hold them)."""

    node_group: str
    pods: list[PodViews] = field(default_factory=list)
    oldest_seconds: float = 0.0
    estimate_group: str | None = None
    estimate_nodes: int = 0
    estimate_left: int = 0  # pods the chosen group's new nodes still leave pending
    estimate_reason: str = ""

    @property
    def oldest_age(self) -> str:
        return human_age(self.oldest_seconds)


@dataclass
class Report:
    pods: list[PodViews] = field(default_factory=list)
    ages: dict[str, float] = field(default_factory=dict)  # pod id -> seconds pending
    groups: dict[str, GroupAnswer] = field(default_factory=dict)
    drains: list[DrainViews] = field(default_factory=list)
    drains_skipped: list[str] = field(default_factory=list)  # node groups too large for the views
    nodes: list[ViewNode] = field(default_factory=list)
    computed_at: datetime | None = None
    stale: str = ""  # why nothing is flagged (usage too old), else ""
    aggregate: bool = False

    @property
    def invisible(self) -> list[PodViews]:
        return [p for p in self.pods if p.invisible]

    def of(self, pod_uid: str) -> PodViews | None:
        return next((p for p in self.pods if p.pod == pod_uid), None)


def _group_templates() -> list[GroupTemplate]:
    from profiles.nodetemplates import estimate_groups

    return estimate_groups()


def _answer(
    sim: Simulator, answer: GroupAnswer, pods: Mapping[str, Mapping], templates: list[GroupTemplate]
) -> None:
    pending = [PendingPods(pods[p.pod]) for p in answer.pods if p.pod in pods]
    try:
        result = estimate(sim, pending, templates)
    except EstimateError as exc:
        answer.estimate_reason = str(exc)
        return
    chosen = next((o for o in result.options if o.node_group == result.chosen), None)
    if chosen is None:
        answer.estimate_reason = result.explanation
        return
    answer.estimate_group, answer.estimate_nodes = chosen.node_group, chosen.node_count
    answer.estimate_left = len(chosen.unschedulable)
    answer.estimate_reason = left_over(chosen.unschedulable)


def left_over(unschedulable: Mapping[str, str]) -> str:
    """The pods an estimate's chosen group leaves pending, per reason (a node limit names which one:
    max size, ``--max-nodes-total``, per scale-up): "8 pod(s) left pending: node limit reached: ..."."""
    counts = Counter(unschedulable.values())
    return "; ".join(f"{n} pod(s) left pending: {why}" for why, n in counts.most_common())


def _stale_reason(now: datetime) -> str:
    store = get_store()
    if store.from_snapshot:
        return ""
    confirmed = store.confirmed_at
    if confirmed is None:
        return "the cluster sync never confirmed usage"
    age = (now - confirmed).total_seconds()
    limit = conf().usage_stale_seconds
    return f"usage last confirmed {int(age)}s ago (over {limit}s)" if age > limit else ""


def drain_groups(nodes: list[ViewNode]) -> tuple[list[list[ViewNode]], list[str]]:
    """The live nodes per node group whose scale-down views fit the budget (smallest groups first),
    and the groups left out."""
    by_group: dict[str, list[ViewNode]] = {}
    for view in nodes:
        if not view.upcoming:
            by_group.setdefault(view.node_group, []).append(view)
    budget = DRAIN_MAX_NODES**2
    chosen, skipped = [], []
    for group, members in sorted(by_group.items(), key=lambda item: (len(item[1]), item[0])):
        cost = len(members) ** 2
        if len(members) <= DRAIN_MAX_NODES and cost <= budget:
            budget -= cost
            chosen.append(members)
        else:
            skipped.append(group or "(no node group)")
    return chosen, sorted(skipped)


def _drain_pods(names: list[str], sim: Simulator) -> dict[str, list[dict]]:
    """Each live node's counted pods as pods asking what they hold: one container per allocation
    container is not stored, so a pod asks, per backend, for its devices' count with the largest
    memory and cores one of them holds (what a re-placement needs at least; ``Vendor.holding_limits``,
    at v2.10.0 NVIDIA's alone)."""
    from .models import PodAllocation

    out: dict[str, list[dict]] = {}
    rows = (
        row
        for i in range(0, len(names), 2000)
        for row in PodAllocation.objects.filter(node__in=names[i : i + 2000])
        .values_list("namespace", "name", "uid", "node", "devices")
        .iterator(chunk_size=2000)
    )
    for namespace, name, uid, node, devices in rows:
        per_vendor: dict[str, tuple[int, int, int]] = {}
        for vendor, _uuid, _type, mem, cores, _slots in devices or ():
            n, m, c = per_vendor.get(vendor, (0, 0, 0))
            per_vendor[vendor] = (n + 1, max(m, int(mem)), max(c, int(cores)))
        limits = {}
        for vendor, (n, mem, cores) in per_vendor.items():
            backend = sim.vendors.get(vendor)
            if backend is not None:
                limits.update(backend.holding_limits(n, mem, cores))
        if not limits:
            continue
        pod = {
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
        }
        out.setdefault(node, []).append(pod)
    return out


def _pending(now: datetime, ages: dict[str, float]) -> tuple[list[Pending], dict[str, dict]]:
    """The unschedulable pending pods (their ages filled into ``ages``), and each pod by uid."""
    from .models import PendingPod

    rows = list(
        PendingPod.objects.filter(unschedulable=True).values_list("uid", "pod", "reasons", "created_at")
    )
    pending = []
    for uid, pod, reasons, created in rows:
        pod.setdefault("metadata", {})["uid"] = uid
        pending.append(Pending(pod, reasons))
        ages[uid] = max(0.0, (now - created).total_seconds()) if created else 0.0
    return pending, {uid: pod for uid, pod, _r, _c in rows}


def _group_answers(sim: Simulator, out: Report, pods: dict[str, dict]) -> None:
    """Per node group CA thinks the invisible pods fit: its pods, the oldest, and the estimator's answer."""
    for view in out.invisible:
        group = view.ca_node_group or "(no node group)"
        answer = out.groups.setdefault(group, GroupAnswer(group))
        answer.pods.append(view)
        answer.oldest_seconds = max(answer.oldest_seconds, out.ages.get(view.pod, 0.0))
    templates = _group_templates() if out.groups else []
    for answer in out.groups.values():
        _answer(sim, answer, pods, templates)


def _drains(sim: Simulator, out: Report, profile: CAProfile) -> None:
    """The scale-down views of each node whose group is small enough to judge."""
    groups, out.drains_skipped = drain_groups(out.nodes)
    if not groups:
        return
    # pods rebuilt from their allocations lost their selectors: their own group's nodes only
    drain_pods = _drain_pods([v.name for members in groups for v in members], sim)
    for members in groups:
        out.drains.extend(drain_views(sim, members, drain_pods, profile, same_group=True))


def compute(
    sim: Simulator | None = None, aggregate: bool | None = None, now: datetime | None = None
) -> Report:
    """The report, computed now."""
    from hami_sim.runtime.simulator import get_simulator

    sim = sim or get_simulator()
    now = now or timezone.now()
    profile = ca_profile(sim, aggregate)
    out = Report(computed_at=now, aggregate=bool(profile.aggregate))
    out.stale = _stale_reason(now)
    if out.stale:
        return out
    nodes = out.nodes = live_view_nodes(sim)
    pending, pods = _pending(now, out.ages)
    try:
        out.pods = pod_views(sim, nodes, pending, profile)
    except (PodError, WeightsError):  # one pod the engine cannot parse: judge the others
        out.pods = _one_by_one(sim, nodes, pending, profile)
    _group_answers(sim, out, pods)
    _drains(sim, out, profile)
    return out


def _one_by_one(
    sim: Simulator, nodes: list[ViewNode], pending: list[Pending], profile: CAProfile
) -> list[PodViews]:
    good = []
    for entry in pending:
        try:
            pod_views(sim, [], [entry], profile)
        except (PodError, WeightsError):
            continue
        good.append(entry)
    return pod_views(sim, nodes, good, profile)


_lock = threading.Lock()
_cached: tuple[float, Report] | None = None


def report() -> Report:
    """The current report (recomputed at most every ``REPORT_SECONDS`` per process)."""
    global _cached
    with _lock:
        if _cached is not None and time.monotonic() - _cached[0] < REPORT_SECONDS:
            return _cached[1]
        result = compute()
        _cached = (time.monotonic(), result)
        return result


def report_or_none() -> Report | None:
    """``report()``, or None when it cannot be computed: a page shows everything else without it
    (a pod the engine cannot judge, no data)."""
    try:
        return report()
    except Exception:
        log.exception("blind-spot report failed")
        return None


def forget() -> None:
    """Drop the cached report (tests change the database underneath it)."""
    global _cached
    with _lock:
        _cached = None


def banner(view: PodViews) -> str:
    """One line for an invisible pod: what CA counts, and why no card takes it."""
    free = ", ".join(f"{n} free {name} slots" for name, n in view.ca_free.items()) or "room"
    text = f"CA counts {free} on {view.ca_node}"
    if (
        view.device_memory
        and view.largest_free_card is not None
        and view.largest_free_card < view.device_memory
    ):
        text += (
            f"; no card holds {view.device_memory} MiB (the roomiest has {view.largest_free_card} MiB free)"
        )
    else:
        text += f"; HAMi: {view.hami_reason}"
    return text

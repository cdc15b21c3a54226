"""The estimate in CA's order: check the input, absorb pods on upcoming nodes, bin-pack each node group,
run the expander chain, then cap and balance the scale-up as CA does after its expander."""

from __future__ import annotations

from collections.abc import Sequence

from ..ca_releases import DEFAULT_VERSION, CARelease, ca_release
from ..requests import PodError
from ..scaleup import (
    GroupSize,
    ScaleUpLimits,
    ScaleUpPlan,
    balance,
    cap_new_nodes,
    sanitize_template,
    similar_templates,
)
from ..scheduler_filters import node_problem
from ..simulate import Simulator
from .ca_expanders import Expander
from .ca_filters import SnapshotNode, cluster_snapshot
from .chain import choose
from .group import Budget, cut_short, estimate_group, time_limit_reason
from .inputs import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    MAX_WORK,
    TIME_LIMIT_SECONDS,
    ClusterNode,
    EstimateError,
    GroupTemplate,
    PendingPods,
    UpcomingNodes,
)
from .parsed_groups import Equivalence, group_pending_pods, parse_groups
from .results import EstimateResult, GroupOption
from .template_node import TemplateNode
from .upcoming import absorb_upcoming, count_upcoming, upcoming_result

__all__ = ["estimate"]


def estimate(
    sim: Simulator,
    pods: Sequence[PendingPods],
    groups: Sequence[GroupTemplate],
    expander: Expander | None = None,
    max_nodes_per_scale_up: int = DEFAULT_MAX_NODES_PER_SCALE_UP,
    max_work: int = MAX_WORK,
    time_limit: float = TIME_LIMIT_SECONDS,
    limits: ScaleUpLimits | None = None,
    cluster: Sequence[ClusterNode] = (),
    upcoming: Sequence[UpcomingNodes] = (),
    ca: CARelease | None = None,
    fast: bool = True,
) -> EstimateResult:
    """Bin-pack ``pods`` onto new nodes of each group; one option per group (input order) + choice,
    and the scale-up CA would ask for after its limits and balancing (``scale_up``).

    ``limits`` carries CA's flags; without it ``max_nodes_per_scale_up`` is the only one (0 = none).
    Raises ``EstimateError`` for unusable input (malformed pod, bad weights, duplicate ids) and for
    more than ``max_work`` pod x group placements. Past ``time_limit`` seconds no further group is
    packed, as CA's max-binpacking-time stops binpacking: those groups' options are ``cut_short``
    (skipped, with the reason) and the expander chooses among the groups packed before.
    ``ca``: the CA release whose binpacking to follow (default: the newest supported).
    ``fast=False``: every group packed alone and every fit asked of HAMi's Fit, pod by pod (the same
    answer, slower: what the differential tests compare the shared packings and the bound with).
    """
    ca = ca or ca_release(DEFAULT_VERSION)
    limits = limits or ScaleUpLimits(max_nodes_per_scale_up=max_nodes_per_scale_up)
    started = limits.clock()
    equivalences = parse_groups(sim, group_pending_pods(pods))
    snapshot = cluster_snapshot(cluster)
    _check_groups(groups)
    groups = [_sanitized(g) for g in groups]
    _check_work(equivalences, len(groups), sum(u.count for u in upcoming), max_work)
    absorbed = None
    if upcoming:
        absorbed, equivalences, extra = absorb_upcoming(sim, equivalences, groups, upcoming, snapshot)
        snapshot = [*snapshot, *extra]
        groups, limits = count_upcoming(sim, groups, limits, upcoming)
    budget = Budget(time_limit, share=fast)
    options = []
    stop = ""
    for group in groups:
        if budget.out():
            stop = stop or time_limit_reason(time_limit)
        if stop:
            options.append(cut_short(group, equivalences, stop))
            continue
        options.append(_pack_group(sim, group, groups, equivalences, limits, budget, snapshot, ca, fast))
        stop = _binpacking_time_stop(limits, started, ca)
    seconds = limits.clock() - started
    result = _choose_and_plan(sim, options, groups, limits, expander or Expander())
    result.binpacking_seconds = seconds
    result.ca_version = ca.version
    if absorbed is not None:
        result.upcoming = upcoming_result(absorbed)
        result.upcoming_scheduled = list(absorbed.placed)
    result.binpacking_time_exceeded = limits.total_budget > 0 and seconds > limits.total_budget
    return result


def _binpacking_time_stop(limits: ScaleUpLimits, started: float, ca: CARelease) -> str:
    """CA 1.35+'s binpacking limiter, asked after each node group: past --max-binpacking-time no
    further group is binpacked. The reason the later groups are not options, or ""."""
    if not ca.binpacking_time_stops or limits.total_budget <= 0:
        return ""
    elapsed = limits.clock() - started
    if elapsed <= limits.total_budget:
        return ""
    return (
        f"max-binpacking-time of {limits.total_budget:g} s exceeded after {elapsed:.3g} s: CA {ca.version} "
        "binpacks no further node group (the groups binpacked before are the options)"
    )


def _check_work(equivalences: list[Equivalence], groups: int, upcoming_nodes: int, max_work: int) -> None:
    """Refuse, before any packing, a request of more pod x (group or upcoming node) placements than
    ``max_work``: one request may not occupy a worker without bound."""
    work = sum(len(eq.ids) for eq in equivalences) * (groups + upcoming_nodes)
    if work > max_work:
        raise EstimateError(
            f"{work} pod placements to simulate ({groups} node groups + {upcoming_nodes} upcoming nodes "
            f"x pods) exceed the work budget of {max_work}; ask for fewer pods or node groups per request"
        )


def _pack_group(
    sim: Simulator,
    group: GroupTemplate,
    groups: Sequence[GroupTemplate],
    equivalences: list[Equivalence],
    limits: ScaleUpLimits,
    budget: Budget,
    snapshot: Sequence[SnapshotNode],
    ca: CARelease,
    fast: bool,
) -> GroupOption:
    """One group's option, its node limit shared with the groups CA's balancing treats as similar."""
    similar = [g.size for g in _similar(group, groups, limits)]
    try:
        return estimate_group(sim, group, equivalences, limits, similar, budget, snapshot, ca, fast)
    except PodError as exc:  # a template with unparseable status quantities
        raise EstimateError(f"node group {group.name!r}: {exc}") from None


def _choose_and_plan(
    sim: Simulator,
    options: list[GroupOption],
    groups: Sequence[GroupTemplate],
    limits: ScaleUpLimits,
    expander: Expander,
) -> EstimateResult:
    """The expander chain's choice, then the scale-up CA asks for after its caps and balancing."""
    chosen, candidates, explanation = choose(options, expander)
    plan = _plan(chosen, options, groups, limits, sim) if chosen is not None else None
    if plan is not None and plan.capped_by:
        explanation += f" CA caps the scale-up at {plan.node_count} node(s) ({', '.join(plan.capped_by)})."
    return EstimateResult(options, chosen.node_group if chosen else None, explanation, candidates, plan)


def _sanitized(group: GroupTemplate) -> GroupTemplate:
    """The group with CA's sanitised template (CA's own and node-condition taints removed)."""
    node, removed = sanitize_template(group.template)
    if not removed:
        return group
    return GroupTemplate(
        group.name,
        node,
        group.max_new_nodes,
        group.max_size,
        group.current_size,
        group.daemon_pods,
    )


def _similar(
    group: GroupTemplate, groups: Sequence[GroupTemplate], limits: ScaleUpLimits
) -> list[GroupTemplate]:
    """The other requested groups CA's balancing would treat as the same (templates only)."""
    if not limits.balance_similar:
        return []
    return [
        g
        for g in groups
        if g is not group
        and (g.max_size is None or g.current_size < g.max_size)
        and similar_templates(group.template, g.template, limits.ignored_labels)
    ]


def _plan(
    chosen: GroupOption,
    options: list[GroupOption],
    groups: Sequence[GroupTemplate],
    limits: ScaleUpLimits,
    sim: Simulator,
) -> ScaleUpPlan:
    """CA's steps after the expander: cap by maxNodesTotal and the resource limits, then balance."""
    by_name = {g.name: g for g in groups}
    group = by_name[chosen.node_group]
    devices = TemplateNode(sim, group, None).devices
    count, capped = cap_new_nodes(chosen.node_count, group.template, len(devices), limits)
    plan = ScaleUpPlan(chosen.node_group, chosen.node_count, count, capped)
    targets = [group]
    scheduled = set(chosen.scheduled)
    for other in _similar(group, groups, limits):
        option = next(o for o in options if o.node_group == other.name)
        if not option.skipped and set(option.scheduled) == scheduled:
            targets.append(other)
    sizes = [t.size if t.max_size is not None else _open_size(t, count) for t in targets]
    plan.groups = balance(sizes, count)
    total = sum(new - current for _, current, new in plan.groups)
    if total < count:
        plan.capped_by.append("node group max sizes")
        plan.node_count = total
    return plan


def _open_size(group: GroupTemplate, count: int) -> GroupSize:
    """A group without a known max size can take the whole count (or its maxNewNodes)."""
    room = count if group.max_new_nodes is None else group.max_new_nodes
    return GroupSize(group.name, group.current_size, group.current_size + room)


def _check_groups(groups: Sequence[GroupTemplate]) -> None:
    names: set[str] = set()
    for group in groups:
        if group.name in names:
            raise EstimateError(f"node group {group.name!r} is listed twice")
        names.add(group.name)
        problem = node_problem(group.template)
        if problem:
            raise EstimateError(f"node group {group.name!r}: template {problem}")

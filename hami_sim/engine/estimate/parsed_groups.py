"""CA's equivalence groups, parsed once: each group's pod context (HAMi's parsed request), resource
demand and pod terms, so the packers never parse a pod again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..equivalence_groups import PodGroup, group_pods
from ..interpod import PodTerms, pod_terms
from ..names import pod_id
from ..policy import WeightsError
from ..requests import PodError
from ..scheduler_filters import Resources, containers_demand, pod_demand
from ..simulate import PodContext, Simulator
from .inputs import EstimateError, PendingPods

__all__ = ["Equivalence", "entry_ids", "group_pending_pods", "parse_groups"]


@dataclass(slots=True, frozen=True)
class Equivalence:
    """An equivalence group, parsed: its pod's context and resource demand."""

    pod: Mapping
    ids: list[str]
    order: int
    ctx: PodContext
    demand: Resources
    containers: Resources  # app containers only (least-waste)
    spec_key: bytes  # CA's comparison key (+ annotations): equal keys fit and filter identically
    terms: PodTerms  # host ports, required pod (anti-)affinity, topology spread


def entry_ids(entry: PendingPods) -> list[str]:
    """The ids a request's entry stands for: its pod's id, or ``<id>#0..n-1`` for ``count`` replicas
    (the ids every answer names pods by)."""
    base = pod_id(entry.pod)
    return [base] if entry.count is None else [f"{base}#{i}" for i in range(entry.count)]


def group_pending_pods(entries: Sequence[PendingPods]) -> list[PodGroup]:
    """CA's equivalence groups (``equivalence_groups.group_pods``) of the pending pods; checks the ids."""
    listed: list[tuple[Mapping, list[str]]] = []
    seen: set[str] = set()
    for position, entry in enumerate(entries):
        pod = entry.pod
        if type(pod) is not dict and not isinstance(pod, Mapping):
            raise EstimateError(f"pods[{position}] must be a Pod object")
        ids = entry_ids(entry)
        for pid in ids:
            if pid in seen:
                raise EstimateError(f"duplicate pod id {pid!r}: give pods distinct metadata.uid or names")
            seen.add(pid)
        listed.append((pod, ids))
    try:
        return group_pods(listed)
    except TypeError as exc:
        raise EstimateError(f"pods: {exc}") from None


def parse_groups(sim: Simulator, grouped: list[PodGroup]) -> list[Equivalence]:
    """Each group's pod context and demand (equal keys parsed once); groups of no pods dropped."""
    parsed: dict[bytes, tuple[PodContext, Resources, Resources, PodTerms]] = {}
    out: list[Equivalence] = []
    managed = sim.managed_resources()
    for group in grouped:
        try:
            cached = parsed.get(group.key)
            if cached is None:  # pods without a controller are separate groups but often identical
                cached = parsed[group.key] = (
                    sim.pod_context(group.pod),
                    pod_demand(group.pod, managed),
                    containers_demand(group.pod),
                    pod_terms(group.pod),
                )
        except PodError as exc:
            raise EstimateError(f"pod {group.ids[0] if group.ids else pod_id(group.pod)}: {exc}") from None
        except WeightsError as exc:
            meta = group.pod.get("metadata")
            name = meta.get("name", "") if isinstance(meta, Mapping) else ""
            raise EstimateError(f"calcScore failed {exc} for pod {name}") from None
        if group.ids:
            ctx, demand, containers, terms = cached
            out.append(
                Equivalence(group.pod, group.ids, group.order, ctx, demand, containers, group.key, terms)
            )
    return out

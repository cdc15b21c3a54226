"""The three DRA questions for one pod: where its claims fit now, which node group could take it
from zero (under hami-sim's template slices and under the ones CA's clusterapi provider builds), and
how HAMi-DRA would turn a device-plugin pod into claims (the side-by-side on the pod page).

A pod's claims are its own (``spec.resourceClaims``: named ResourceClaims, or claims made from a
ResourceClaimTemplate), or, for a pod that asks ``nvidia.com/gpu`` in the device-plugin way, the ones
HAMi-DRA's webhook would create. Every verdict is the engine's (``hami_sim.engine.dra``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hami_sim.engine.dra.explain import DraVerdict, judge, placement_text, request_text
from hami_sim.engine.dra.hamidra import HAMI_DRA_CLASS, claims_of_pod, hami_dra_class
from hami_sim.engine.dra.objects import Claim, DeviceClass, DraError, parse_claim, parse_slice
from hami_sim.engine.scheduler_filters import static_mismatch
from profiles.dra_templates import dra_template_slices
from profiles.models import NodeGroup, NodeInventory
from profiles.nodetemplates import group_template

from .dra import DraState
from .models import NodeFacts

__all__ = ["PodClaims", "Target", "pod_claims", "is_dra_pod", "live_verdicts", "group_verdicts", "dra_answer"]

ITS_OWN = "its ResourceClaims"
AS_HAMI_DRA = "the claims HAMi-DRA's webhook would make of its nvidia.com/gpu limits"


@dataclass(frozen=True)
class PodClaims:
    claims: tuple[Claim, ...]
    source: str  # ITS_OWN, AS_HAMI_DRA, or "" when the pod asks no device
    missing: tuple[str, ...] = ()  # claims the pod names that the sync has not seen
    error: str = ""  # a claim hami-sim cannot simulate


@dataclass(frozen=True)
class Target:
    name: str  # a node, or a node group
    kind: str  # "live node", "HAMi template", "clusterapi template"
    verdict: DraVerdict

    @property
    def devices(self) -> str:
        """The devices given, as the pod page writes them: ``gpu-0 (memory 8000Mi, cores 30)``."""
        return ", ".join(placement_text(p) for claim in self.verdict.placements for p in claim)


def is_dra_pod(pod: Mapping) -> bool:
    return bool((pod.get("spec") or {}).get("resourceClaims"))


def _template_claim(state: DraState, namespace: str, pod: str, entry: Mapping) -> Claim | None:
    template = state.templates.get((namespace, str(entry.get("resourceClaimTemplateName"))))
    if template is None:
        return None
    spec = (template.get("spec") or {}).get("spec") or {}
    return parse_claim({"metadata": {"name": f"{pod}-{entry.get('name', '')}"}, "spec": spec})


def _own_claims(pod: Mapping, state: DraState) -> PodClaims:
    meta = pod.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    claims, missing = [], []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(entry, Mapping):
            continue
        if entry.get("resourceClaimName"):
            claim = state.claims.get((namespace, str(entry["resourceClaimName"])))
        else:
            claim = _template_claim(state, namespace, name, entry)
        if claim is None:
            missing.append(
                str(
                    entry.get("resourceClaimName")
                    or entry.get("resourceClaimTemplateName")
                    or entry.get("name")
                )
            )
        else:
            claims.append(claim)
    return PodClaims(tuple(claims), ITS_OWN, tuple(missing))


def pod_claims(pod: Mapping, state: DraState) -> PodClaims:
    """The claims to judge for ``pod`` (see the module's docstring)."""
    try:
        if is_dra_pod(pod):
            return _own_claims(pod, state)
        claims = claims_of_pod(pod)
    except DraError as exc:
        return PodClaims((), ITS_OWN if is_dra_pod(pod) else AS_HAMI_DRA, error=str(exc))
    return PodClaims(claims, AS_HAMI_DRA if claims else "")


def _classes(state: DraState) -> dict[str, DeviceClass]:
    """The cluster's DeviceClasses, with HAMi-DRA's where the cluster has none by that name (a
    cluster not yet moved to DRA: the side-by-side still answers)."""
    return {HAMI_DRA_CLASS: hami_dra_class(), **state.classes}


def _live_node(name: str, facts: Mapping | None, labels: Mapping | None) -> dict:
    """A live node as its predicates read it: what CA reads of it (labels, taints), else its labels."""
    if facts:
        node = dict(facts)
        node["metadata"] = {**(facts.get("metadata") or {}), "name": name}
        return node
    return {"metadata": {"name": name, "labels": dict(labels or {})}}


def _judged(
    pod: Mapping, node: Mapping, claims: Sequence[Claim], state: DraState, slices: Sequence
) -> DraVerdict:
    """The node's predicates first (node selector, required affinity, taints), then the allocator."""
    mismatch = static_mismatch(pod, node)
    if mismatch:
        return DraVerdict(False, error=mismatch)
    return judge(node, claims, _classes(state), slices, state.in_use)


def live_verdicts(pod: Mapping, claims: Sequence[Claim], state: DraState) -> list[Target]:
    """Each node that publishes slices, judged with what other claims already hold."""
    names = state.nodes()
    facts = dict(NodeFacts.objects.filter(name__in=names).values_list("name", "node"))
    labels = dict(NodeInventory.objects.filter(name__in=names).values_list("name", "labels"))
    return [
        Target(
            name,
            "live node",
            _judged(
                pod, _live_node(name, facts.get(name), labels.get(name)), claims, state, state.slices_of(name)
            ),
        )
        for name in names
    ]


def group_verdicts(
    pod: Mapping, claims: Sequence[Claim], state: DraState, groups: Sequence[NodeGroup] | None = None
) -> list[Target]:
    """Each node group with an NVIDIA profile, as a fresh node (its template Node's labels and taints):
    under hami-sim's template slices and, for a clusterapi group, under the slices CA's clusterapi
    provider builds. A fresh node holds no claim yet."""
    fresh = DraState(classes=state.classes)
    targets = []
    for group in groups if groups is not None else NodeGroup.objects.prefetch_related("profiles__devices"):
        slices = dra_template_slices(group)
        node = group_template(group)
        node["metadata"] = {**node.get("metadata", {}), "name": slices["node"]}
        for key, kind in (("hami", "HAMi template"), ("clusterapi", "clusterapi template")):
            if slices[key] is not None:
                verdict = _judged(pod, node, claims, fresh, [parse_slice(slices[key])])
                targets.append(Target(group.name, kind, verdict))
    return targets


def dra_answer(pod: Mapping, state: DraState) -> dict:
    """Everything the pod page shows about DRA for one pod (empty when it asks no device)."""
    found = pod_claims(pod, state)
    if not found.source:
        return {}
    answer: dict = {
        "claims": found,
        "own": found.source == ITS_OWN,
        "lines": [(c.name, [request_text(r) for r in c.requests]) for c in found.claims],
        "live": [],
        "groups": [],
    }
    if found.claims and not found.error:
        answer["live"] = live_verdicts(pod, found.claims, state)
        answer["groups"] = group_verdicts(pod, found.claims, state)
    return answer

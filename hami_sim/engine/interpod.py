"""kube-scheduler's filters that look past one pod's own resources: NodePorts, InterPodAffinity (the
required terms) and PodTopologySpread (``whenUnsatisfiable: DoNotSchedule``), as CA's scale-up
simulation runs them on its snapshot (the cluster's nodes plus the new template copies).

The counting follows kube-scheduler 1.32's pre-filter state, quirks included: affinity counts pods
matching *all* of the incoming pod's terms, per (topology key, value); anti-affinity and spread count
per (topology key, value) pair, shared by terms with the same key; the first pod of a group with
affinity to itself may go anywhere its topology keys exist. A node without a term's topology key
fails affinity and spread and never conflicts on anti-affinity.

``topology.TopologyIndex`` keeps those counts up to date as the estimator
adds nodes and places pods, so a check is a few dictionary reads instead of a walk over every pod in
the snapshot; this module parses what a pod asks (its terms, spreads and host ports).

Namespace selectors: hami-sim knows no namespace labels but ``kubernetes.io/metadata.name`` (which
the API server sets on every namespace), so a selector on any other label matches no namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

__all__ = [
    "HOSTNAME_LABEL",
    "PORTS_CONFLICT",
    "PodTerms",
    "Term",
    "Spread",
    "pod_terms",
    "selector_matches",
    "ports_conflict",
]

HOSTNAME_LABEL = "kubernetes.io/hostname"
PORTS_CONFLICT = "node(s) didn't have free ports for the requested pod ports"
AFFINITY_MISMATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_MISMATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD_MISMATCH = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL_MISSING = SPREAD_MISMATCH + " (missing required label)"
_NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

Port = tuple[str, str, int]  # (host IP, protocol, host port)


def _requirement(expr: Mapping, labels: Mapping) -> bool:
    key = expr.get("key")
    operator = expr.get("operator")
    values = expr.get("values") or []
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    return False


def selector_matches(selector: object, labels: Mapping) -> bool:
    """``metav1.LabelSelectorAsSelector``: a null selector matches nothing, an empty one everything;
    ``matchLabels`` and ``matchExpressions`` (In, NotIn, Exists, DoesNotExist) are ANDed."""
    if not isinstance(selector, Mapping):
        return False
    match = selector.get("matchLabels")
    if isinstance(match, Mapping) and any(labels.get(k) != v for k, v in match.items()):
        return False
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list):
        return all(isinstance(e, Mapping) and _requirement(e, labels) for e in exprs)
    return True


@dataclass(slots=True, frozen=True)
class Term:
    """A required pod (anti-)affinity term with its namespaces resolved against the owning pod."""

    topology_key: str
    selector: Mapping | None
    namespaces: frozenset[str]
    namespace_selector: Mapping | None  # None = only ``namespaces``; {} = every namespace
    key: bytes  # identity, for the index's registries

    def matches(self, pod: PodTerms) -> bool:
        """Does ``pod`` fall under this term (namespace and labels)?"""
        if pod.namespace not in self.namespaces and not (
            self.namespace_selector is not None
            and selector_matches(self.namespace_selector, {_NAMESPACE_NAME_LABEL: pod.namespace})
        ):
            return False
        return selector_matches(self.selector, pod.labels)


@dataclass(slots=True, frozen=True)
class Spread:
    """A ``DoNotSchedule`` topology spread constraint (``matchLabelKeys`` merged into the selector)."""

    topology_key: str
    max_skew: int
    min_domains: int
    selector: Mapping | None
    honor_affinity: bool = True  # nodeAffinityPolicy (default Honor)
    honor_taints: bool = False  # nodeTaintsPolicy (default Ignore)


@dataclass(slots=True, eq=False)
class PodTerms:
    """What these filters read of a pod: identity (namespace, labels), host ports and required terms."""

    namespace: str
    labels: Mapping[str, str]
    pod: Mapping  # for the spread's node eligibility (nodeSelector, required node affinity)
    ports: frozenset[Port] = frozenset()
    affinity: tuple[Term, ...] = ()
    anti: tuple[Term, ...] = ()
    spread: tuple[Spread, ...] = ()
    matches_own_affinity: bool = field(default=False)

    @property
    def constrained(self) -> bool:
        """Needs the snapshot's other pods (affinity, anti-affinity or spread)."""
        return bool(self.affinity or self.anti or self.spread)

    @property
    def dynamic(self) -> bool:
        """A node may start to fit after a placement elsewhere (affinity found, spread minimum up)."""
        return bool(self.affinity or self.spread)


def _with_label_keys(
    selector: object, labels: Mapping, match: object, mismatch: object = None
) -> Mapping | None:
    """``matchLabelKeys``/``mismatchLabelKeys``: the pod's own values of those labels as extra
    In/NotIn requirements (keys the pod does not carry are ignored, as kube-scheduler does)."""
    if not isinstance(selector, Mapping):
        return None
    extra = []
    for keys, operator in ((match, "In"), (mismatch, "NotIn")):
        for key in keys if isinstance(keys, list) else []:
            if key in labels:
                extra.append({"key": key, "operator": operator, "values": [labels[key]]})
    if not extra:
        return selector
    exprs = selector.get("matchExpressions")
    return {**selector, "matchExpressions": [*(exprs if isinstance(exprs, list) else []), *extra]}


def _terms(raw: object, namespace: str, labels: Mapping) -> tuple[Term, ...]:
    out = []
    for term in raw if isinstance(raw, list) else []:
        if not isinstance(term, Mapping):
            continue
        selector = _with_label_keys(
            term.get("labelSelector"), labels, term.get("matchLabelKeys"), term.get("mismatchLabelKeys")
        )
        names = term.get("namespaces")
        ns_selector = term.get("namespaceSelector")
        ns_selector = ns_selector if isinstance(ns_selector, Mapping) else None
        namespaces = (
            frozenset(n for n in names if isinstance(n, str)) if isinstance(names, list) else frozenset()
        )
        if not namespaces and ns_selector is None:
            namespaces = frozenset((namespace,))
        key_value = [term.get("topologyKey") or "", selector, sorted(namespaces), ns_selector]
        key = orjson.dumps(key_value, option=orjson.OPT_SORT_KEYS)
        out.append(Term(str(term.get("topologyKey") or ""), selector, namespaces, ns_selector, key))
    return tuple(out)


def _required(affinity: object, kind: str) -> object:
    section = affinity.get(kind) if isinstance(affinity, Mapping) else None
    return (
        section.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(section, Mapping)
        else None
    )


def _spreads(raw: object, labels: Mapping) -> tuple[Spread, ...]:
    out = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, Mapping) or c.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue
        selector = _with_label_keys(c.get("labelSelector"), labels, c.get("matchLabelKeys"))
        skew = c.get("maxSkew")
        domains = c.get("minDomains")
        out.append(
            Spread(
                str(c.get("topologyKey") or ""),
                skew if isinstance(skew, int) and skew > 0 else 1,
                domains if isinstance(domains, int) and domains > 0 else 1,
                selector,
                c.get("nodeAffinityPolicy") != "Ignore",
                c.get("nodeTaintsPolicy") == "Honor",
            )
        )
    return tuple(out)


def _host_ports(spec: Mapping) -> frozenset[Port]:
    ports: set[Port] = set()
    containers = spec.get("containers")
    for container in containers if isinstance(containers, list) else []:
        listed = container.get("ports") if isinstance(container, Mapping) else None
        for port in listed if isinstance(listed, list) else []:
            host = port.get("hostPort") if isinstance(port, Mapping) else None
            if isinstance(host, int) and host > 0:
                ports.add((port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", host))
    return frozenset(ports)


def pod_terms(pod: Mapping) -> PodTerms:
    """Parse what NodePorts, InterPodAffinity and PodTopologySpread read of ``pod``."""
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    meta = meta if isinstance(meta, Mapping) else {}
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    spec = spec if isinstance(spec, Mapping) else {}
    namespace = meta.get("namespace") or "default"
    labels = meta.get("labels")
    labels = labels if isinstance(labels, Mapping) else {}
    affinity = spec.get("affinity")
    terms = PodTerms(
        namespace,
        labels,
        pod,
        _host_ports(spec),
        _terms(_required(affinity, "podAffinity"), namespace, labels),
        _terms(_required(affinity, "podAntiAffinity"), namespace, labels),
        _spreads(spec.get("topologySpreadConstraints"), labels),
    )
    terms.matches_own_affinity = all(t.matches(terms) for t in terms.affinity)
    return terms


def ports_conflict(wanted: frozenset[Port], used: set[Port]) -> bool:
    """NodePorts (``HostPortInfo.CheckConflict``): same protocol and port, and the same host IP or
    either side on 0.0.0.0 (every address)."""
    for ip, protocol, port in wanted:
        if ip == "0.0.0.0":
            if any(p == port and proto == protocol for _, proto, p in used):
                return True
        elif (ip, protocol, port) in used or ("0.0.0.0", protocol, port) in used:
            return True
    return False

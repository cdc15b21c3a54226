"""kube-scheduler's filters that look past one pod's own resources: NodePorts, InterPodAffinity (the
required terms) and PodTopologySpread (``whenUnsatisfiable: DoNotSchedule``), as CA's scale-up
simulation runs them on its snapshot (the cluster's nodes plus the new template copies).

The counting follows kube-scheduler 1.32's pre-filter state, quirks included: affinity counts pods
matching *all* of the incoming pod's terms, per (topology key, value); anti-affinity and spread count
per (topology key, value) pair, shared by terms with the same key; the first pod of a group with
affinity to itself may go anywhere its topology keys exist. A node without a term's topology key
fails affinity and spread and never conflicts on anti-affinity.

``TopologyIndex`` keeps those counts up to date as the estimator adds nodes and places pods, so a
check is a few dictionary reads instead of a walk over every pod in the snapshot.

Namespace selectors: hami-sim knows no namespace labels but ``kubernetes.io/metadata.name`` (which
the API server sets on every namespace), so a selector on any other label matches no namespace.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import orjson

from .predicates import matches_node_selector, matches_required_affinity, untolerated_taint

__all__ = [
    "HOSTNAME_LABEL",
    "PORTS_CONFLICT",
    "PodTerms",
    "Term",
    "Spread",
    "pod_terms",
    "selector_matches",
    "ports_conflict",
    "TopologyIndex",
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


# -- the snapshot's counts ---------------------------------------------------------------------------


class _Counter:
    """Pods per (topology key, value) over the eligible nodes, kept as pods and nodes are added.

    ``contrib(pod)`` names the topology keys one pod counts for (kube-scheduler counts a pair once
    per matching term); ``domains`` are the values of eligible nodes (spread's minimum is over them).
    """

    __slots__ = ("contrib", "eligible", "keys", "pairs", "domains", "_min")

    def __init__(
        self,
        contrib: Callable[[PodTerms], list[str]],
        eligible: Callable[[int], bool] | None,
        keys: tuple[str, ...],
    ) -> None:
        self.contrib = contrib
        self.eligible = eligible
        self.keys = keys
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.domains: dict[str, set[str]] = {key: set() for key in keys}
        self._min: dict[str, int] = {}

    def add_node(self, labels: Mapping[str, str], idx: int) -> None:
        if self.keys and (self.eligible is None or self.eligible(idx)):
            for key in self.keys:
                self.domains[key].add(labels[key])
            self._min.clear()

    def add_pod(self, labels: Mapping[str, str], idx: int, pod: PodTerms) -> None:
        if self.eligible is not None and not self.eligible(idx):
            return
        for key in self.contrib(pod):
            value = labels.get(key)
            if value is not None:
                self.pairs[(key, value)] += 1
                self._min.clear()

    def minimum(self, key: str, min_domains: int) -> int:
        domains = self.domains[key]
        if len(domains) < min_domains:
            return 0
        found = self._min.get(key)
        if found is None:
            found = self._min[key] = min((self.pairs.get((key, v), 0) for v in domains), default=0)
        return found


class TopologyIndex:
    """The snapshot's nodes (labels) and the pods on them, for the topology-aware filters."""

    __slots__ = ("labels", "nodes", "pods", "_counters", "_existing_anti", "_anti_matches")

    def __init__(self) -> None:
        self.labels: list[Mapping[str, str]] = []
        self.nodes: list[Mapping] = []
        self.pods: list[list[PodTerms]] = []
        self._counters: dict[tuple, _Counter] = {}
        # existing pods' required anti-affinity: term key -> (term, pods per topology pair)
        self._existing_anti: dict[bytes, tuple[Term, Counter[tuple[str, str]]]] = {}
        self._anti_matches: dict[tuple[int, bytes], bool] = {}

    def add_node(self, node: Mapping, labels: Mapping[str, str]) -> int:
        idx = len(self.labels)
        self.labels.append(labels)
        self.nodes.append(node)
        self.pods.append([])
        for counter in self._counters.values():
            if all(key in labels for key in counter.keys):
                counter.add_node(labels, idx)
        return idx

    def add_pod(self, idx: int, pod: PodTerms) -> None:
        labels = self.labels[idx]
        self.pods[idx].append(pod)
        for counter in self._counters.values():
            counter.add_pod(labels, idx, pod)
        for term in pod.anti:
            entry = self._existing_anti.get(term.key)
            if entry is None:
                entry = self._existing_anti[term.key] = (term, Counter())
            value = labels.get(term.topology_key)
            if value is not None:
                entry[1][(term.topology_key, value)] += 1

    def problem(self, pod: PodTerms, idx: int) -> str:
        """kube-scheduler's reason ``pod`` may not go to node ``idx`` (spread, then inter-pod), or ""."""
        labels = self.labels[idx]
        if pod.spread:
            reason = self._spread_problem(pod, labels)
            if reason:
                return reason
        if self._existing_anti and self._blocked_by_existing(pod, labels):
            return EXISTING_ANTI_AFFINITY
        if pod.anti and self._anti_conflict(pod, labels):
            return ANTI_AFFINITY_MISMATCH
        if pod.affinity and not self._affinity_ok(pod, labels):
            return AFFINITY_MISMATCH
        return ""

    # -- counters, registered on first use and filled from the snapshot so far

    def _counter(
        self,
        key: tuple,
        contrib: Callable[[PodTerms], list[str]],
        eligible: Callable[[int], bool] | None,
        keys: tuple[str, ...],
    ) -> _Counter:
        counter = self._counters.get(key)
        if counter is None:
            counter = self._counters[key] = _Counter(contrib, eligible, keys)
            for idx, labels in enumerate(self.labels):
                if all(k in labels for k in keys):
                    counter.add_node(labels, idx)
                for placed in self.pods[idx]:
                    counter.add_pod(labels, idx, placed)
        return counter

    def _spread_problem(self, pod: PodTerms, labels: Mapping[str, str]) -> str:
        keys = tuple(c.topology_key for c in pod.spread)
        if any(key not in labels for key in keys):
            return SPREAD_LABEL_MISSING
        for i, c in enumerate(pod.spread):
            counter = self._counter(
                ("spread", id(pod), i),
                _spread_contrib(pod, c),
                self._eligible(pod, c, keys),
                (c.topology_key,),
            )
            own = 1 if selector_matches(c.selector, pod.labels) else 0
            count = counter.pairs.get((c.topology_key, labels[c.topology_key]), 0)
            if count + own - counter.minimum(c.topology_key, c.min_domains) > c.max_skew:
                return SPREAD_MISMATCH
        return ""

    def _eligible(self, pod: PodTerms, c: Spread, keys: tuple[str, ...]) -> Callable[[int], bool]:
        """The nodes a constraint counts: those carrying every constraint's topology key and passing
        its node inclusion policies: the pod's nodeSelector and required node affinity unless
        ``nodeAffinityPolicy: Ignore``, its tolerations of the node's taints with ``nodeTaintsPolicy:
        Honor``."""
        memo: dict[int, bool] = {}

        def eligible(idx: int) -> bool:
            found = memo.get(idx)
            if found is None:
                node, labels = self.nodes[idx], self.labels[idx]
                found = memo[idx] = (
                    all(k in labels for k in keys)
                    and (not c.honor_affinity or _node_affinity_ok(pod.pod, node))
                    and (not c.honor_taints or not untolerated_taint(pod.pod, node))
                )
            return found

        return eligible

    def _blocked_by_existing(self, pod: PodTerms, labels: Mapping[str, str]) -> bool:
        for key, (term, pairs) in self._existing_anti.items():
            value = labels.get(term.topology_key)
            if value is None or not pairs.get((term.topology_key, value)):
                continue
            memo_key = (id(pod), key)
            hit = self._anti_matches.get(memo_key)
            if hit is None:
                hit = self._anti_matches[memo_key] = term.matches(pod)
            if hit:
                return True
        return False

    def _anti_conflict(self, pod: PodTerms, labels: Mapping[str, str]) -> bool:
        counter = self._counter(
            ("anti", id(pod)), lambda p: [t.topology_key for t in pod.anti if t.matches(p)], None, ()
        )
        for term in pod.anti:
            value = labels.get(term.topology_key)
            if value is not None and counter.pairs.get((term.topology_key, value)):
                return True
        return False

    def _affinity_ok(self, pod: PodTerms, labels: Mapping[str, str]) -> bool:
        counter = self._counter(
            ("affinity", id(pod)),
            lambda p: (
                [t.topology_key for t in pod.affinity] if all(t.matches(p) for t in pod.affinity) else []
            ),
            None,
            (),
        )
        exist = True
        for term in pod.affinity:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if counter.pairs.get((term.topology_key, value), 0) <= 0:
                exist = False
        # the first pod of a group with affinity to itself: nothing matches yet anywhere
        return exist or (not counter.pairs and pod.matches_own_affinity)


def _spread_contrib(pod: PodTerms, c: Spread) -> Callable[[PodTerms], list[str]]:
    """Constraint ``c`` of ``pod`` counts pods of its namespace that its selector matches."""

    def contrib(other: PodTerms) -> list[str]:
        if other.namespace == pod.namespace and selector_matches(c.selector, other.labels):
            return [c.topology_key]
        return []

    return contrib


def _node_affinity_ok(pod: Mapping, node: Mapping) -> bool:
    return matches_node_selector(pod, node) and matches_required_affinity(pod, node)

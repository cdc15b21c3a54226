"""The snapshot's counts for InterPodAffinity and PodTopologySpread: ``TopologyIndex`` keeps, per
(topology key, value), the pods that match each kind of term as the estimator adds nodes and places
pods, so a check is a few dictionary reads instead of a walk over every pod in the snapshot.

The counting follows kube-scheduler 1.32's pre-filter state (see ``interpod`` for the quirks it keeps);
the terms themselves are parsed there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from .interpod import (
    AFFINITY_MISMATCH,
    ANTI_AFFINITY_MISMATCH,
    EXISTING_ANTI_AFFINITY,
    SPREAD_LABEL_MISSING,
    SPREAD_MISMATCH,
    PodTerms,
    Spread,
    Term,
    selector_matches,
)
from .scheduler_filters import matches_node_selector, matches_required_affinity, untolerated_taint

__all__ = ["TopologyIndex"]


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

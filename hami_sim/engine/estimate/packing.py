"""CA's binpacking estimator for one node group (``BinpackingNodeEstimator``), one equivalence group at a
time, and the option it yields (used nodes, waste)."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence

from ..interpod import SPREAD_MISMATCH, pod_terms
from ..model import DeviceUsage, NodeState
from ..scaleup import ScaleUpLimits
from ..scheduler_filters import node_allocatable, pod_demand
from ..simulate import Simulator
from ..topology import TopologyIndex
from .bulk import FreshFill, fill
from .ca_filters import SnapshotNode, hostname_spread, static_reason
from .fits import GroupFits
from .fitter import Fitter, PackedNode, Shape
from .parsed_groups import Equivalence
from .results import GroupOption
from .template_node import TemplateNode

__all__ = ["GroupPacker", "limit_reason"]


def limit_reason(limit: int | None, group: str, source: str) -> str:
    """Why binpacking adds no node past the group's limit (CA's node limiter), and which limit
    (``scaleup.limit_source``)."""
    return f"node limit reached: at most {limit} new node(s) for node group {group} ({source})"


class GroupPacker:
    """CA's binpacking estimator for one node group, one equivalence group at a time.

    State carried from one equivalence group to the next: the nodes added so far, the last added one,
    the round-robin position (CA's predicate checker resumes after the node it matched last), each
    pod shape's candidate list, and which shapes dropped which node from their list.
    """

    __slots__ = (
        "sim",
        "template",
        "option",
        "nodes",
        "last",
        "rr",
        "shapes",
        "rejecters",
        "static",
        "deadline",
        "clock",
        "index",
        "hostname_retry",
        "cluster",
        "existing",
        "bound",
        "fits",
        "bulk",
    )

    def __init__(
        self,
        sim: Simulator,
        template: TemplateNode,
        limits: ScaleUpLimits,
        index: TopologyIndex | None = None,
        hostname_retry: bool = True,
        cluster: Sequence[SnapshotNode] = (),
        bound: bool = True,
        fits: GroupFits | None = None,
    ) -> None:
        self.sim = sim
        self.fits = fits  # HAMi fits shared with groups of alike devices (fits.py)
        self.bound = bound  # the fitters' quick "cannot fit" (bound.py); False: HAMi's fit every time
        # fresh nodes filled a whole node at a time (bulk.py): only where a node's fit depends on
        # nothing but the node (no affinity or spread), and not in the pod-by-pod reference
        self.bulk = bound and index is None
        self.cluster = cluster  # the snapshot's other nodes, at the same positions in ``index``
        self.existing: list[tuple[PackedNode, Mapping]] | None = None  # retry targets, built on first use
        self.hostname_retry = hostname_retry  # CA >= 1.33.1 (ca_releases.CARelease.hostname_retry)
        self.template = template
        self.index = index  # the snapshot for affinity and spread (None: no pod needs it)
        self.option = GroupOption(template.group)
        self.nodes: list[PackedNode] = []
        self.last: PackedNode | None = None
        self.rr = 0
        self.shapes: dict[tuple, Shape] = {}
        self.rejecters: dict[int, list[Shape]] = {}  # node index -> shapes that dropped it
        self.static: dict[bytes, str] = {}  # spec key -> static_reason
        # CA's limiter asks the clock before each new node: no node after the group's budget
        self.clock = limits.clock
        self.deadline = limits.clock() + limits.group_budget if limits.group_budget > 0 else None

    def pack(self, eq: Equivalence) -> None:
        """Place the group's pods: on the nodes so far (step 1), then on the last or new nodes (2)."""
        ids = eq.ids
        reason = self._unschedulable(eq)
        if reason:
            for pid in ids:
                self.option.unschedulable[pid] = reason
            return
        shape = self._shape(eq)
        placed = self._fill_existing(shape, ids)
        retry = self.hostname_retry and self.index is not None and hostname_spread(eq.pod)
        stop_reason = ""
        while placed < len(ids):
            count = len(self.nodes)
            stop_reason = self._place_on_last_or_new(shape, ids[placed], retry)
            if stop_reason:
                break
            placed += 1
            if self.bulk and len(self.nodes) > count:  # a fresh node took the pod: fill it at once
                placed += self._fill_fresh(shape, ids, placed)
        for pid in ids[placed:]:
            self.option.unschedulable[pid] = stop_reason
        self.option.scheduled.extend(ids[:placed])
        self.option.requested_cpu += placed * eq.containers.cpu
        self.option.requested_memory += placed * eq.containers.memory

    def _unschedulable(self, eq: Equivalence) -> str:
        """Why no node of the group can ever hold the pod (selectors, taints; no devices), or ""."""
        reason = self.static.get(eq.spec_key)
        if reason is None:
            reason = self.static[eq.spec_key] = static_reason(eq.pod, self.template.node)
        inventory = self.template.inventory
        if not reason and inventory.error and eq.ctx.pod.requests.has_requests:
            reason = inventory.error
        return reason

    def _shape(self, eq: Equivalence) -> Shape:
        d = eq.demand
        key: tuple = (eq.ctx.key, d.cpu, d.memory, d.ephemeral, d.pods)
        if self.index is not None or eq.terms.ports or d.scalars:
            key += (eq.spec_key,)  # labels, ports, terms and scalars are the equivalence group's own
        shape = self.shapes.get(key)
        if shape is None:
            devices = self.template.devices if self.bound else None
            fitter = Fitter(self.sim, eq, self.index, devices, self.fits)
            shape = self.shapes[key] = Shape(fitter)
        return shape

    def _new_node(self) -> PackedNode:
        """Add a node to the snapshot (CA's ``addNewNodeToSnapshot``), with its DaemonSet pods."""
        node = self.last = self.template.new_node(len(self.nodes))
        self.nodes.append(node)
        if self.index is not None:
            obj, labels = self.template.node_object(node.name)
            node.topo = self.index.add_node(obj, labels)
            for terms in self.template.daemon_terms:
                self.index.add_pod(node.topo, terms)
        return node

    def _fill_existing(self, shape: Shape, ids: list[str]) -> int:
        """Step 1: the nodes added so far, round-robin from the node after the last match, until a
        pod fits none. Returns how many of ``ids`` were placed."""
        i = 0
        while i < len(ids) and self.nodes:
            found = self._find(shape, self.rr)
            if found is None:
                break
            idx, (_, devices, sig) = found
            self._place(shape.fitter, idx, ids[i], devices, sig)
            self.rr = (idx + 1) % len(self.nodes)
            i += 1
        return i

    def _place_on_last_or_new(self, shape: Shape, pid: str, retry: bool = False) -> str:
        """Step 2 for one pod: the last added node, else (``retry``: when the last node failed it on
        topology spread) the other new nodes, else a new node. "" when placed, else why the
        equivalence group stops (an empty node cannot hold the pod, or the node limit)."""
        fitter = shape.fitter
        last = self.last
        if last is not None:
            # a used last node's reason is never shown (a new node follows): the quick check will do
            why, devices, sig = fitter.check(last, bool(last.pods))
            if not why:
                self._place(fitter, len(self.nodes) - 1, pid, devices, sig)
                return ""
            if retry and why == SPREAD_MISMATCH and self._retry_others(shape, pid):
                return ""
            if not last.pods:
                return why
        template = self.template
        if template.limit is not None and len(self.nodes) >= template.limit:
            return limit_reason(template.limit, template.group, template.limit_reason)
        if self.deadline is not None and self.clock() > self.deadline:
            self.option.timed_out = True
            return f"max-nodegroup-binpacking-duration exceeded for node group {template.group}"
        last = self._new_node()
        why, devices, sig = fitter.check(last)
        if why:
            return why
        self._place(fitter, len(self.nodes) - 1, pid, devices, sig)
        return ""

    def _fill_fresh(self, shape: Shape, ids: list[str], start: int) -> int:
        """Bulk filling (bulk.py): the last node, fresh but for the pod just placed, takes as many of
        ``ids[start:]`` as pod-by-pod placement would put there. Returns how many."""
        plan = shape.fill
        if plan is None:
            plan = shape.fill = FreshFill(self.template.new_node(len(self.nodes)))
        node = self.nodes[-1]
        placed = fill(plan, shape.fitter, node, ids, start)
        if placed:
            self._changed(len(self.nodes) - 1)
        return placed

    def _place(
        self, fitter: Fitter, idx: int, pid: str, devices: list[DeviceUsage] | None, sig: tuple
    ) -> None:
        fitter.place(self.nodes[idx], pid, devices, sig)
        self._changed(idx)

    def _changed(self, idx: int) -> None:
        """Node ``idx`` took pods: the shapes that gave up on it must look at it again."""
        for shape in self.rejecters.pop(idx, ()):
            insort(shape.cands, idx)

    def _retry_others(self, shape: Shape, pid: str) -> bool:
        """CA's hostname-topology retry (``binpacking_estimator.go``, CA 1.33.1+): the pod failed
        the last new node on a spread constraint, so before adding a node try every other new node,
        round-robin from the position the scans share; a hostname spread's minimum may have risen
        since those nodes were last tried."""
        nodes = self.nodes
        count = len(nodes)
        last = count - 1
        for step in range(count):
            idx = (self.rr + step) % count
            if idx == last:
                continue
            why, devices, sig = shape.fitter.probe(nodes[idx])
            if not why:
                self._place(shape.fitter, idx, pid, devices, sig)
                self.rr = (idx + 1) % count
                return True
        return self._retry_existing(shape, pid)

    def _retry_existing(self, shape: Shape, pid: str) -> bool:
        """The retry's other half: CA's filter skips only the last new node, so the snapshot's
        existing nodes are tried too (after the new ones here; CA's order is its snapshot's). A pod
        that asks for HAMi devices never fits one: their devices are not modelled here."""
        fitter = shape.fitter
        if fitter.devices:
            return False
        if self.existing is None:
            self.existing = self._existing_nodes()
        for node, raw in self.existing:
            if static_reason(fitter.pod, raw):
                continue
            why, devices, sig = fitter.check(node)
            if not why:
                fitter.place(node, pid, devices, sig)
                self.option.on_existing.setdefault(node.name, []).append(pid)
                return True
        return False

    def _existing_nodes(self) -> list[tuple[PackedNode, Mapping]]:
        """The snapshot's existing nodes as binpacking targets: allocatable less their pods."""
        out = []
        ignored = self.sim.managed_resources()
        for idx, entry in enumerate(self.cluster):
            if entry.raw_pods is None:
                continue
            free = node_allocatable(entry.node)
            ports: set = set()
            for pod in entry.raw_pods:
                free.take(pod_demand(pod, ignored))
                ports |= pod_terms(pod).ports
            meta = entry.node.get("metadata")
            name = str(meta.get("name") if isinstance(meta, Mapping) else "") or f"cluster-node-{idx}"
            node = PackedNode(name, NodeState(name, []), (), free, ports or None)
            node.topo = idx
            out.append((node, entry.node))
        return out

    def _find(
        self, shape: Shape, start: int
    ) -> tuple[int, tuple[str, list[DeviceUsage] | None, tuple]] | None:
        """CA's FitsAnyNodeMatching: the first fitting node at or after ``start``, wrapping around."""
        nodes = self.nodes
        if shape.dynamic:
            return self._scan(shape, start)
        if shape.seen < len(nodes):
            shape.cands.extend(range(shape.seen, len(nodes)))
            shape.seen = len(nodes)
        cands = shape.cands
        check = shape.fitter.probe
        while cands:
            pos = bisect_left(cands, start)
            if pos == len(cands):
                pos = 0
            idx = cands[pos]
            result = check(nodes[idx])
            if not result[0]:
                return idx, result
            del cands[pos]
            self.rejecters.setdefault(idx, []).append(shape)
            start = idx
        return None

    def _scan(
        self, shape: Shape, start: int
    ) -> tuple[int, tuple[str, list[DeviceUsage] | None, tuple]] | None:
        """``_find`` for shapes whose fit depends on other nodes: every node, every time."""
        nodes = self.nodes
        count = len(nodes)
        probe = shape.fitter.probe
        for step in range(count):
            idx = (start + step) % count
            result = probe(nodes[idx])
            if not result[0]:
                return idx, result
        return None

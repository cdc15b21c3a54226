"""What every new node of a group starts as (the template's name, resources, devices and DaemonSet
pods), and CA's order of the equivalence groups against it."""

from __future__ import annotations

from collections.abc import Mapping

from ..interpod import HOSTNAME_LABEL, PodTerms, pod_terms
from ..model import DeviceUsage, NodeState
from ..names import estimated_node_name, pod_id, template_node_name
from ..scheduler_filters import Resources, insufficient, node_allocatable, pod_demand, static_mismatch
from ..simulate import Inventory, Simulator
from .fitter import PackedNode, device_signature
from .inputs import GroupTemplate
from .parsed_groups import Equivalence

__all__ = ["TemplateNode"]


def _device_memory(eq: Equivalence, devmem: int) -> int:
    total = 0
    for requests in eq.ctx.pod.requests.containers:
        for req in requests.values():
            mem = req.memreq if req.memreq > 0 else devmem * req.mem_percentage_req // 100
            total += req.nums * mem
    return total


def _template_name(group: GroupTemplate) -> str:
    meta = group.template.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) and name else template_node_name(group.name, None)


class TemplateNode:
    """What every new node of a group starts as: the template's name, resources and devices."""

    __slots__ = (
        "group",
        "name",
        "node",
        "allocatable",
        "inventory",
        "devices",
        "sig",
        "limit",
        "limit_reason",
        "fresh",
        "daemons",
        "daemon_terms",
        "ports",
    )

    def __init__(self, sim: Simulator, group: GroupTemplate, limit: int | None) -> None:
        self.group = group.name
        self.name = _template_name(group)
        self.node = group.template
        self.allocatable = node_allocatable(group.template)
        known = group.inventory
        self.inventory: Inventory = known if known is not None else sim.inventory(group.template)
        self.devices: list[DeviceUsage] = (
            self.inventory.state(self.name).devices if not self.inventory.error else []
        )
        self.sig = device_signature(self.devices)
        self.limit = limit
        self.limit_reason = ""  # which of CA's limits set ``limit`` (``scaleup.limit_source``)
        self.daemons: list[str] = []
        self.daemon_terms: list[PodTerms] = []
        self.ports: set | None = None  # the DaemonSet pods' host ports on every new node
        self.fresh = self._fresh(group, sim.managed_resources())

    def _fresh(self, group: GroupTemplate, ignored: frozenset[str]) -> Resources:
        """A new node's free resources after the DaemonSet pods CA places on it (the ones whose
        selectors, affinity and tolerations let them run there and that fit)."""
        free = self.allocatable.copy()
        for pod in group.daemon_pods:
            if static_mismatch(pod, self.node):
                continue
            demand = pod_demand(pod, ignored)
            if insufficient(demand, free):
                continue
            free.take(demand)
            self.daemons.append(pod_id(pod))
            terms = pod_terms(pod)
            self.daemon_terms.append(terms)
            if terms.ports:
                self.ports = (self.ports or set()) | terms.ports
        return free

    def new_node(self, index: int, name: str = "") -> PackedNode:
        name = name or estimated_node_name(self.name, index)
        state = NodeState(name, self.devices, self.inventory.pair_scores, self.inventory.cordoned)
        return PackedNode(name, state, self.sig, self.fresh.copy(), set(self.ports) if self.ports else None)

    def node_object(self, name: str) -> tuple[Mapping, Mapping[str, str]]:
        """A new node as the topology filters see it: CA's sanitised copy has the template's labels
        with ``kubernetes.io/hostname`` set to the new node's name."""
        meta = self.node.get("metadata")
        labels = meta.get("labels") if isinstance(meta, Mapping) else None
        labels = {**(labels if isinstance(labels, Mapping) else {}), HOSTNAME_LABEL: name}
        return {"metadata": {"name": name, "labels": labels}, "spec": self.node.get("spec") or {}}, labels

    def order(self, equivalences: list[Equivalence], pod_requests: bool = True) -> list[Equivalence]:
        """CA's order: share of the template (cpu + memory), then device memory, both descending.

        The share is of the pod's full request (init containers, sidecars, overhead) from CA 1.33 on,
        of the app containers' requests only before (``pod_requests=False``)."""
        alloc = self.allocatable
        devmem = self.devices[0].totalmem if self.devices else 0

        def share(eq: Equivalence) -> float:
            demand = eq.demand if pod_requests else eq.containers
            cpu = demand.cpu / alloc.cpu if alloc.cpu else 0.0
            mem = demand.memory / alloc.memory if alloc.memory else 0.0
            return cpu + mem

        return sorted(equivalences, key=lambda eq: (-share(eq), -_device_memory(eq, devmem), eq.order))

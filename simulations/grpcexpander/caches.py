"""What the gRPC expander keeps between options of one call and between calls.

CA sends the same pending pods and templates every scan (10 s) while the pods stay pending, and
groups of one instance type have templates that differ only in names and device ids; decoding and
packing them again each time would make the expander's cost follow CA's scan rate. Decoded objects
are keyed by their bytes' digest and packings by what they depend on, so an edited profile or a
changed pod is a new key, never a stale answer.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

import orjson

from hami_sim.engine.cache import ByteLRU, approx_size
from hami_sim.engine.hami_expander import Packed
from hami_sim.engine.model import DeviceInfo, Inventory
from hami_sim.engine.simulate import Simulator
from hami_sim.engine.stores import new_store

from .convert import node_from_bytes, pod_from_bytes

__all__ = ["ExpanderCaches", "CallCache", "PackingKey", "caches", "reset_caches", "pods_digest"]

#: labels the device rules read whatever the pod asks (AWS Neuron's instance type)
_RULE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


class ExpanderCaches:
    """What outlives one call, in the simulator's one byte budget (``hami_sim.engine.stores``: the
    ``expander pods``, ``expander nodes`` and ``expander packings`` shares, each in ``/metrics`` by
    that name): decoded Pods and Nodes by their bytes' digest, and packings by ``PackingKey``. CA
    sends the same pending pods and templates every scan (10 s) while the pods stay pending, so a
    repeated call decodes and packs nothing again; an edited NodeGroup profile or a changed pod
    changes the key, never a stale answer."""

    def __init__(self, sizes: Mapping[str, int], off: frozenset[str] = frozenset()) -> None:
        self.pods: ByteLRU[bytes, Mapping] = new_store("expander pods", sizes)
        self.nodes: ByteLRU[bytes, Mapping] = new_store("expander nodes", sizes)
        self.packed: ByteLRU[bytes, Packed] = new_store("expander packings", sizes)
        self.lists = "expander pod lists" not in off  # an option's pods shared by the call's options

    def decoded(self, store: ByteLRU[bytes, Mapping], raw: bytes, decode) -> Mapping:
        """``decode(raw)`` once per distinct bytes, read-only (``convert``): every call sending
        those bytes is handed the same object."""
        key = _digest(raw)
        found = store.get(key)
        if found is None:
            found = decode(raw)
            store.put(key, found, approx_size(found) + len(key))
        return found


_CACHES: ExpanderCaches | None = None


def caches(sim: Simulator) -> ExpanderCaches:
    """The process's caches, sized from ``sim``'s budget on first use (a process serves with one)."""
    global _CACHES
    if _CACHES is None:
        _CACHES = ExpanderCaches(sim.budgets, sim.config.stores_off)
    return _CACHES


def reset_caches() -> None:
    """Forget what outlives a call (tests: a rolled-back database restarts the generation count)."""
    global _CACHES
    _CACHES = None


@dataclass(frozen=True, slots=True)
class PackingKey:
    """What a packing depends on, declared: every field is in the key (``digest``), so a field added
    here keys packings by it with nothing else to edit. The pods (``pods_digest``), nodeCount, the
    DaemonSets, the template up to names and ids (equivalent groups of one instance type share a
    packing) and the HAMi release's rules the simulator follows."""

    node_count: int
    pods: str
    labels: Mapping[str, str]  # the rule labels only, unless a pod or DaemonSet reads labels
    annotations: Mapping[str, str]  # but registrations (their devices are ``devices``)
    devices: tuple[tuple[str, ...], ...]  # per device, what a fit reads but its UUID
    inventory_error: str
    pair_scores: str
    cordoned: tuple[str, ...]
    spec: object
    status: object
    daemons: str
    rules: str

    def digest(self) -> bytes:
        """The key's bytes: each declared field by name and value, in declaration order."""
        named = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return _digest(orjson.dumps(named, default=repr))


class CallCache:
    """Work shared by the options of one call and, through ``ExpanderCaches``, by later calls.
    CA's options carry the same pending Pods (identical bytes), and groups of one instance type have
    templates that differ only in names and device ids, so pods are decoded once and an option
    equivalent to one already packed reuses its result."""

    def __init__(
        self, sim: Simulator, daemon_pods: Sequence[Mapping] = (), shared: ExpanderCaches | None = None
    ):
        self.sim = sim
        self.daemon_pods = tuple(daemon_pods)
        self.daemon_key = orjson.dumps(self.daemon_pods, default=repr, option=orjson.OPT_SORT_KEYS).hex()
        self.shared = shared or caches(sim)
        # an option's pods by their digest: CA sends every option the same pending pods, so one
        # call decodes and digests a list once, not once per option (100 options x 1,000 pods)
        self.lists: dict[bytes, tuple[list[Mapping], bool]] = {}

    def pod(self, raw: bytes) -> Mapping:
        return self.shared.decoded(self.shared.pods, raw, pod_from_bytes)

    def pods(self, raws: Sequence[bytes], check: Callable[[], None]) -> tuple[bytes, list[Mapping], bool]:
        """An option's pods decoded (``check`` called every 64 pods: the call's deadline), with their
        ``pods_digest`` and whether one reads node labels; a list seen before in this call is not
        decoded again."""
        digest = pods_digest(raws)
        found = self.lists.get(digest)
        if found is None:
            pods = []
            for i, raw in enumerate(raws):
                if i % 64 == 63:
                    check()
                pods.append(self.pod(raw))
            found = (pods, any(_reads_labels(p) for p in pods))
            if self.shared.lists:
                self.lists[digest] = found
        return digest, found[0], found[1]

    def node(self, raw: bytes) -> Mapping:
        return self.shared.decoded(self.shared.nodes, raw, node_from_bytes)

    def key(
        self, node_count: int, digest: bytes, reads_labels: bool, template: Mapping, inventory: Inventory
    ) -> bytes:
        """The ``PackingKey`` of packing the pods (``digest``; ``reads_labels``: one reads node
        labels) ``node_count`` times on ``template``, whose inventory is ``inventory``."""
        meta = template.get("metadata") or {}
        labels = meta.get("labels") or {}
        if not self.daemon_pods and not reads_labels:
            labels = {k: v for k, v in labels.items() if k in _RULE_LABELS}
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if "register" not in k}
        return PackingKey(
            node_count, digest.hex(), labels, annotations,
            tuple(tuple(map(repr, _DEVICE_FIT_READS(d))) for d in inventory.devices), inventory.error,
            repr(inventory.pair_scores), tuple(sorted(inventory.cordoned)), template.get("spec"),
            template.get("status"), self.daemon_key, repr(self.sim.rules),
        ).digest()  # fmt: skip


#: what a fit reads of a device but its UUID (``DeviceInfo.FIT_READS``; names and ids never key a packing)
_DEVICE_FIT_READS = attrgetter(*(f for f in DeviceInfo.FIT_READS if f != "id"))


def _reads_labels(pod: Mapping) -> bool:
    """Whether a pod's placement reads node labels (a nodeSelector or any affinity): then the
    packing key keeps every label of the template, not only the instance type."""
    spec = pod.get("spec") or {}
    return bool(spec.get("nodeSelector") or spec.get("affinity"))


def pods_digest(raw_pods: Sequence[bytes]) -> bytes:
    """One digest of an option's pods in order (options of one call mostly carry the same pods)."""
    h = hashlib.blake2b(digest_size=16)
    for raw in raw_pods:
        h.update(len(raw).to_bytes(4, "little"))
        h.update(raw)
    return h.digest()

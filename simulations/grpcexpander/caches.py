"""What the gRPC expander keeps between options of one call and between calls.

CA sends the same pending pods and templates every scan (10 s) while the pods stay pending, and
groups of one instance type have templates that differ only in names and device ids; decoding and
packing them again each time would make the expander's cost follow CA's scan rate. Decoded objects
are keyed by their bytes' digest and packings by what they depend on, so an edited profile or a
changed pod is a new key, never a stale answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter

import orjson

from hami_sim.engine.cache import ByteLRU, approx_size, cache_bytes_from_env
from hami_sim.engine.hami_expander import Packed
from hami_sim.engine.model import DeviceInfo
from hami_sim.engine.simulate import Simulator

from .convert import node_from_bytes, pod_from_bytes

__all__ = ["ExpanderCaches", "CallCache", "caches", "reset_caches", "pods_digest"]

#: labels the device rules read whatever the pod asks (AWS Neuron's instance type)
_RULE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


class ExpanderCaches:
    """What outlives one call, bounded in bytes (a quarter of ``HAMI_SIM_CACHE_BYTES``, beside the
    simulator's own memos): decoded Pods and Nodes by their bytes' digest, and packings by what they
    depend on. CA sends the same pending pods and templates every scan (10 s) while the pods stay
    pending, so a repeated call decodes and packs nothing again; an edited NodeGroup profile or a
    changed pod changes the key, never a stale answer."""

    def __init__(self, budget: int) -> None:
        self.pods: ByteLRU[bytes, dict] = ByteLRU(budget // 4)
        self.nodes: ByteLRU[bytes, dict] = ByteLRU(budget // 8)
        self.packed: ByteLRU[bytes, Packed] = ByteLRU(budget // 8)

    def decoded(self, store: ByteLRU[bytes, dict], raw: bytes, decode) -> dict:
        """``decode(raw)`` once per distinct bytes; callers never mutate the shared result."""
        key = _digest(raw)
        found = store.get(key)
        if found is None:
            found = decode(raw)
            store.put(key, found, approx_size(found) + len(key))
        return found


_CACHES: ExpanderCaches | None = None


def caches() -> ExpanderCaches:
    """The process's caches, sized from ``HAMI_SIM_CACHE_BYTES`` on first use."""
    global _CACHES
    if _CACHES is None:
        _CACHES = ExpanderCaches(cache_bytes_from_env() // 2)
    return _CACHES


def reset_caches() -> None:
    """Forget what outlives a call (tests: a rolled-back database restarts the generation count)."""
    global _CACHES
    _CACHES = None


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
        self.shared = shared or caches()
        # an option's pods by their digest: CA sends every option the same pending pods, so one
        # call decodes and digests a list once, not once per option (100 options x 1,000 pods)
        self.lists: dict[bytes, tuple[list[dict], bool]] = {}

    def pod(self, raw: bytes) -> dict:
        return self.shared.decoded(self.shared.pods, raw, pod_from_bytes)

    def pods(self, raws: Sequence[bytes], check: Callable[[], None]) -> tuple[bytes, list[dict]]:
        """An option's pods decoded (``check`` called every 64 pods: the call's deadline), with their
        ``pods_digest``; a list seen before in this call is not decoded again."""
        digest = pods_digest(raws)
        found = self.lists.get(digest)
        if found is None:
            pods = []
            for i, raw in enumerate(raws):
                if i % 64 == 63:
                    check()
                pods.append(self.pod(raw))
            found = self.lists[digest] = (pods, any(_reads_labels(p) for p in pods))
        return digest, found[0]

    def node(self, raw: bytes) -> dict:
        return self.shared.decoded(self.shared.nodes, raw, node_from_bytes)

    def key(self, node_count: int, digest: bytes, template: Mapping) -> bytes:
        """What the packing depends on: the pods (``digest``, of a list ``pods`` decoded), nodeCount,
        the DaemonSets, the template up to names and ids (so equivalent groups of one instance type
        share a packing) and the HAMi release's rules the simulator follows."""
        meta = template.get("metadata") or {}
        labels = meta.get("labels") or {}
        if not self.daemon_pods and not self.lists[digest][1]:
            labels = {k: v for k, v in labels.items() if k in _RULE_LABELS}
        inventory = self.sim.inventory(template)
        devices = [tuple(map(repr, _DEVICE_FIT_READS(d))) for d in inventory.devices]
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if "register" not in k}
        shape = [
            node_count, digest.hex(), labels, annotations, devices, inventory.error,
            repr(inventory.pair_scores), sorted(inventory.cordoned), template.get("spec"), template.get("status"),
            self.daemon_key, repr(self.sim.rules),
        ]  # fmt: skip
        return _digest(orjson.dumps(shape, default=repr))


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

"""Filter and prioritize one pod over many nodes: the engine behind the simulation extender.

A node's inventory comes from an ``InventoryResolver`` (annotations by default; the profiles app
adds node-group device profiles). Template nodes repeat across CA loops, so parsed inventories and
zero-usage verdicts are memoised by content digest; nothing from a request object is retained.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from . import reasons as R
from .annotations import DEVICE_CORDON, parse_cordon
from .fit import PodFit, fit_pod
from .model import DeviceInfo, DeviceUsage, InventoryError, NodeState
from .policy import GpuPolicy, Weights, f32, node_score, pod_weights, resolve_gpu_policy, resolve_node_policy
from .requests import PodView, parse_pod
from .vendors import Vendor, default_vendors

__all__ = [
    "EngineConfig",
    "Inventory",
    "InventoryResolver",
    "LiveHook",
    "NodeVerdict",
    "PodContext",
    "Simulator",
    "node_annotations",
    "round_half_up",
]


@dataclass(slots=True, frozen=True)
class EngineConfig:
    """Scheduler-wide defaults (``--node-scheduler-policy``, ``--gpu-scheduler-policy``) and vendors."""

    node_policy: str = "binpack"
    gpu_policy: str = "spread"
    vendors: tuple[Vendor, ...] = field(default_factory=lambda: tuple(default_vendors()))


@dataclass(slots=True)
class Inventory:
    """A node's device inventory, where it came from, and why there is none when there is none."""

    devices: tuple[DeviceInfo, ...] = ()
    pair_scores: dict[str, dict[str, int]] = field(default_factory=dict)
    cordoned: frozenset[str] = frozenset()
    node_group: str | None = None
    source: str = "annotation"  # "annotation" | "profile" | "none"
    error: str = ""  # non-empty: unresolvable (FailedAndUnresolvableNodes)
    key: bytes = b""  # content digest, for memoising verdicts

    def state(self, name: str) -> NodeState:
        return NodeState(
            name, [DeviceUsage.from_info(d) for d in self.devices], self.pair_scores, self.cordoned
        )


InventoryResolver = Callable[[Mapping, "Simulator"], Inventory]
#: A live node's state (its zero state plus what its pods hold), a failure reason, or None (not live)
LiveHook = Callable[[str, Inventory], "NodeState | str | None"]


@dataclass(slots=True)
class PodContext:
    """A parsed pod plus the policies and weights in force for it."""

    pod: PodView
    node_policy: str
    gpu_policy: GpuPolicy
    weights: Weights
    key: bytes


@dataclass(slots=True)
class NodeVerdict:
    """One node's answer for one pod."""

    name: str
    fits: bool
    reason: str = ""
    unresolvable: bool = False
    node_group: str | None = None
    source: str = "annotation"
    fit: PodFit | None = None
    score_after: float = 0.0


_MAPPINGS = (dict, Mapping)  # isinstance tries the exact dict first (decoded JSON), then the ABC


def node_annotations(node: Mapping) -> Mapping[str, str]:
    meta = node.get("metadata")
    if not isinstance(meta, Mapping):
        return {}
    annotations = meta.get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def round_half_up(value: float) -> int:
    return int(value + 0.5)


def _digest(*parts: object) -> bytes:
    return hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_NON_STR_KEYS), digest_size=16).digest()


_RAW_MEMO_MAX_CHARS = 16384


def _memo_text_size(parts: list) -> int:
    """Characters of registration text in an inventory key (bounds what the raw memo may keep)."""
    size = 0
    for part in parts:
        if isinstance(part, str):
            size += len(part)
        elif isinstance(part, tuple):
            for item in part:
                if isinstance(item, str):
                    size += len(item)
                elif item is not None and not isinstance(item, int | float):
                    return _RAW_MEMO_MAX_CHARS + 1  # not plain text: use the digest path
    return size


class _Memo:
    """A bounded FIFO memo (thread-safe enough under the GIL for our use)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data: dict[object, object] = {}

    def get(self, key: object) -> object | None:
        return self.data.get(key)

    def put(self, key: object, value: object) -> None:
        data = self.data
        if len(data) >= self.limit:
            try:
                del data[next(iter(data))]
            except (StopIteration, KeyError, RuntimeError):
                data.clear()
        data[key] = value

    def clear(self) -> None:
        self.data.clear()


class Simulator:
    """Stateless HAMi simulation over template nodes."""

    def __init__(self, config: EngineConfig | None = None, resolver: InventoryResolver | None = None) -> None:
        self.config = config or EngineConfig()
        self.vendors: dict[str, Vendor] = {v.common_word: v for v in self.config.vendors}
        # which vendors a node's annotation keys / capacity names call in (vendors that declare
        # no sources read every node); most nodes register one or two of the ~25 backends
        self._vendor_list = list(self.vendors.values())
        self._always: list[int] = []
        self._by_annotation: dict[str, list[int]] = {}
        self._by_capacity: dict[str, list[int]] = {}
        for i, vendor in enumerate(self._vendor_list):
            sources = vendor.registration_sources()
            if sources is None:
                self._always.append(i)
                continue
            for key in sources[0]:
                self._by_annotation.setdefault(key, []).append(i)
            for name in sources[1]:
                self._by_capacity.setdefault(name, []).append(i)
        self._always_vendors = [self._vendor_list[i] for i in self._always]
        self.resolver = resolver
        self._inventories = _Memo(20000)
        self._raw_inventories = _Memo(20000)
        self._verdicts = _Memo(50000)

    def clear_caches(self) -> None:
        self._inventories.clear()
        self._raw_inventories.clear()
        self._verdicts.clear()

    # -- pods ---------------------------------------------------------------------------------------
    def pod_context(self, pod: Mapping) -> PodContext:
        """Parse a pod and resolve its policies. Raises ``PodError`` or ``WeightsError``."""
        view = parse_pod(pod, list(self.vendors.values()))
        annotations = view.annotations
        # HAMi reads the weights only for pods that request a device (calcScore runs after the
        # no-request early return), so a bad annotation on such a pod is not an error.
        weights = pod_weights(annotations) if view.requests.has_requests else Weights()
        numa_bind = any(vendor.binds_numa(annotations) for vendor in self._vendor_list)
        gpu_policy = resolve_gpu_policy(annotations, self.config.gpu_policy, numa_bind)
        node_policy = resolve_node_policy(annotations, self.config.node_policy)
        key = _digest(repr(view.requests), sorted(annotations.items()), node_policy)
        return PodContext(view, node_policy, gpu_policy, weights, key)

    def managed_resources(self) -> frozenset[str]:
        names: set[str] = set()
        for vendor in self.vendors.values():
            names |= vendor.resource_names()
        return frozenset(names)

    # -- inventories -----------------------------------------------------------------------------
    def _node_vendors(self, annotations: Mapping[str, str], node: Mapping) -> list[Vendor]:
        """The vendors that can find devices on ``node``, in registration order.

        One dictionary lookup per annotation key and capacity name: this runs for every node of
        every CA call, so it must stay far below the cost of the digest.
        """
        found: set[int] | None = None
        by_annotation = self._by_annotation
        for key in annotations:
            hit = by_annotation.get(key)
            if hit is not None:
                found = set(hit) if found is None else found.union(hit)
        by_capacity = self._by_capacity
        if by_capacity:
            status = node.get("status")
            capacity = status.get("capacity") if isinstance(status, _MAPPINGS) else None
            if isinstance(capacity, _MAPPINGS):
                for name in capacity:
                    hit = by_capacity.get(name)
                    if hit is not None:
                        found = set(hit) if found is None else found.union(hit)
        if found is None:
            return self._always_vendors
        found.update(self._always)
        return [self._vendor_list[i] for i in sorted(found)]

    def annotation_inventory(self, node: Mapping) -> Inventory:
        """Devices from the node's own registration annotations (HAMi ``buildTransientNodeInfo``)."""
        annotations = node_annotations(node)
        node_vendors = self._node_vendors(annotations, node)
        parts = [annotations.get(DEVICE_CORDON)]
        for vendor in node_vendors:
            parts.append(vendor.inventory_key(annotations, node))
        # Fast path: small registrations are looked up by their own (hashable) text, which costs a
        # string hash instead of a serialisation + digest; large or odd ones go by digest only.
        raw: tuple | None = tuple(parts) if _memo_text_size(parts) <= _RAW_MEMO_MAX_CHARS else None
        if raw is not None:
            try:
                cached = self._raw_inventories.get(raw)
            except TypeError:
                raw, cached = None, None
            if cached is not None:
                return cached  # type: ignore[return-value]
        key = _digest(parts)
        cached = self._inventories.get(key)
        if cached is not None:
            if raw is not None:
                self._raw_inventories.put(raw, cached)
            return cached  # type: ignore[return-value]
        devices: list[DeviceInfo] = []
        pair_scores: dict[str, dict[str, int]] = {}
        first_error = ""
        for vendor in node_vendors:
            try:
                found, scores = vendor.node_devices(annotations, node)
            except InventoryError as exc:
                first_error = first_error or str(exc)
                continue
            devices.extend(found)
            pair_scores.update(scores)
        if devices:
            inventory = Inventory(
                tuple(devices), pair_scores, parse_cordon(annotations.get(DEVICE_CORDON)), key=key
            )
        else:
            inventory = Inventory(source="none", error=first_error or R.NODE_UNREGISTERED, key=key)
        self._inventories.put(key, inventory)
        if raw is not None:
            self._raw_inventories.put(raw, inventory)
        return inventory

    def inventory(self, node: Mapping) -> Inventory:
        if self.resolver is not None:
            return self.resolver(node, self)
        return self.annotation_inventory(node)

    # -- evaluation --------------------------------------------------------------------------------
    def evaluate(self, ctx: PodContext, name: str, state: NodeState) -> NodeVerdict:
        """Fit the pod on a node state (which is not mutated)."""
        fit = fit_pod(state, ctx.pod, self.vendors, ctx.gpu_policy, ctx.weights, ctx.node_policy)
        verdict = NodeVerdict(name, fit.ok, fit.reason, fit=fit)
        if fit.ok and fit.usage_after is not None:
            # HAMi's node score = usage score + the vendors' ScoreNode (OverrideScore)
            score = node_score(fit.usage_after)
            verdict.score_after = f32(score + fit.vendor_score) if fit.vendor_score else score
        return verdict

    def filter_nodes(
        self,
        ctx: PodContext,
        nodes: Sequence[Mapping],
        states: Mapping[str, NodeState] | None = None,
        live: LiveHook | None = None,
    ) -> list[NodeVerdict]:
        """One verdict per node, in input order. ``states`` overrides usage (sessions); ``live``
        gives a live node's usage (or why it fails) for the nodes ``states`` does not hold."""
        verdicts: list[NodeVerdict] = []
        has_requests = ctx.pod.requests.has_requests
        for node in nodes:
            name = node["metadata"]["name"]
            if not has_requests:
                verdicts.append(NodeVerdict(name, True))
                continue
            inventory = self.inventory(node)
            if inventory.error:
                verdicts.append(
                    NodeVerdict(name, False, inventory.error, True, inventory.node_group, inventory.source)
                )
                continue
            session_state = states.get(name) if states else None
            if session_state is None and live is not None:
                found = live(name, inventory)
                if isinstance(found, str):
                    verdicts.append(
                        NodeVerdict(name, False, found, False, inventory.node_group, inventory.source)
                    )
                    continue
                session_state = found
            if session_state is not None:
                verdict = self.evaluate(ctx, name, session_state)
            else:
                memo_key = inventory.key + ctx.key
                cached = self._verdicts.get(memo_key)
                if cached is None:
                    cached = self.evaluate(ctx, name, inventory.state(name))
                    self._verdicts.put(memo_key, cached)
                verdict = NodeVerdict(
                    name, cached.fits, cached.reason, False, fit=cached.fit, score_after=cached.score_after
                )
            verdict.node_group = inventory.node_group
            verdict.source = inventory.source
            verdicts.append(verdict)
        return verdicts

    def prioritize_score(self, ctx: PodContext, verdict: NodeVerdict) -> int:
        """Extender score 0..10 from HAMi's node score after placing the pod (design.md 2.2).

        The raw score includes the vendors' ``ScoreNode`` (MetaX 2000 - loss, MetaX sGPU +-10000 x
        topology, Kunlunxin -1000..2000, Ascend 910 up to 10 per container), so it can leave 0..30:
        ``round_half_up(raw / 3)`` is clamped to 0..10. Such a node keeps the side HAMi would pick
        it from (binpack: high -> 10; spread: very low -> 10, very high -> 0); the order among nodes
        beyond the range is lost, as an extender can only answer 0..10.
        """
        scaled = round_half_up(verdict.score_after / 3)
        scaled = max(0, min(10, scaled))
        return 10 - scaled if ctx.node_policy == "spread" else scaled

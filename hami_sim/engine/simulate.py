"""Filter and prioritize one pod over many nodes: the engine behind the simulation extender.

For each node: its inventory (decoded from its registration, or from an ``InventoryResolver``: the
profiles app adds node-group device profiles), then the pod's verdict on it: at the usage a session
gives, at a live node's usage, or at zero usage (CA's template nodes). Decoded inventories and the
verdicts computed on them are remembered in one cache, an entry per registration
(``cache.RegistrationCache``, bounded by ``EngineConfig.cache_bytes``), because CA asks the same
question about the same nodes every loop; the cache holds immutable values and nothing of a request.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import orjson

from .allocations import LiveUsageLike, apply_usage
from .annotations import DEVICE_CORDON
from .cache import (
    ByteLRU,
    CachedVerdict,
    Entry,
    RegistrationCache,
    Relabelled,
    cache_bytes_from_env,
    sharing_of,
    uuid_blind_devices,
    without_usage,
)
from .cache_entries import key_bytes
from .fit import PodFit, fit_pod
from .hami_releases import DEFAULT_RELEASE, HamiRules, rules_for
from .model import Inventory, NodeState, PodView
from .names import TEMPLATE_PREFIX
from .node_kinds import (
    NodeKinds,
    digest,
    node_annotations,
    parse_inventory,
    text_key_size,
    unique_key,
)
from .policy import GpuPolicy, Weights, f32, node_score, pod_weights, resolve_gpu_policy, resolve_node_policy
from .requests import parse_pod
from .sightings import ResolverState, SightedNodes, Sightings, names_of, sighted_inventories
from .stores import POD_KEY_MAX, budgets, new_store, off_from_env
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
    """Scheduler-wide defaults (``--node-scheduler-policy``, ``--gpu-scheduler-policy``), vendors,
    the bytes its cache may hold (``HAMI_SIM_CACHE_BYTES`` unless given), the HAMi release it follows."""

    node_policy: str = "binpack"
    gpu_policy: str = "spread"
    vendors: tuple[Vendor, ...] = field(default_factory=lambda: tuple(default_vendors()))
    cache_bytes: int = field(default_factory=cache_bytes_from_env)
    hami_release: str = DEFAULT_RELEASE  # "2.8", "2.9" or "2.10" (``hami_releases``)
    hami_rules: HamiRules | None = None  # other rules than the release's (one rule from another)
    stores_off: frozenset[str] = field(default_factory=off_from_env)  # ``stores.NO_STORE_ENV`` (A/B)


#: A node's inventory by another rule than its own registration (the profiles app: node groups). A
#: resolver whose answers depend on more than the node says so by a ``state`` attribute
#: (``sightings.ResolverState``); nodes it resolves are remembered by their bytes only then.
InventoryResolver = Callable[[Mapping, "Simulator"], Inventory]


#: A live node's usage, a failure reason, or None (not live: evaluated at zero usage, as a template).
LiveHook = Callable[[str], "LiveUsageLike | str | None"]


@dataclass(slots=True, frozen=True)
class PodContext:
    """A parsed pod plus the policies and weights in force for it; ``key`` is what a verdict for it
    depends on (``PodView.FIT_READS`` and the node policy). Shared between calls: never changed."""

    pod: PodView
    node_policy: str
    gpu_policy: GpuPolicy
    weights: Weights
    key: bytes
    # every request's vendor treats UUIDs as identities for this pod (``Vendor.fit_ignores_uuids``):
    # its zero-usage verdicts may be shared between nodes that differ only in their UUIDs
    uuid_blind: bool = False


@dataclass(slots=True)
class NodeVerdict:
    """One node's answer for one pod (the caller's own; its ``fit`` is shared and frozen)."""

    name: str
    fits: bool
    reason: str = ""
    unresolvable: bool = False
    node_group: str | None = None
    source: str = "annotation"
    device_fit: PodFit | Relabelled | None = None  # the fit, or how this node has a shared one (``fit``)
    score_after: float = 0.0

    @property
    def fit(self) -> PodFit | None:
        """Which devices the pod got and why the others were refused (None: no device requested)."""
        found = self.device_fit
        return found.fit if type(found) is Relabelled else found  # type: ignore[return-value]


def round_half_up(value: float) -> int:
    return int(value + 0.5)


def _fit_reads(view: PodView) -> tuple:
    """The pod as a verdict sees it: its ``PodView.FIT_READS`` fields, mappings in key order."""
    parts: list[object] = []
    for name in PodView.FIT_READS:
        value = getattr(view, name)
        parts.append(sorted(value.items()) if isinstance(value, Mapping) else repr(value))
    return tuple(parts)


class Simulator:
    """HAMi's filter over nodes, with the filter path's one cache (``cache.RegistrationCache``) and
    a small memo of parsed pods and of which vendors read a kind of node (``cache_stats``). Safe to
    share between a worker's threads; answers never depend on what it remembers."""

    def __init__(self, config: EngineConfig | None = None, resolver: InventoryResolver | None = None) -> None:
        self.config = config or EngineConfig()
        # the release's rules, resolved once: nothing per node asks which release this is
        self.rules: HamiRules = self.config.hami_rules or rules_for(self.config.hami_release)
        self._fit_pod = partial(fit_pod, rules=self.rules)
        rules = self.rules
        followed = [v.under(rules) for v in self.config.vendors]  # (a release may swap or lack one)
        self.vendors: dict[str, Vendor] = {v.common_word: v for v in followed if v is not None}
        self._vendor_list = list(self.vendors.values())
        self.resolver = resolver
        # one budget, split by ``stores.STORES`` (the expander's stores included: ``self.budgets``)
        self.budgets = sizes = budgets(self.config.cache_bytes, self.config.stores_off)
        # nodes by their bytes: a node sent again is not decoded again (warm 1.49 -> 0.59, live 1.88 -> 0.76)
        self.sightings = Sightings(sizes["node bytes"])
        self._resolver_state: ResolverState | None = getattr(resolver, "state", None)
        self._sighting = resolver is None or self._resolver_state is not None
        self.templates = new_store("registration templates", sizes)  # alike but for UUIDs: decoded once
        self.cache = RegistrationCache(sizes["registrations"], self.config.stores_off)
        self._pods: ByteLRU[bytes, PodContext] = new_store("pods", sizes)  # parsing and a digest per call
        self.kinds = NodeKinds(self._vendor_list, sizes["node kinds"])  # which vendors read a kind of node
        self._kind_of = self.kinds.plan  # (bound once: this runs for every node of every call)

    def clear_caches(self) -> None:
        """Forget everything remembered (every node and pod new again)."""
        self.cache.clear()
        self.sightings.clear()
        self._pods.clear()
        self.kinds.clear()
        self.templates.clear()

    def cache_stats(self) -> dict[str, int]:
        """The simulator's caches together: entries, accounted bytes (at most ``config.cache_bytes``),
        hits, misses, evictions, entries refused. Per cache: ``cache.cache_metrics``."""
        total: dict[str, int] = {}
        for lru in (self.cache.lru, self.sightings.lru, self._pods, self.kinds.lru, self.templates):
            for name, value in lru.stats().items():
                total[name] = total.get(name, 0) + value
        return total

    # -- pods ---------------------------------------------------------------------------------------
    def pod_context(self, pod: Mapping) -> PodContext:
        """Parse a pod and resolve its policies. Raises ``PodError`` or ``WeightsError``.

        CA asks about the same pending pod call after call: a context is remembered by the pod's
        JSON (pods up to 16 KB). It is shared, so no caller may change it.
        """
        try:
            raw: bytes | None = orjson.dumps(pod)
        except (TypeError, orjson.JSONEncodeError):
            raw = None
        if raw is None or len(raw) > POD_KEY_MAX:
            return self._pod_context(pod)
        ctx = self._pods.get(raw)
        if ctx is None:
            ctx = self._pod_context(pod)
            self._pods.put(raw, ctx, 2 * len(raw) + 1024)  # the key, and a parsed pod of that size
        return ctx

    def _pod_context(self, pod: Mapping) -> PodContext:
        view = parse_pod(pod, list(self.vendors.values()))
        annotations = view.annotations
        # HAMi reads the weights only for pods that request a device (calcScore runs after the
        # no-request early return), so a bad annotation on such a pod is not an error.
        rules = self.rules
        weights = (
            pod_weights(annotations) if view.requests.has_requests and rules.scoring_weights else Weights()
        )
        numa_bind = any(vendor.binds_numa(annotations) for vendor in self._vendor_list)
        gpu_policy = resolve_gpu_policy(annotations, self.config.gpu_policy, numa_bind, rules)
        node_policy = resolve_node_policy(annotations, self.config.node_policy)
        key = digest(*_fit_reads(view), node_policy)
        vendors = self.vendors
        uuid_blind = view.requests.has_requests and all(
            vtype in vendors and vendors[vtype].fit_ignores_uuids(annotations)
            for container in view.requests.containers
            for vtype in container
        )
        return PodContext(view, node_policy, gpu_policy, weights, key, uuid_blind)

    def managed_resources(self) -> frozenset[str]:
        names: set[str] = set()
        for vendor in self.vendors.values():
            names |= vendor.resource_names()
        return frozenset(names)

    # -- inventories -----------------------------------------------------------------------------
    def annotation_inventory(self, node: Mapping) -> Inventory:
        """Devices from the node's own registration annotations (HAMi ``buildTransientNodeInfo``),
        from the cache when this registration was seen before.

        The key is what the node's vendors read: the values of their annotations (after the vendors'
        positions) when that is all they read, else each vendor's ``inventory_key``; a digest of it
        beyond 16 K characters of text (``node_kinds.text_key_size``). Inline: it runs per node.
        """
        annotations = node_annotations(node)
        plan = self._kind_of(annotations, node)
        if plan.keys is not None:  # what its vendors read is annotations only: their values
            parts: tuple = (plan.tag, *map(annotations.get, plan.keys))
        else:
            read: list[object] = [annotations.get(DEVICE_CORDON)]
            for vendor in plan.vendors:
                read.append(vendor.inventory_key(annotations, node))
            parts = tuple(read)
        key: Hashable = parts
        try:
            found = self.cache.inventory(key)
        except TypeError:  # an unhashable value: by digest
            found, key = None, b""
        if found is not None:
            return found
        key_size = text_key_size(parts) if key != b"" else None
        if key_size is None:
            key = digest(parts)
            found = self.cache.inventory(key)
            if found is not None:
                return found
            inventory_id, key_size = key, key_bytes(key)
        else:
            inventory_id = unique_key()
        inventory = parse_inventory(annotations, node, plan.vendors, inventory_id, Entry(key), self.templates)
        return self.cache.add(inventory, key_size)

    def tag_inventory(self, inventory: Inventory, node_group: str, source: str | None = None) -> Inventory:
        """``inventory`` attributed to a node group (and a source): a copy kept in the original's
        cache entry (resolvers keep no memo of their own), sharing its devices and verdicts."""
        return self.cache.tagged(inventory, node_group, source or inventory.source)

    def inventory(self, node: Mapping) -> Inventory:
        if self.resolver is not None:
            return self.resolver(node, self)
        return self.annotation_inventory(node)

    def inventories(self, nodes: Sequence[Mapping]) -> Iterator[tuple[str, Inventory]]:
        """Each node's name and inventory, in order; nodes as the wire sent them (``SightedNodes``)
        by their bytes first (``sightings.inventories``)."""
        inventory_of = self.annotation_inventory if self.resolver is None else self.inventory
        if not isinstance(nodes, SightedNodes) or not self._sighting:
            return ((node["metadata"]["name"], inventory_of(node)) for node in nodes)
        state = self._resolver_state() if self._resolver_state is not None else None
        return sighted_inventories(nodes, inventory_of, self.sightings, self.cache.touch, state)

    # -- evaluation --------------------------------------------------------------------------------
    def evaluate(self, ctx: PodContext, name: str, state: NodeState, *, owned: bool = False) -> NodeVerdict:
        """Fit the pod on a node state (not mutated, unless ``owned``: built for this one fit)."""
        fit = self._fit_pod(
            state, ctx.pod, self.vendors, ctx.gpu_policy, ctx.weights, ctx.node_policy, owned=owned
        )
        verdict = NodeVerdict(name, fit.ok, fit.reason, device_fit=fit)
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
        gives a live node's usage (or why it fails) for the nodes ``states`` does not hold. ``live``
        is not asked about CA's template nodes (``TEMPLATE_PREFIX``): they are never live.

        This loop runs for every node of every CA call: a node seen before with this pod costs its
        cache key, one lookup for its inventory and one for the verdict.
        """
        if not ctx.pod.requests.has_requests:
            return [NodeVerdict(name, True) for name in names_of(nodes)]
        verdicts: list[NodeVerdict] = []
        append = verdicts.append
        ctx_key = ctx.key
        for name, inventory in self.inventories(nodes):
            if inventory.error:
                append(
                    NodeVerdict(name, False, inventory.error, True, inventory.node_group, inventory.source)
                )
                continue
            session_state = states.get(name) if states else None
            if session_state is not None:
                verdict = self.evaluate(ctx, name, session_state)
                verdict.node_group, verdict.source = inventory.node_group, inventory.source
                append(verdict)
                continue
            found = live(name) if live is not None and not name.startswith(TEMPLATE_PREFIX) else None
            if isinstance(found, str):
                append(NodeVerdict(name, False, found, False, inventory.node_group, inventory.source))
                continue
            cached: CachedVerdict | None
            if found is not None:
                cached = self._live_verdict(ctx, name, inventory, found)
            else:
                entry = inventory.entry
                cached = entry.verdicts.get(ctx_key) if entry is not None else None
                if cached is None:
                    cached = self._zero_usage_verdict(ctx, name, inventory)
            append(
                NodeVerdict(
                    name,
                    cached.fits,
                    cached.reason,
                    False,
                    inventory.node_group,
                    inventory.source,
                    cached.fit,
                    cached.score_after,
                )
            )
        return verdicts

    def _fresh(self, ctx: PodContext, name: str, state: NodeState) -> CachedVerdict:
        verdict = self.evaluate(ctx, name, state, owned=True)
        return CachedVerdict(verdict.fits, verdict.reason, without_usage(verdict.fit), verdict.score_after)

    def _live_verdict(
        self, ctx: PodContext, name: str, inventory: Inventory, usage: LiveUsageLike
    ) -> CachedVerdict:
        """The pod on a live node: its registered devices carrying ``usage``; remembered beside that
        usage object (the store hands out a new one only when the node's usage changes)."""
        cached = self.cache.live_verdict(inventory, ctx.key, usage)
        if cached is None:
            cached = self._verdict(ctx, name, inventory, usage)
            self.cache.remember_live(inventory, ctx.key, usage, cached)
        return cached

    def _zero_usage_verdict(self, ctx: PodContext, name: str, inventory: Inventory) -> CachedVerdict:
        """The pod on the node's registered devices with no usage; remembered."""
        cached = self._verdict(ctx, name, inventory, None)
        self.cache.remember(inventory, ctx.key, cached)
        return cached

    def _verdict(
        self, ctx: PodContext, name: str, inventory: Inventory, live: LiveUsageLike | None
    ) -> CachedVerdict:
        """The pod on the node's devices (carrying ``live`` usage, if any): shared with the nodes of
        its shape at equal usage per device when neither side reads UUIDs (``cache.sharing_of``), else
        fit."""
        usage = live.devices if live is not None else None
        sharing = sharing_of(inventory, live) if ctx.uuid_blind else None
        cached = self.cache.shared(sharing, ctx.key) if sharing is not None else None
        if cached is None:
            state = inventory.state(name)
            if usage:
                apply_usage(state, usage, in_place=True)
            cached = self._fresh(ctx, name, state)
            if sharing is not None and uuid_blind_devices(inventory, self.vendors):
                self.cache.share(sharing, ctx.key, cached)
        return cached

    def prioritize_score(self, ctx: PodContext, verdict: NodeVerdict) -> int:
        """Extender score 0..10 from HAMi's node score after placing the pod. The raw score includes
        the vendors' ``ScoreNode`` (MetaX 2000 - loss, MetaX sGPU +-10000 x topology, Kunlunxin
        -1000..2000, Ascend 910 up to 10 per container), so it can leave 0..30: ``round_half_up(raw
        / 3)`` is clamped to 0..10. Such a node keeps the side HAMi would pick it from (binpack: high
        -> 10; spread: very low -> 10, very high -> 0); the order beyond the range is lost."""
        scaled = max(0, min(10, round_half_up(verdict.score_after / 3)))
        return 10 - scaled if ctx.node_policy == "spread" else scaled

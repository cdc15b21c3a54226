"""CA's gRPC expander (``grpcplugin.Expander/BestOptions``, design.md section 11).

CA asks which of its scale-up options to keep. Each option (a node group id, ``nodeCount`` new
nodes, the pods it would help) is packed with HAMi's device rules by the estimator's packer
(``hami_sim.engine.estimate.estimate``) onto ``nodeCount`` fresh nodes of the group's template: CA's
template Node from ``nodeMap`` when it carries a registration annotation, else merged with the
template rendered from the NodeGroup's device profiles. The answer is a set, not a ranking: CA keeps
what we return, narrows a several-option answer with its next expander, gives up this loop on an
empty answer and keeps every option on an error - so a bad option is dropped alone, never the call.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml
from google.protobuf.message import DecodeError

from hami_sim.conf import conf
from hami_sim.engine.cache import ByteLRU, approx_size, cache_bytes_from_env
from hami_sim.engine.estimate import EstimateError, GroupOption, GroupTemplate, PendingPods, estimate
from hami_sim.engine.scaleup import daemon_set_pod
from hami_sim.engine.simulate import NodeVerdict, Simulator
from hami_sim.runtime.simulator import get_simulator
from profiles.inventory import Catalog, GroupEntry, catalog, find_group

from ..extender import ExtenderArgs
from ..signals import filter_answered
from .convert import node_from_bytes, pod_from_bytes
from .protos import expander_pb2 as pb

__all__ = [
    "RETURN_MODES",
    "OptionVerdict",
    "CallCache",
    "ExpanderCaches",
    "evaluate",
    "choose",
    "best_options",
    "load_daemon_sets",
    "reset_caches",
]

log = logging.getLogger("hami_sim.expander")
RETURN_MODES = ("most-placed", "least-gpu-waste")
MAX_NODE_COUNT = 1000  # CA's default --max-nodes-total is 0 (no limit); 1000 bounds one option's packing
# (a larger option is judged on its first 1000 nodes, never dropped for its size)


@dataclass(slots=True)
class OptionVerdict:
    """What became of one option: kept or not, and why (the decision record's per-group line)."""

    node_group: str
    node_count: int
    debug: str = ""
    placed: int = 0
    total: int = 0
    nodes_used: int = 0
    gpu_waste: float = 0.0
    kept: bool = False
    malformed: bool = False
    reason: str = ""
    template: Mapping | None = None
    first_pod: Mapping | None = None
    daemon_pods: tuple[str, ...] = ()  # DaemonSet pods placed on each new node first


def _template(sim: Simulator, template: Mapping | None, group: GroupEntry | None) -> Mapping | None:
    """CA's template when it is registered; else CA's template completed from the group's profile."""
    if template is not None and not sim.annotation_inventory(template).error:
        return template
    if group is None or group.template is None:
        return template
    rendered = group.template
    if template is None:
        return rendered
    meta, base_meta = dict(template.get("metadata") or {}), rendered["metadata"]
    meta["annotations"] = {**(base_meta.get("annotations") or {}), **(meta.get("annotations") or {})}
    meta["labels"] = {**(base_meta.get("labels") or {}), **(meta.get("labels") or {})}
    status = template.get("status") or {}
    base_status = rendered.get("status") or {}
    merged_status = {
        key: {**(base_status.get(key) or {}), **(status.get(key) or {})}
        for key in ("capacity", "allocatable")
    }
    return {**template, "metadata": meta, "status": merged_status}


def _why_none(unschedulable: Mapping[str, str]) -> str:
    reasons = Counter(unschedulable.values())
    if not reasons:
        return "no pods in the option"
    reason, count = reasons.most_common(1)[0]
    return f"no pod fits a new node ({count} pod(s): {reason})"


#: labels the device rules read whatever the pod asks (AWS Neuron's instance type)
_RULE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")

#: (placed, total, nodes used, gpu waste, reason when none placed, DaemonSet pods on each new node)
Packed = tuple[int, int, int, float, str, tuple[str, ...]]


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

    def pod(self, raw: bytes) -> dict:
        return self.shared.decoded(self.shared.pods, raw, pod_from_bytes)

    def node(self, raw: bytes) -> dict:
        return self.shared.decoded(self.shared.nodes, raw, node_from_bytes)

    def key(self, option: pb.Option, pods: Sequence[Mapping], template: Mapping) -> bytes:
        """What the packing depends on: the pods, nodeCount, the DaemonSets, and the template up to
        names and ids (so equivalent groups of one instance type share a packing)."""
        meta = template.get("metadata") or {}
        labels = meta.get("labels") or {}
        if not self.daemon_pods and not any((p.get("spec") or {}).get("nodeSelector") for p in pods):
            labels = {k: v for k, v in labels.items() if k in _RULE_LABELS}
        inventory = self.sim.inventory(template)
        devices = [
            (d.index, d.count, d.devmem, d.devcore, d.type, d.numa, d.mode, d.health, repr(d.mig_profiles),
             d.device_vendor, repr(d.custom_info))
            for d in inventory.devices
        ]  # fmt: skip
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if "register" not in k}
        shape = [
            option.nodeCount, pods_digest(option).hex(), labels, annotations, devices, inventory.error,
            repr(inventory.pair_scores), sorted(inventory.cordoned), template.get("spec"), template.get("status"),
            self.daemon_key,
        ]  # fmt: skip
        return _digest(orjson.dumps(shape, default=repr))


def pods_digest(option: pb.Option) -> bytes:
    """One digest of an option's pods in order (options of one call mostly carry the same pods)."""
    h = hashlib.blake2b(digest_size=16)
    for raw in option.pod:
        h.update(len(raw).to_bytes(4, "little"))
        h.update(raw)
    return h.digest()


def _packed(option: GroupOption) -> Packed:
    placed = len(option.scheduled)
    return (
        placed,
        placed + len(option.unschedulable),
        option.node_count,
        round(option.waste.gpu_memory + option.waste.gpu_cores, 9),
        "" if placed else _why_none(option.unschedulable),
        tuple(option.daemon_pods),
    )


@dataclass(slots=True)
class _Pending:
    """An option resolved and waiting for its packing."""

    verdict: OptionVerdict
    option: pb.Option
    pods: list[dict]
    template: Mapping
    key: bytes = b""


def _estimate(cache: CallCache, pods: list[dict], items: Sequence[_Pending]) -> list[Packed]:
    """Pack one pod list onto each item's template in ONE estimator call (the pods are parsed and
    grouped once for all templates); groups are packed independently, as CA's estimator does."""
    names: Counter[str] = Counter()
    groups = []
    for item in items:
        names[item.option.nodeGroupId] += 1
        count = names[item.option.nodeGroupId]
        name = item.option.nodeGroupId if count == 1 else f"{item.option.nodeGroupId}#{count}"
        groups.append(
            GroupTemplate(name, item.template, item.option.nodeCount, daemon_pods=cache.daemon_pods)
        )
    result = estimate(cache.sim, [PendingPods(p) for p in pods], groups)
    return [_packed(o) for o in result.options]


def _pack_all(cache: CallCache, pending: Sequence[_Pending]) -> None:
    """Fill every pending verdict: from the shared packings when an equivalent option was packed
    already (this call or an earlier one), else batched by pod list. A batch the estimator refuses
    (one unusable template) is packed option by option, so only the bad option is marked."""
    todo: dict[bytes, list[_Pending]] = {}
    done: dict[bytes, Packed] = {}
    for item in pending:
        item.key = cache.key(item.option, item.pods, item.template)
        found = cache.shared.packed.get(item.key)
        if found is None:
            todo.setdefault(pods_digest(item.option), []).append(item)
        else:
            done[item.key] = found
    for batch in todo.values():
        unique = list({item.key: item for item in batch}.values())
        try:
            results = _estimate(cache, unique[0].pods, unique)
        except EstimateError:
            results = [_estimate_alone(cache, item) for item in unique]
        for item, packed in zip(unique, results, strict=True):
            if packed is not None:
                done[item.key] = packed
                cache.shared.packed.put(item.key, packed, approx_size(packed) + len(item.key))
    for item in pending:
        found = done.get(item.key)
        if found is not None:
            v = item.verdict
            v.placed, v.total, v.nodes_used, v.gpu_waste, v.reason, v.daemon_pods = found


def _estimate_alone(cache: CallCache, item: _Pending) -> Packed | None:
    """One option's packing; None (the option marked malformed) when the estimator refuses it."""
    try:
        return _estimate(cache, item.pods, [item])[0]
    except EstimateError as exc:
        item.verdict.malformed = True
        item.verdict.reason = f"malformed option: {exc}"
        return None


def _resolve(
    cache: CallCache, option: pb.Option, node_map: Mapping[str, bytes], groups: Catalog
) -> tuple[OptionVerdict, _Pending | None]:
    """Decode and check one option; a malformed one comes back ``malformed`` with the reason."""
    verdict = OptionVerdict(option.nodeGroupId, option.nodeCount, option.debug)
    try:
        if not option.nodeGroupId:
            raise EstimateError("no nodeGroupId")
        if option.nodeCount <= 0:
            raise EstimateError(f"nodeCount {option.nodeCount} is not a positive number of nodes")
        if option.nodeCount > MAX_NODE_COUNT:
            # a larger scale-up is still an option CA may take: judge it on the first MAX_NODE_COUNT
            # nodes (CA sizes it again anyway) rather than drop it and leave CA with no scale-up
            option.nodeCount = MAX_NODE_COUNT
        pods = [cache.pod(raw) for raw in option.pod]
        verdict.first_pod = pods[0] if pods else None
        raw_node = node_map.get(option.nodeGroupId)
        template = cache.node(raw_node) if raw_node is not None else None
        template = _template(cache.sim, template, find_group(option.nodeGroupId, template, groups))
        if template is None:
            raise EstimateError("no template Node in nodeMap and no node group of that id")
        verdict.template = template
        return verdict, _Pending(verdict, option, pods, template)
    except (DecodeError, EstimateError, ValueError, TypeError) as exc:
        verdict.malformed = True
        verdict.reason = f"malformed option: {exc}"
        return verdict, None


def evaluate(
    cache: CallCache, options: Sequence[pb.Option], node_map: Mapping[str, bytes], groups: Catalog
) -> list[OptionVerdict]:
    """Every option's verdict, in CA's order; a malformed option is marked, never raises."""
    resolved = [_resolve(cache, option, node_map, groups) for option in options]
    _pack_all(cache, [item for _, item in resolved if item is not None])
    return [verdict for verdict, _ in resolved]


def choose(verdicts: Sequence[OptionVerdict], mode: str) -> list[OptionVerdict]:
    """Mark and return the options to keep: those placing the most pods (``most-placed``), or the one
    of those with the least GPU waste, earliest on ties (``least-gpu-waste``)."""
    viable = [v for v in verdicts if not v.malformed and v.placed]
    if not viable:
        return []
    most = max(v.placed for v in viable)
    kept = [v for v in viable if v.placed == most]
    for v in viable:
        if v.placed < most:
            v.reason = f"places {v.placed}/{v.total} pod(s); other options place {most}"
    if mode == "least-gpu-waste" and len(kept) > 1:
        best = min(kept, key=lambda v: v.gpu_waste)
        for v in kept:
            if v is not best:
                v.reason = (
                    f"gpu waste {v.gpu_waste:.3f} is more than {best.node_group!r}'s {best.gpu_waste:.3f}"
                )
        kept = [best]
    for v in kept:
        v.kept = True
        v.reason = (
            f"kept: places {v.placed}/{v.total} pod(s) on {v.nodes_used} of {v.node_count} new node(s), "
            f"gpu waste {v.gpu_waste:.3f}"
        )
    for v in verdicts:
        if v.daemon_pods and not v.malformed:
            v.reason += f" (after DaemonSet pods {', '.join(v.daemon_pods)} on each new node)"
    return kept


def _record(sim: Simulator, verdicts: Sequence[OptionVerdict], seconds: float) -> None:
    """One decision record per call (caller ``expander``): the call's first pod, one line per option
    with its verdict and reason. Sent as ``filter_answered``; never fails the answer."""
    if not filter_answered.receivers or not verdicts:
        return
    try:
        pod = next((v.first_pod for v in verdicts if v.first_pod), None) or {
            "metadata": {"name": "expander-call", "namespace": ""},
            "spec": {"containers": []},
        }
        nodes = [v.template or {"metadata": {"name": v.node_group}} for v in verdicts]
        node_verdicts = [
            NodeVerdict(
                name=(v.template or {}).get("metadata", {}).get("name") or v.node_group,
                fits=v.kept,
                reason=v.reason,
                unresolvable=v.malformed,
                node_group=v.node_group,
                source="expander",
            )
            for v in verdicts
        ]
        filter_answered.send_robust(
            sender=best_options,
            ctx=sim.pod_context(pod),
            args=ExtenderArgs(dict(pod), nodes),
            verdicts=node_verdicts,
            caller="expander",
            seconds=seconds,
        )
    except Exception:
        log.exception("could not record an expander decision")


def load_daemon_sets(path: str) -> tuple[dict, ...]:
    """The pods of the DaemonSets in a YAML or JSON file (a list, or a ``List`` such as
    ``kubectl get daemonsets -A -o yaml`` prints): CA places them on every new node they would run
    on (selectors, affinity, tolerations) before the pending pods, but its template Node in
    ``nodeMap`` carries none. Raises ValueError naming what is wrong."""
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"--daemonsets {path}: {exc}") from None
    items = doc.get("items") if isinstance(doc, Mapping) else doc
    if not isinstance(items, list) or any(
        not isinstance(ds, Mapping) or ds.get("kind", "DaemonSet") != "DaemonSet" for ds in items
    ):
        raise ValueError(
            f"--daemonsets {path}: expected a list of DaemonSet objects (kubectl get ds -o yaml)"
        )
    return tuple(daemon_set_pod(ds) for ds in items)


def best_options(
    request: pb.BestOptionsRequest, mode: str | None = None, daemon_pods: Sequence[Mapping] = ()
) -> pb.BestOptionsResponse:
    """The whole call: evaluate every option, choose, record, answer."""
    started = time.perf_counter()
    sim = get_simulator()
    mode = mode or conf().expander_return
    groups = catalog.current()  # the resolver's node groups and templates (one home, issue 11)
    cache = CallCache(sim, daemon_pods)
    verdicts = evaluate(cache, request.options, request.nodeMap, groups)
    kept = choose(verdicts, mode if mode in RETURN_MODES else "most-placed")
    for v in verdicts:
        if v.malformed:
            log.warning("expander dropped option %r: %s", v.node_group, v.reason)
    _record(sim, verdicts, time.perf_counter() - started)
    return pb.BestOptionsResponse(
        options=[pb.Option(nodeGroupId=v.node_group, nodeCount=v.node_count, debug=v.debug) for v in kept]
    )

"""CA's gRPC expander (``grpcplugin.Expander/BestOptions``, design.md section 11).

CA asks which of its scale-up options to keep. Each option (a node group id, ``nodeCount`` new
nodes, the pods it would help) is packed with HAMi's device rules by the estimator's packer
(``hami_sim.engine.estimate.estimate``) onto ``nodeCount`` fresh nodes of the group's template: CA's
template Node when it carries a registration annotation, else merged with the template rendered
from the NodeGroup's device profiles. The choice is ``hami_sim.engine.hami_expander.choose``, the same
step the estimator's ``grpc`` expander runs. The answer is a set, not a ranking: CA keeps what we
return, narrows a several-option answer with its next expander, gives up this loop on an empty
answer and keeps every option on an error.

Both wire generations are read: CA 1.32 to 1.34 send the templates in ``nodeMap`` (2) and the pods in
``Option.pod`` (4), CA 1.34.2 and later in ``nodeBytesMap`` (3) and ``Option.podBytes`` (5) (1.34.2+
send both; the newer fields win). The answer fails open: an option we cannot judge is kept with its
reason (``EXPANDER_UNJUDGED=drop`` drops it), counted in
``hami_sim_expander_unjudged_options_total{reason}``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

import orjson
import yaml
from django.conf import settings
from google.protobuf.message import DecodeError

from hami_sim.conf import conf
from hami_sim.engine.ca_releases import CARelease, Wire, ca_release
from hami_sim.engine.cache import ByteLRU, approx_size, cache_bytes_from_env
from hami_sim.engine.estimate import EstimateError, GroupTemplate, PendingPods, estimate
from hami_sim.engine.hami_expander import RETURN_MODES, OptionVerdict, Packed, choose, packed
from hami_sim.engine.model import DeviceInfo
from hami_sim.engine.scaleup import daemon_set_pod
from hami_sim.engine.simulate import NodeVerdict, Simulator
from hami_sim.runtime.simulator import get_simulator
from profiles.inventory import Catalog, GroupEntry, catalog, find_group

from ..extender import ExtenderArgs
from ..metrics import EXPANDER_REQUESTS, EXPANDER_UNJUDGED_OPTIONS, EXPANDER_WIRE_MISMATCH
from ..signals import filter_answered
from .convert import node_from_bytes, pod_from_bytes
from .protos import expander_pb2 as pb

__all__ = [
    "RETURN_MODES",
    "OptionVerdict",
    "CallCache",
    "CallAbandoned",
    "Deadline",
    "ExpanderCaches",
    "evaluate",
    "choose",
    "best_options",
    "load_daemon_sets",
    "reset_caches",
    "wire_of",
]

log = logging.getLogger("hami_sim.expander")
MAX_NODE_COUNT = 1000  # CA's default --max-nodes-total is 0 (no limit); 1000 bounds one option's packing
# (a larger option is judged on its first 1000 nodes, never dropped for its size)


class CallAbandoned(Exception):
    """CA's deadline has passed or CA cancelled the call: nothing we answer is read any more."""


class Deadline:
    """When to stop working on a call. ``expired`` asks grpc (``time_remaining``, ``is_active``) so a
    call CA gave up on (its 5 s deadline, a cancel) stops between options and pod decodes, and the
    estimator gets the time left as its own limit."""

    def __init__(self, remaining: Callable[[], float | None], active: Callable[[], bool]) -> None:
        self._remaining, self._active = remaining, active

    @classmethod
    def of(cls, context) -> Deadline:
        return cls(context.time_remaining, context.is_active)

    def seconds(self) -> float | None:
        return self._remaining()

    def check(self) -> None:
        left = self._remaining()
        if (left is not None and left <= 0) or not self._active():
            raise CallAbandoned("the client's deadline has passed or it cancelled the call")


NO_DEADLINE = Deadline(lambda: None, lambda: True)


def wire_of(request: pb.BestOptionsRequest) -> Wire | None:
    """Which CA generation encoded the request: ``objects`` (fields 2 and 4 only: CA 1.32 to 1.34.1),
    ``both`` (CA 1.34.2+ before 1.35), ``bytes`` (3 and 5 only: CA 1.35+); None when it carries no
    pod and no template at all."""
    new = bool(request.nodeBytesMap) or any(o.podBytes for o in request.options)
    old = bool(request.nodeMap) or any(o.pod for o in request.options)
    if new and old:
        return Wire.BOTH
    return Wire.BYTES if new else Wire.OBJECTS if old else None


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

    def key(
        self, node_count: int, raw_pods: Sequence[bytes], pods: Sequence[Mapping], template: Mapping
    ) -> bytes:
        """What the packing depends on: the pods, nodeCount, the DaemonSets, and the template up to
        names and ids (so equivalent groups of one instance type share a packing)."""
        meta = template.get("metadata") or {}
        labels = meta.get("labels") or {}
        if not self.daemon_pods and not any(_reads_labels(p) for p in pods):
            labels = {k: v for k, v in labels.items() if k in _RULE_LABELS}
        inventory = self.sim.inventory(template)
        devices = [tuple(map(repr, _DEVICE_FIT_READS(d))) for d in inventory.devices]
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if "register" not in k}
        shape = [
            node_count, pods_digest(raw_pods).hex(), labels, annotations, devices, inventory.error,
            repr(inventory.pair_scores), sorted(inventory.cordoned), template.get("spec"), template.get("status"),
            self.daemon_key,
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


@dataclass(slots=True)
class _Pending:
    """An option resolved and waiting for its packing."""

    verdict: OptionVerdict
    node_count: int
    raw_pods: Sequence[bytes]
    pods: list[dict]
    template: Mapping
    key: bytes = b""


def _estimate(
    cache: CallCache, pods: list[dict], items: Sequence[_Pending], deadline: Deadline
) -> list[Packed]:
    """Pack one pod list onto each item's template in ONE estimator call (the pods are parsed and
    grouped once for all templates); groups are packed independently, as CA's estimator does. The
    estimator's time limit is what is left of the call's deadline."""
    names: Counter[str] = Counter()
    groups = []
    for item in items:
        group = item.verdict.node_group
        names[group] += 1
        name = group if names[group] == 1 else f"{group}#{names[group]}"
        groups.append(GroupTemplate(name, item.template, item.node_count, daemon_pods=cache.daemon_pods))
    left = deadline.seconds()
    limits = {} if left is None else {"time_limit": max(left, 0.001)}
    try:
        result = estimate(
            cache.sim, [PendingPods(p) for p in pods], groups, ca=_configured_release(), **limits
        )
    except EstimateError:
        deadline.check()  # out of time is CA's deadline, not a fault of the template
        raise
    return [packed(o) for o in result.options]


def _pack_all(cache: CallCache, pending: Sequence[_Pending], deadline: Deadline) -> None:
    """Fill every pending verdict: from the shared packings when an equivalent option was packed
    already (this call or an earlier one), else batched by pod list. A batch the estimator refuses
    (one unusable template) is packed option by option, so only the bad option is marked."""
    todo: dict[bytes, list[_Pending]] = {}
    done: dict[bytes, Packed] = {}
    for item in pending:
        item.key = cache.key(item.node_count, item.raw_pods, item.pods, item.template)
        found = cache.shared.packed.get(item.key)
        if found is None:
            todo.setdefault(pods_digest(item.raw_pods), []).append(item)
        else:
            done[item.key] = found
    for batch in todo.values():
        deadline.check()
        unique = list({item.key: item for item in batch}.values())
        try:
            results = _estimate(cache, unique[0].pods, unique, deadline)
        except EstimateError:
            results = [_estimate_alone(cache, item, deadline) for item in unique]
        for item, found in zip(unique, results, strict=True):
            if found is not None:
                done[item.key] = found
                cache.shared.packed.put(item.key, found, approx_size(found) + len(item.key))
    for item in pending:
        found = done.get(item.key)
        if found is not None:
            item.verdict.fill(found)


def _estimate_alone(cache: CallCache, item: _Pending, deadline: Deadline) -> Packed | None:
    """One option's packing; None (the option unjudged) when the estimator refuses its template."""
    try:
        return _estimate(cache, item.pods, [item], deadline)[0]
    except EstimateError as exc:
        item.verdict.cannot_judge("unusable-template", f"the estimator refuses the template: {exc}")
        return None


def _never_loaded(groups: Catalog) -> bool:
    """The node groups were never read (the database unreachable since the process started)."""
    return groups.generation is None and not groups.healthy


def _pods(cache: CallCache, raws: Sequence[bytes], deadline: Deadline) -> list[dict]:
    pods = []
    for i, raw in enumerate(raws):
        if i % 64 == 63:
            deadline.check()
        pods.append(cache.pod(raw))
    return pods


def _resolve(
    cache: CallCache,
    option: pb.Option,
    raw_node: bytes | None,
    groups: Catalog,
    deadline: Deadline,
) -> tuple[OptionVerdict, _Pending | None]:
    """Decode and check one option (CA >= 1.34.2's ``podBytes`` when present, else ``pod``); one we
    cannot judge comes back ``unjudged`` with the cause, one whose template leaves a doubt carries it
    (it becomes unjudged if its packing falls short)."""
    verdict = OptionVerdict(option.nodeGroupId, option.nodeCount, option.debug)
    if not option.nodeGroupId:
        verdict.cannot_judge("bad-option", "the option names no node group")
        return verdict, None
    if option.nodeCount <= 0:
        verdict.cannot_judge("bad-option", f"nodeCount {option.nodeCount} is not a positive number of nodes")
        return verdict, None
    # a larger scale-up is still an option CA may take: judge it on the first MAX_NODE_COUNT nodes
    # (CA sizes it again anyway) rather than drop it and leave CA with no scale-up
    node_count = min(option.nodeCount, MAX_NODE_COUNT)
    raw_pods = option.podBytes or option.pod
    try:
        pods = _pods(cache, raw_pods, deadline)
    except (DecodeError, ValueError, TypeError) as exc:
        verdict.cannot_judge("undecodable-pod", f"a pod is no v1.Pod: {exc}")
        return verdict, None
    verdict.first_pod = pods[0] if pods else None
    template = None
    if raw_node is not None:
        try:
            template = cache.node(raw_node)
        except (DecodeError, ValueError, TypeError) as exc:
            verdict.cannot_judge("undecodable-template", f"the template is no v1.Node: {exc}")
            return verdict, None
    group = find_group(option.nodeGroupId, template, groups)
    if template is None or cache.sim.annotation_inventory(template).error:  # no registration of its own
        if group is None:
            verdict.doubt = "catalog-unavailable" if _never_loaded(groups) else "unknown-group"
        elif group.profile_node is None:
            verdict.doubt = "no-device-profile"
    template = _template(cache.sim, template, group)
    if template is None:
        code = "catalog-unavailable" if _never_loaded(groups) else "no-template"
        verdict.cannot_judge(code, "no template Node in the request and no node group of that id")
        return verdict, None
    verdict.template = template
    if any(not d.health for d in cache.sim.inventory(template).devices):
        verdict.doubt = verdict.doubt or "unhealthy-device"
    return verdict, _Pending(verdict, node_count, raw_pods, pods, template)


def evaluate(
    cache: CallCache,
    request: pb.BestOptionsRequest,
    groups: Catalog,
    deadline: Deadline = NO_DEADLINE,
) -> list[OptionVerdict]:
    """Every option's verdict, in CA's order; an option we cannot judge is marked, never raises
    (``CallAbandoned`` when the deadline passes: nothing would read the answer)."""
    resolved = []
    for option in request.options:
        deadline.check()
        gid = option.nodeGroupId
        raw_node = request.nodeBytesMap.get(gid) if gid in request.nodeBytesMap else request.nodeMap.get(gid)
        resolved.append(_resolve(cache, option, raw_node, groups, deadline))
    _pack_all(cache, [item for _, item in resolved if item is not None], deadline)
    return [verdict for verdict, _ in resolved]


def _record(sim: Simulator, verdicts: Sequence[OptionVerdict], seconds: float, wire: str) -> None:
    """One decision record per call (caller ``expander``): the call's first pod, one line per option
    with its verdict and reason, and the wire generation CA used. Sent as ``filter_answered``; never
    fails the answer."""
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
                unresolvable=bool(v.unjudged),
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
            extra={"wire": wire},
        )
    except Exception:
        log.exception("could not record an expander decision")


_WARNED: set[tuple[str, str]] = set()


def _count_wire(wire: Wire | None) -> str:
    """Count the request's wire generation; warn (once per pair, and in a counter) when it is not
    the one the configured ``CA_VERSION`` sends: CA runs at another version than hami-sim follows."""
    label = wire.value if wire is not None else "none"
    expected = expected_wire()
    EXPANDER_REQUESTS.labels(wire=label).inc()
    if wire is not None and expected is not None and wire is not expected:
        EXPANDER_WIRE_MISMATCH.labels(wire=label, expected=expected.value).inc()
        if (label, expected.value) not in _WARNED:
            _WARNED.add((label, expected.value))
            log.warning(
                "CA sent the %r wire form, but CA_VERSION %s sends %r: set CA_VERSION to the CA release "
                "the cluster runs",
                label,
                settings.CA_VERSION,
                expected.value,
            )
    return label


def _configured_release() -> CARelease | None:
    """The CA release ``CA_VERSION`` names (None: the estimator's default, the newest supported):
    the expander packs as that release's binpacking does, as the estimate API does."""
    version = getattr(settings, "CA_VERSION", None)
    return ca_release(version) if version else None


def expected_wire() -> Wire | None:
    """The wire form the configured ``CA_VERSION`` sends (None when no version is configured)."""
    release = _configured_release()
    return release.wire if release else None


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
    request: pb.BestOptionsRequest,
    mode: str | None = None,
    daemon_pods: Sequence[Mapping] = (),
    deadline: Deadline = NO_DEADLINE,
) -> pb.BestOptionsResponse:
    """The whole call: evaluate every option, choose, record, answer. Raises ``CallAbandoned`` once
    ``deadline`` has passed (CA no longer reads the answer; on its side every option stays)."""
    started = time.perf_counter()
    sim = get_simulator()
    settings_now = conf()
    mode = mode or settings_now.expander_return
    wire = _count_wire(wire_of(request))
    groups = catalog.current()  # the resolver's node groups and templates (one home, issue 11)
    cache = CallCache(sim, daemon_pods)
    verdicts = evaluate(cache, request, groups, deadline)
    kept = choose(verdicts, mode if mode in RETURN_MODES else "most-placed", settings_now.expander_unjudged)
    for v in verdicts:
        if v.unjudged:
            EXPANDER_UNJUDGED_OPTIONS.labels(reason=v.unjudged).inc()
            log.warning("expander could not judge option %r: %s", v.node_group, v.reason)
    _record(sim, verdicts, time.perf_counter() - started, wire)
    return pb.BestOptionsResponse(
        options=[pb.Option(nodeGroupId=v.node_group, nodeCount=v.node_count, debug=v.debug) for v in kept]
    )

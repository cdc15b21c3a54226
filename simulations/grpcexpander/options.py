"""CA's scale-up options judged: each decoded, its template found or completed, then packed.

An option names a node group, ``nodeCount`` new nodes and the pods it would help. Its template is
CA's when that carries a registration annotation, else CA's merged with the one rendered from the
NodeGroup's device profiles. Options with the same pods are packed in one estimator call; an option
we cannot judge is marked with the cause (it fails open in the answer), never raises.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from hami_sim.engine.cache import approx_size
from hami_sim.engine.estimate import EstimateError, GroupTemplate, PendingPods, estimate
from hami_sim.engine.hami_expander import OptionVerdict, Packed, packed
from hami_sim.engine.model import Inventory
from hami_sim.engine.names import pod_id
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.engine.simulate import Simulator
from hami_sim.project.conf import configured_ca_release
from hami_sim.runtime.bulk import gc_paused
from profiles.inventory import Catalog, GroupEntry, find_group

from .caches import CallCache
from .deadline import NO_DEADLINE, Deadline
from .protos import expander_pb2 as pb

__all__ = ["MAX_NODE_COUNT", "evaluate", "pod_problem"]

MAX_NODE_COUNT = 1000  # CA's default --max-nodes-total is 0 (no limit); 1000 bounds one option's packing
# (a larger option is judged on its first 1000 nodes, never dropped for its size)


def _template(template: Mapping | None, registered: bool, group: GroupEntry | None) -> Mapping | None:
    """CA's template when it is ``registered``; else CA's template completed from the group's profile."""
    if registered or group is None or group.template is None:
        return template
    if template is None:
        return group.template
    return _merged(template, group.template)


def _merged(template: Mapping, rendered: Mapping) -> dict:
    """CA's template over the rendered one: annotations, labels, capacity and allocatable merged
    key by key (CA's win), everything else CA's."""
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


@dataclass(slots=True)
class _Pending:
    """An option resolved and waiting for its packing."""

    verdict: OptionVerdict
    node_count: int
    digest: bytes  # of the pods' bytes (``pods_digest``)
    pods: list[Mapping]
    reads_labels: bool  # a pod reads node labels (the packing key keeps them all)
    template: Mapping
    inventory: Inventory  # the template's, resolved once per option
    key: bytes = b""


def _estimate(
    cache: CallCache, pods: list[Mapping], items: Sequence[_Pending], deadline: Deadline
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
        groups.append(
            GroupTemplate(
                name, item.template, item.node_count, daemon_pods=cache.daemon_pods, inventory=item.inventory
            )
        )
    left = deadline.seconds()
    limits = {} if left is None else {"time_limit": max(left, 0.001)}
    try:
        # the cyclic collector waits while the estimator packs: the packing keeps what it builds (nodes,
        # device lists, fits) to the end, so each full collection walked a larger heap again, about a
        # third of the CPU of 100 options x 1,000 pods; what the packing frees has no cycles, and the
        # expander's process holds only calls (they end within CA's deadline)
        with gc_paused():
            result = estimate(
                cache.sim, [PendingPods(p) for p in pods], groups, ca=configured_ca_release(), **limits
            )
    except EstimateError:
        deadline.check()  # out of time is CA's deadline, not a fault of the template
        raise
    if any(o.cut_short for o in result.options):  # the estimator ran out of the call's time
        deadline.check()
        raise EstimateError("the estimate's time limit ran out before every option was packed")
    return [packed(o) for o in result.options]


def _pack_all(cache: CallCache, pending: Sequence[_Pending], deadline: Deadline) -> None:
    """Fill every pending verdict: from the shared packings when an equivalent option was packed
    already (this call or an earlier one), else batched by pod list. A batch the estimator refuses
    (one unusable template) is packed option by option, so only the bad option is marked."""
    todo: dict[bytes, list[_Pending]] = {}
    done: dict[bytes, Packed] = {}
    for item in pending:
        item.key = cache.key(item.node_count, item.digest, item.reads_labels, item.template, item.inventory)
        found = cache.shared.packed.get(item.key)
        if found is None:
            todo.setdefault(item.digest, []).append(item)
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
    """One option's packing; None (the option unjudged) when the estimator refuses it: because of
    one of its pods (``unusable-pod``, naming the pod and what the engine refuses, e.g. an invalid
    ``hami.io/device-scoring-weights`` annotation), else because of its template."""
    try:
        return _estimate(cache, item.pods, [item], deadline)[0]
    except EstimateError as exc:
        problem = pod_problem(cache.sim, item.pods)
        if problem:
            item.verdict.cannot_judge("unusable-pod", problem)
        else:
            item.verdict.cannot_judge("unusable-template", f"the estimator refuses the template: {exc}")
        return None


def pod_problem(sim: Simulator, pods: Sequence[Mapping]) -> str:
    """Why the engine cannot read one of ``pods`` (its spec or its annotations), naming the pod; ""
    when every one parses. Asked only once an estimate failed: off the answering path's common case."""
    for pod in pods:
        try:
            sim.pod_context(pod)
        except (PodError, WeightsError) as exc:
            meta = pod.get("metadata") or {}
            return f"pod {meta.get('namespace') or 'default'}/{meta.get('name') or pod_id(pod)}: {exc}"
    return ""


def _never_loaded(groups: Catalog) -> bool:
    """The node groups were never read (the database unreachable since the process started)."""
    return groups.generation is None and not groups.healthy


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
    if not _well_formed(option, verdict):
        return verdict, None
    # a larger scale-up is still an option CA may take: judge it on the first MAX_NODE_COUNT nodes
    # (CA sizes it again anyway) rather than drop it and leave CA with no scale-up
    node_count = min(option.nodeCount, MAX_NODE_COUNT)
    raw_pods = option.podBytes or option.pod
    try:
        digest, pods, reads_labels = cache.pods(raw_pods, deadline.check)
    except (DecodeError, ValueError, TypeError) as exc:
        verdict.cannot_judge("undecodable-pod", f"a pod is no v1.Pod: {exc}")
        return verdict, None
    verdict.first_pod = pods[0] if pods else None
    try:
        template = cache.node(raw_node) if raw_node is not None else None
    except (DecodeError, ValueError, TypeError) as exc:
        verdict.cannot_judge("undecodable-template", f"the template is no v1.Node: {exc}")
        return verdict, None
    found = _group_template(cache.sim, option.nodeGroupId, template, groups, verdict)
    if found is None:
        return verdict, None
    return verdict, _Pending(verdict, node_count, digest, pods, reads_labels, *found)


def _well_formed(option: pb.Option, verdict: OptionVerdict) -> bool:
    """An option names a node group and a positive ``nodeCount``; else it is marked ``bad-option``."""
    if not option.nodeGroupId:
        verdict.cannot_judge("bad-option", "the option names no node group")
        return False
    if option.nodeCount <= 0:
        verdict.cannot_judge("bad-option", f"nodeCount {option.nodeCount} is not a positive number of nodes")
        return False
    return True


def _group_template(
    sim: Simulator, group_id: str, template: Mapping | None, groups: Catalog, verdict: OptionVerdict
) -> tuple[Mapping, Inventory] | None:
    """The template the option is packed on and its inventory, each resolved once (None: the option
    is marked unjudged), with any doubt it leaves on the verdict: an unregistered template of a group
    we do not know or that has no device profile, or a template with an unhealthy device."""
    group = find_group(group_id, template, groups)
    own = sim.annotation_inventory(template) if template is not None else None
    registered = own is not None and not own.error
    if not registered:  # no registration of its own
        verdict.doubt = _unregistered_doubt(group, groups)
    packed_on = _template(template, registered, group)
    if packed_on is None:
        code = "catalog-unavailable" if _never_loaded(groups) else "no-template"
        verdict.cannot_judge(code, "no template Node in the request and no node group of that id")
        return None
    verdict.template = packed_on
    # (without a resolver a template's inventory is its registration's, resolved just above)
    same = own is not None and packed_on is template and sim.resolver is None
    inventory = own if same else sim.inventory(packed_on)
    if any(not d.health for d in inventory.devices):
        verdict.doubt = verdict.doubt or "unhealthy-device"
    return packed_on, inventory


def _unregistered_doubt(group: GroupEntry | None, groups: Catalog) -> str:
    """The doubt an unregistered template leaves: a group we do not know, or without a device profile."""
    if group is None:
        return "catalog-unavailable" if _never_loaded(groups) else "unknown-group"
    return "no-device-profile" if group.profile_node is None else ""


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

"""CA's pod equivalence groups (``core/scaleup/equivalence/groups.go`` and ``utils.PodSpecSemanticallyEqual``).

CA bin-packs pending pods group by group. Pods join one group when they have the same controller
(``ownerReferences`` with ``controller: true``, compared by UID), deep-equal labels, and specs that are
semantically equal once the parts that differ between replicas without changing scheduling are
dropped: projected volumes (the ``kube-api-access-*`` service-account token) and their mounts, the
containers' and init containers' ``env``, and ``hostname``. A controller has at most 10 groups; a pod
that matches none of them once there are 10 forms a group of its own, as do pods without a
controller and DaemonSet pods.

One difference, kept on purpose: annotations are compared too, because HAMi's device fit reads them
(GPU type, policies, NUMA binding); CA's estimator does not look at them.

Speed: replicas from one controller differ only in identity fields, so the comparison key (labels,
sanitised spec, annotations, serialised once per pod by orjson) is equal for them, and the semantic
canonical form (nil = empty, ``1`` = ``1000m``), which walks the whole spec in Python, is computed
once per distinct key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from .quantity import QuantityError, parse_quantity

__all__ = [
    "MAX_GROUPS_PER_CONTROLLER",
    "DAEMONSET_POD_ANNOTATION",
    "PodGroup",
    "controller_uid",
    "sanitized_spec",
    "EquivalenceKeys",
    "group_pods",
]

MAX_GROUPS_PER_CONTROLLER = 10  # CA's maxEquivalenceGroupsByController
DAEMONSET_POD_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
_RESOURCE_LISTS = frozenset(("requests", "limits", "overhead"))


@dataclass(slots=True)
class PodGroup:
    """Pending pods CA treats as one: the first pod stands for all of them (``ids`` in input order).

    ``key`` is the canonical (labels, sanitised spec, annotations): equal keys schedule identically,
    so it also keys what is computed per pod shape (parsing, static predicates)."""

    pod: Mapping
    ids: list[str]
    order: int
    key: bytes


def _controller(pod: Mapping) -> Mapping | None:
    """``metav1.GetControllerOf``: the first owner reference with ``controller: true``."""
    meta = pod.get("metadata")
    refs = meta.get("ownerReferences") if type(meta) is dict or isinstance(meta, Mapping) else None
    if isinstance(refs, list):
        for ref in refs:
            if isinstance(ref, Mapping) and ref.get("controller") is True:
                return ref
    return None


def controller_uid(pod: Mapping) -> str | None:
    """The controller's UID CA groups by, or None when CA gives the pod a group of its own (no
    controller, or a DaemonSet pod by owner kind or CA's ``daemonset-pod`` annotation). A reference
    without a UID (hand-written JSON) falls back to its kind and name."""
    ref = _controller(pod)
    if ref is None or ref.get("kind") == "DaemonSet":
        return None
    meta = pod.get("metadata") or {}
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    if isinstance(annotations, Mapping) and annotations.get(DAEMONSET_POD_ANNOTATION) == "true":
        return None
    uid = ref.get("uid")
    return str(uid) if uid else f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _without_env_and_mounts(containers: object, projected: set[str]) -> object:
    if not isinstance(containers, list):
        return containers
    out = []
    for container in containers:
        if isinstance(container, dict):
            container = dict(container)
            container.pop("env", None)
            mounts = container.get("volumeMounts")
            if projected and isinstance(mounts, list):
                container["volumeMounts"] = [
                    m for m in mounts if not (isinstance(m, dict) and m.get("name") in projected)
                ]
        out.append(container)
    return out


def sanitized_spec(spec: object) -> object:
    """CA's ``sanitizePodSpec``: the spec without projected volumes and their mounts, containers' and
    init containers' ``env``, and ``hostname`` (a shallow copy; the pod is not changed).

    ``dict``/``list`` checks (no ABC): this runs once per pending pod (JSON gives nothing else, or
    their read-only subclasses, ``frozen``, from a cache; a pod built from other Mapping types is
    only compared as it is)."""
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    out.pop("hostname", None)
    projected: set[str] = set()
    volumes = out.get("volumes")
    if isinstance(volumes, list):
        kept = []
        for volume in volumes:
            if isinstance(volume, dict) and volume.get("projected") is not None:
                projected.add(str(volume.get("name")))
            else:
                kept.append(volume)
        out["volumes"] = kept
    if "containers" in out:
        out["containers"] = _without_env_and_mounts(out["containers"], projected)
    if "initContainers" in out:
        out["initContainers"] = _without_env_and_mounts(out["initContainers"], projected)
    return out


def _canonical(value: object, parent: str = "") -> object:
    """``apiequality.Semantic.DeepEqual``'s view: nil = empty (null, [] and {} fields are dropped),
    and quantities under requests/limits/overhead compare by value (``1`` = ``1000m``)."""
    if isinstance(value, Mapping):
        out: dict[object, object] = {}
        for k, v in value.items():
            if v is None or v == [] or v == {}:
                continue
            if parent in _RESOURCE_LISTS and isinstance(v, str | int | float) and not isinstance(v, bool):
                try:
                    number = parse_quantity(v)
                except QuantityError:
                    out[k] = v  # a malformed quantity is reported where it is parsed
                else:
                    out[k] = f"{number.numerator}/{number.denominator}"
                continue
            out[k] = _canonical(v, str(k))
        return out
    if isinstance(value, list):
        return [_canonical(v, parent) for v in value]
    return value


class EquivalenceKeys:
    """Comparison keys for pods: one orjson serialisation per pod, the canonical form per distinct
    serialisation (shared across calls of one ``group_pods``)."""

    __slots__ = ("_canonical",)

    def __init__(self) -> None:
        self._canonical: dict[bytes, bytes] = {}

    def key(self, pod: Mapping) -> bytes:
        """The canonical (labels, sanitised spec, annotations) of ``pod``. Raises ``TypeError`` for
        values JSON cannot hold."""
        meta = pod.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        # unsorted: replicas serialise alike; the canonical form below sorts
        raw = orjson.dumps([meta.get("labels"), sanitized_spec(pod.get("spec")), meta.get("annotations")])
        canonical = self._canonical.get(raw)
        if canonical is None:
            labels, spec, annotations = orjson.loads(raw)
            canonical = self._canonical[raw] = orjson.dumps(
                [_canonical(labels or {}), _canonical(spec), _canonical(annotations or {})],
                option=orjson.OPT_SORT_KEYS,
            )
        return canonical


def group_pods(entries: Sequence[tuple[Mapping, list[str]]]) -> list[PodGroup]:
    """CA's ``groupPodsBySchedulingProperties``; ``entries`` = (pod, its ids) in input order. Groups
    come out in the order of their first pod (CA's come out of a Go map, in random order)."""
    keys = EquivalenceKeys()
    groups: list[PodGroup] = []
    by_controller: dict[str, dict[bytes, PodGroup]] = {}
    for position, (pod, ids) in enumerate(entries):
        key = keys.key(pod)
        uid = controller_uid(pod)
        known = by_controller.setdefault(uid, {}) if uid is not None else None
        group = known.get(key) if known is not None else None
        if group is not None:
            group.ids.extend(ids)
            continue
        group = PodGroup(pod, list(ids), position, key)
        groups.append(group)
        if known is not None and len(known) < MAX_GROUPS_PER_CONTROLLER:
            known[key] = group
    return groups

"""Protobuf ``v1.Pod`` / ``v1.Node`` (our ``k8s_core.proto`` subset) -> the Kubernetes JSON objects the
engine reads. Only the fields the device rules and the estimator's packer look at are carried.

Read-only as built (``FrozenDict``, ``FrozenList``: a ``dict`` and a ``list`` refusing writes): the
expander's caches hand one decoded object to every call sending its bytes. Built so rather than
frozen afterwards (``freeze``), which would walk each object again (a fresh pod ~3x its decoding)."""

from __future__ import annotations

from collections.abc import Mapping

from hami_sim.engine.frozen import FrozenDict as _F
from hami_sim.engine.frozen import FrozenList as _L

from .protos import k8s_core_pb2 as core

__all__ = ["pod_from_bytes", "node_from_bytes", "pod_dict", "node_dict"]


def _quantities(values: Mapping) -> Mapping[str, str]:
    return _F({name: q.string for name, q in values.items()})


def _meta(meta: core.ObjectMeta) -> Mapping:
    out: dict = {"name": meta.name}
    if meta.namespace:
        out["namespace"] = meta.namespace
    if meta.uid:
        out["uid"] = meta.uid
    if meta.labels:
        out["labels"] = _F(meta.labels)
    if meta.annotations:
        out["annotations"] = _F(meta.annotations)
    if meta.ownerReferences:
        out["ownerReferences"] = _L(
            _F(
                {
                    "apiVersion": ref.apiVersion,
                    "kind": ref.kind,
                    "name": ref.name,
                    "uid": ref.uid,
                    **({"controller": ref.controller} if ref.HasField("controller") else {}),
                }
            )
            for ref in meta.ownerReferences
        )
    return _F(out)


def _container(c: core.Container) -> Mapping:
    resources: dict = {}
    if c.resources.limits:
        resources["limits"] = _quantities(c.resources.limits)
    if c.resources.requests:
        resources["requests"] = _quantities(c.resources.requests)
    return _F({"name": c.name, "resources": _F(resources)})


def _toleration(t: core.Toleration) -> Mapping:
    out = {
        k: v
        for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect))
        if v
    }
    if t.HasField("tolerationSeconds"):
        out["tolerationSeconds"] = t.tolerationSeconds
    return _F(out)


def pod_dict(pod: core.Pod) -> Mapping:
    spec: dict = {"containers": _L(_container(c) for c in pod.spec.containers)}
    if pod.spec.initContainers:
        spec["initContainers"] = _L(_container(c) for c in pod.spec.initContainers)
    if pod.spec.nodeSelector:
        spec["nodeSelector"] = _F(pod.spec.nodeSelector)
    if pod.spec.tolerations:
        spec["tolerations"] = _L(_toleration(t) for t in pod.spec.tolerations)
    return _F({"metadata": _meta(pod.metadata), "spec": _F(spec)})


def node_dict(node: core.Node) -> Mapping:
    spec: dict = {}
    if node.spec.HasField("unschedulable"):
        spec["unschedulable"] = node.spec.unschedulable
    if node.spec.taints:
        spec["taints"] = _L(
            _F({k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v})
            for t in node.spec.taints
        )
    status = {
        "capacity": _quantities(node.status.capacity),
        "allocatable": _quantities(node.status.allocatable),
    }
    return _F({"metadata": _meta(node.metadata), "spec": _F(spec), "status": _F(status)})


def pod_from_bytes(raw: bytes) -> Mapping:
    """Raises ``google.protobuf.message.DecodeError`` on bytes that are no Pod."""
    return pod_dict(core.Pod.FromString(raw))


def node_from_bytes(raw: bytes) -> Mapping:
    return node_dict(core.Node.FromString(raw))

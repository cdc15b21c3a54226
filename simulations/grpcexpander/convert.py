"""Protobuf ``v1.Pod`` / ``v1.Node`` (our ``k8s_core.proto`` subset) -> the Kubernetes JSON dicts the
engine reads. Only the fields the device rules and the estimator's packer look at are carried."""

from __future__ import annotations

from collections.abc import Mapping

from .protos import k8s_core_pb2 as core

__all__ = ["pod_from_bytes", "node_from_bytes", "pod_dict", "node_dict"]


def _quantities(values: Mapping) -> dict[str, str]:
    return {name: q.string for name, q in values.items()}


def _meta(meta: core.ObjectMeta) -> dict:
    out: dict = {"name": meta.name}
    if meta.namespace:
        out["namespace"] = meta.namespace
    if meta.uid:
        out["uid"] = meta.uid
    if meta.labels:
        out["labels"] = dict(meta.labels)
    if meta.annotations:
        out["annotations"] = dict(meta.annotations)
    if meta.ownerReferences:
        out["ownerReferences"] = [
            {
                "apiVersion": ref.apiVersion,
                "kind": ref.kind,
                "name": ref.name,
                "uid": ref.uid,
                **({"controller": ref.controller} if ref.HasField("controller") else {}),
            }
            for ref in meta.ownerReferences
        ]
    return out


def _container(c: core.Container) -> dict:
    resources: dict = {}
    if c.resources.limits:
        resources["limits"] = _quantities(c.resources.limits)
    if c.resources.requests:
        resources["requests"] = _quantities(c.resources.requests)
    return {"name": c.name, "resources": resources}


def _toleration(t: core.Toleration) -> dict:
    out = {
        k: v
        for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect))
        if v
    }
    if t.HasField("tolerationSeconds"):
        out["tolerationSeconds"] = t.tolerationSeconds
    return out


def pod_dict(pod: core.Pod) -> dict:
    spec: dict = {"containers": [_container(c) for c in pod.spec.containers]}
    if pod.spec.initContainers:
        spec["initContainers"] = [_container(c) for c in pod.spec.initContainers]
    if pod.spec.nodeSelector:
        spec["nodeSelector"] = dict(pod.spec.nodeSelector)
    if pod.spec.tolerations:
        spec["tolerations"] = [_toleration(t) for t in pod.spec.tolerations]
    return {"metadata": _meta(pod.metadata), "spec": spec}


def node_dict(node: core.Node) -> dict:
    spec: dict = {}
    if node.spec.HasField("unschedulable"):
        spec["unschedulable"] = node.spec.unschedulable
    if node.spec.taints:
        spec["taints"] = [
            {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}
            for t in node.spec.taints
        ]
    return {
        "metadata": _meta(node.metadata),
        "spec": spec,
        "status": {
            "capacity": _quantities(node.status.capacity),
            "allocatable": _quantities(node.status.allocatable),
        },
    }


def pod_from_bytes(raw: bytes) -> dict:
    """Raises ``google.protobuf.message.DecodeError`` on bytes that are no Pod."""
    return pod_dict(core.Pod.FromString(raw))


def node_from_bytes(raw: bytes) -> dict:
    return node_dict(core.Node.FromString(raw))

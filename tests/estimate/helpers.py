"""Builders for the CA-parity estimate tests: CA-style templates and pods, HAMi templates beside them."""

from __future__ import annotations

from tests.factories import kube, pod


def ca_node(name: str, millicores: int, memory: str, pods: int = 10, labels: dict | None = None) -> dict:
    """CA's test template (``makeNode``): capacity = allocatable, no devices."""
    tmpl = kube.node(
        name, labels=labels, capacity={"cpu": f"{millicores}m", "memory": memory, "pods": str(pods)}
    )
    del tmpl["metadata"]["annotations"]  # makeNode sets none
    return tmpl


def gpu_node(name: str, cards: int = 2, millicores: int = 32000, memory: str = "128Gi", **kw) -> dict:
    """A HAMi template: ``cards`` A10s (23028 MiB, split 10) with cpu/memory capacity."""
    return kube.gpu_node(
        name, cards, capacity={"cpu": f"{millicores}m", "memory": memory, "pods": "110"}, **kw
    )


def ca_pod(name: str, millicores: int, memory: int | str, owner: str | None = None, **device) -> dict:
    """CA's ``BuildTestPod``: requests only (device fields make it a HAMi pod)."""
    p = pod(name, gpu_count=device.pop("gpu_count", None), **device)
    p["spec"]["containers"][0].setdefault("resources", {})["requests"] = {
        "cpu": f"{millicores}m",
        "memory": str(memory),
    }
    owner = owner or f"rs-{name}"
    p["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": owner, "uid": owner, "controller": True}
    ]
    return p

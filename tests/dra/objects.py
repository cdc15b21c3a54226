"""Cluster objects of a HAMi-on-DRA cluster, as the API serves them (shared by the DRA app tests)."""

from __future__ import annotations

from hami_sim.engine.dra.hamidra import GpuSpec, claim_objects_of_pod, profile_slice

A10 = GpuSpec("NVIDIA A10", 23028)
HAMI_CLASS = {
    "metadata": {"name": "hami-core-gpu.project-hami.io"},
    "spec": {
        "selectors": [
            {
                "cel": {
                    "expression": 'device.driver == "hami-core-gpu.project-hami.io" && '
                    'device.attributes["hami-core-gpu.project-hami.io"].type == "hami-gpu"'
                }
            }
        ]
    },
}


def node_slice(node: str, gpus: int = 2) -> dict:
    return profile_slice(node, [A10] * gpus)


def device_plugin_pod(name: str, gpumem: int, namespace: str = "ml", gpus: int = 1) -> dict:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus), "nvidia.com/gpumem": str(gpumem)}},
                }
            ]
        },
        "status": {"phase": "Pending"},
    }


def dra_pod(name: str, gpumem: int, namespace: str = "ml", gpus: int = 1) -> tuple[dict, list[dict]]:
    """A pod as HAMi-DRA's webhook leaves it (its GPU limits turned into a named ResourceClaim),
    with that claim."""
    claims = claim_objects_of_pod(device_plugin_pod(name, gpumem, namespace, gpus))
    pod = {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "labels": {"hami.io/dra": "true"},
        },
        "spec": {
            "containers": [
                {"name": "main", "resources": {"claims": [{"name": c["metadata"]["name"]}]}} for c in claims
            ],
            "resourceClaims": [
                {"name": c["metadata"]["name"], "resourceClaimName": c["metadata"]["name"]} for c in claims
            ],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }
    return pod, claims

"""A big cluster's scale-up loop (100 node groups x 1,000 pending pods of 100 Deployments) answers 200
at the default ``MAX_ANSWER_BYTES``: the answer names each pod once and lists pods as runs, so it
no longer repeats every pod id and every device's fixed fields in every group (17 MB, a 413)."""

from __future__ import annotations

import orjson
import pytest
from django.conf import settings

from hami_sim.project.conf import DEFAULTS
from tests.factories import gpu, node, pod

from .answers import node_pods, scheduled, unschedulable

pytestmark = [pytest.mark.api, pytest.mark.slow]

# (short name, GPU type, device memory MiB)
KINDS = (
    ("a100", "NVIDIA A100-SXM4-80GB", 81920),
    ("h100", "NVIDIA H100 80GB HBM3", 81559),
    ("a10", "NVIDIA A10", 23028),
    ("l4", "NVIDIA L4", 23034),
    ("l40s", "NVIDIA L40S", 46068),
)
ZONES = ("zone-a", "zone-b", "zone-c", "zone-d", "zone-e")


def _groups() -> list[dict]:
    """100 inline groups: 4- and 8-card templates of five GPU types in five zones, on-demand and spot,
    each with its own name, labels and device UUIDs."""
    out = []
    for short, kind, devmem in KINDS:
        for cards in (4, 8):
            for zone in ZONES:
                for capacity in ("on-demand", "spot"):
                    name = f"{short}x{cards}-{zone}-{capacity}"
                    devices = [
                        gpu(f"GPU-{name}-{c}", index=c, devmem=devmem, type=kind, numa=c * 2 // cards)
                        for c in range(cards)
                    ]
                    size = {"cpu": str(12 * cards), "memory": f"{96 * cards}Gi", "pods": "110"}
                    labels = {"kubernetes.io/hostname": name, "zone": zone, "capacity-type": capacity}
                    tmpl = node(f"template-node-for-{name}", devices, labels=labels, capacity=size)
                    out.append({"name": name, "template": tmpl})
    return out


def _pods() -> list[dict]:
    """1,000 pending pods: 100 Deployments of 10 replicas, each pod its own object and uid, with
    GPU memory 2,000-35,000 MiB, cores 0-50 %, one or two cards, cpu and memory requests."""
    out = []
    for d in range(100):
        for r in range(10):
            p = pod(
                f"deploy-{d:03d}-{r}",
                uid=f"uid-{d:03d}-{r:02d}",
                gpu_count=2 if d % 7 == 3 else 1,
                gpumem=2000 + (d * 3301) % 33001,
                gpucores=(d * 7) % 6 * 10 or None,
            )
            p["metadata"]["labels"] = {"app": f"deploy-{d:03d}"}
            p["metadata"]["ownerReferences"] = [
                {"kind": "ReplicaSet", "name": f"deploy-{d:03d}", "uid": f"rs-{d:03d}", "controller": True}
            ]
            resources = p["spec"]["containers"][0]["resources"]
            resources["requests"] = {"cpu": f"{250 * (1 + d % 16)}m", "memory": f"{1 + (d * 5) % 32}Gi"}
            out.append(p)
    return out


@pytest.mark.django_db
def test_a_big_clusters_scale_up_loop_answers_within_the_default_limit(client):
    assert DEFAULTS.max_answer_bytes == settings.MAX_ANSWER_BYTES
    body = {"pods": _pods(), "nodeGroups": _groups(), "expander": "least-waste"}
    response = client.post("/api/v1/estimate", orjson.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    answer = orjson.loads(response.content)
    assert len(response.content) < 4 << 20  # well inside the default 16 MiB
    assert len(answer["pods"]) == 1000 and len(answer["options"]) == 100
    for option in answer["options"]:
        placed = scheduled(answer, option)
        assert sorted(placed + list(unschedulable(answer, option))) == sorted(answer["pods"])
        on_nodes = [pid for n in option["nodes"] for pid in node_pods(answer, n)]
        assert sorted(on_nodes) == sorted(placed) and len(option["nodes"]) == option["nodeCount"]
        for n in option["nodes"]:
            assert len(n["devices"]) == len(option["devices"])
    assert answer["chosen"] in {o["nodeGroup"] for o in answer["options"]}

"""Demo decisions and CA events: three pods an engineer on call would ask about.

- ``llm-inference`` (40000 MiB on one card): A10G cards are too small; the then cold-zero
  ``gpu-h100`` group fits it from its profile, and CA reports ``TriggeredScaleUp`` of gpu-h100 0->1.
  That is the demo's one scale-up of gpu-h100: the same loop had the 40 ``llm-train`` pods of
  ``demo/cluster-snapshot.json`` pending, and by device count one new node held them all (8 run on
  it; the 32 left are the pods upstream CA cannot see, ``usage.blindspot``). CA writes its
  ``TriggeredScaleUp`` event on every pod of the option it chose (``PodsTriggeredScaleUp`` is
  ``bestOption.Pods`` in ``core/scaleup/orchestrator/orchestrator.go``, and
  ``processors/status/eventing_scale_up_processor.go`` writes one event per pod, tag
  ``cluster-autoscaler-1.36.1``), so each ``llm-train`` pod carries the same event.
- ``giant-training`` (100000 MiB on one card): rejected everywhere with per-device reasons; CA
  reports ``NotTriggerScaleUp`` and the scheduler ``FailedScheduling``.
- ``notebook`` (8000 MiB, 30% cores): fits an existing gpu-a10 node; no scale-up needed.

The questions go through the real extender path (``run_filter``), so the rows are exactly what CA's
calls would leave. Needs the demo node groups (``demo/profiles.yaml``) and inventory.
"""

from __future__ import annotations

from datetime import timedelta

import orjson
from django.conf import settings
from django.utils import timezone

from profiles.models import NodeGroup, NodeInventory
from profiles.nodetemplates import group_template
from simulations.api.views import run_filter

from . import recorder
from .models import AutoscalerStatus, CAEvent

__all__ = ["DEMO_PODS", "H100_SCALE_UP", "seed", "demo_pod", "train_pods"]

#: CA's TriggeredScaleUp message of the demo's one gpu-h100 scale-up (``ScaleUpInfo.String()``:
#: ``{<group id> <current>-><new> (max: <max>)}``, processors/nodegroupset/nodegroup_set_processor.go)
H100_SCALE_UP = "pod triggered scale-up: [{gpu-h100 0->1 (max: 4)}]"
#: the Deployment whose 40 pods CA's gpu-h100 scale-up counted (demo/cluster-snapshot.json)
TRAIN_REPLICASET = "llm-train-7d9f8c6b5"


def demo_pod(name: str, uid: str, gpumem: int, cores: int | None = None, namespace: str = "ml") -> dict:
    limits = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": str(gpumem)}
    if cores is not None:
        limits["nvidia.com/gpucores"] = str(cores)
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "ownerReferences": [{"kind": "ReplicaSet", "name": f"{name}-7d9f", "controller": True}],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"limits": limits, "requests": {"cpu": "4", "memory": "16Gi"}},
                }
            ],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


DEMO_PODS = {
    "llm-inference": demo_pod("llm-inference-7d9f-x2k4p", "6f1c3b0e-0000-4000-8000-000000000001", 40000, 50),
    "giant-training": demo_pod("giant-training-0", "6f1c3b0e-0000-4000-8000-000000000002", 100000),
    "notebook": demo_pod("notebook-5c8b-q7z9m", "6f1c3b0e-0000-4000-8000-000000000003", 8000, 30),
}


def train_pods() -> list[dict]:
    """The 40 ``llm-train`` pods of the demo snapshot (8 running on the node CA added, 32 pending)."""
    snapshot = orjson.loads((settings.BASE_DIR / "demo" / "cluster-snapshot.json").read_bytes())
    return [
        item
        for item in snapshot["items"]
        if item["kind"] == "Pod"
        and any(ref["name"] == TRAIN_REPLICASET for ref in item["metadata"].get("ownerReferences", []))
    ]


def _live_node(inv: NodeInventory) -> dict:
    return {
        "metadata": {"name": inv.name, "uid": inv.uid, "labels": inv.labels, "annotations": inv.annotations},
        "spec": {},
        "status": {},
    }


def _ask(pod: dict, nodes: list[dict], times: int) -> None:
    body = orjson.dumps({"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None})
    for _ in range(times):
        run_filter(body, caller="extender")


def _event(uid: str, reason: str, pod: dict, message: str, count: int, ago: timedelta, source: str) -> None:
    meta = pod["metadata"]
    now = timezone.now()
    from .events import parse_event_message

    parsed, groups = parse_event_message(reason, message)
    CAEvent.objects.update_or_create(
        event_uid=uid,
        defaults=dict(
            reason=reason,
            source=source,
            pod_uid=meta["uid"],
            pod_namespace=meta["namespace"],
            pod_name=meta["name"],
            message=message,
            parsed=parsed,
            groups=groups,
            count=count,
            first_seen=now - ago - timedelta(minutes=3),
            last_seen=now - ago,
        ),
    )


STATUS = """time: {now}
autoscalerStatus: Running
clusterWide:
  health: {{status: Healthy, nodeCounts: {{registered: {{total: 3, ready: 3}}}}}}
  scaleUp: {{status: InProgress}}
nodeGroups:
- name: gpu-a10
  health: {{status: Healthy, cloudProviderTarget: 2, minSize: 1, maxSize: 10}}
  scaleUp: {{status: NoActivity}}
- name: gpu-h100
  health: {{status: Healthy, cloudProviderTarget: 1, minSize: 0, maxSize: 4}}
  scaleUp: {{status: InProgress}}
- name: gpu-l4
  health: {{status: Healthy, cloudProviderTarget: 0, minSize: 0, maxSize: 10}}
  scaleUp: {{status: NoActivity}}
"""


def seed() -> dict:
    """Ask the three demo questions through the extender and store CA's matching events."""
    groups = {g.name: g for g in NodeGroup.objects.filter(name__in=["gpu-a10", "gpu-h100", "gpu-l4"])}
    missing = {"gpu-a10", "gpu-h100", "gpu-l4"} - set(groups)
    if missing:
        raise RuntimeError(f"demo node groups missing: {sorted(missing)} (load demo/profiles.yaml first)")
    templates = [group_template(groups[name]) for name in ("gpu-a10", "gpu-h100", "gpu-l4")]
    live = [
        _live_node(inv)
        for inv in NodeInventory.objects.filter(node_group__name="gpu-a10", gone_at__isnull=True)
    ]
    pods = DEMO_PODS
    _ask(pods["llm-inference"], templates, 6)
    _ask(pods["giant-training"], templates, 9)
    _ask(pods["notebook"], live or templates[:1], 2)
    recorder.flush(timeout=30)
    scaled = [pods["llm-inference"], *train_pods()]  # the pods of CA's chosen option: one event each
    for i, pod in enumerate(scaled):
        uid = "demo-ev-1" if i == 0 else f"demo-ev-train-{i:02d}"
        _event(uid, "TriggeredScaleUp", pod, H100_SCALE_UP, 1, timedelta(minutes=4), "cluster-autoscaler")
    _event(
        "demo-ev-2",
        "FailedScheduling",
        pods["llm-inference"],
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 4/4 CardInsufficientMemory. preemption: 0/3 nodes are available: 3 Preemption is not helpful "
        "for scheduling.",
        4,
        timedelta(minutes=5),
        "default-scheduler",
    )
    _event(
        "demo-ev-3",
        "NotTriggerScaleUp",
        pods["giant-training"],
        "pod didn't trigger scale-up: 1 4/4 CardInsufficientMemory, 1 8/8 CardInsufficientMemory, "
        "1 no device profile for node group gpu-l4",
        12,
        timedelta(minutes=1),
        "cluster-autoscaler",
    )
    _event(
        "demo-ev-4",
        "FailedScheduling",
        pods["giant-training"],
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 4/4 CardInsufficientMemory.",
        12,
        timedelta(minutes=1),
        "default-scheduler",
    )
    now = timezone.now()
    raw = STATUS.format(now=now.strftime("%Y-%m-%d %H:%M:%S.%f +0000 UTC"))
    from .events import parse_autoscaler_status

    parsed, error = parse_autoscaler_status(raw)
    AutoscalerStatus.objects.create(fetched_at=now, raw=raw, parsed=parsed, error=error, digest="demo")
    return {"pods": len(pods), "events": 3 + len(scaled)}

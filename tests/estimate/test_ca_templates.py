"""CA's template node (``simulator/node_info_utils.go``, ``utils/taints``, ``utils/daemonset``):
DaemonSet pods on every fresh node, CA's own taints sanitised away, an unschedulable template."""

from __future__ import annotations

import pytest

from hami_sim.engine.estimate import GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.scaleup import daemon_set_pod, sanitize_template
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node


def _ds(
    name: str, millicores: int, node_selector: dict | None = None, tolerations: list | None = None
) -> dict:
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": f"{millicores}m"}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    return {"metadata": {"name": name, "namespace": "kube-system"}, "spec": {"template": {"spec": spec}}}


def _option(template: dict, pods: list[PendingPods], daemons: list[dict] = ()):  # type: ignore[assignment]
    group = GroupTemplate("g", template, daemon_pods=tuple(daemon_set_pod(d) for d in daemons))
    return estimate(Simulator(), pods, [group], limits=ScaleUpLimits(max_nodes_per_scale_up=0)).options[0]


@pytest.mark.parametrize(
    ("daemons", "nodes", "daemon_pods"),
    [
        ([], 5, []),  # 10 pods of 400m: 2 per 1000m node
        ([_ds("logs", 300)], 10, ["daemonset/kube-system/logs"]),  # 700m left: 1 pod a node
        ([_ds("gpu-only", 200, {"pool": "gpu"})], 5, []),  # its selector does not match: not placed
        ([_ds("huge", 5000)], 5, []),  # does not fit the fresh node: not placed
    ],
)
def test_daemon_set_pods_take_room_on_every_fresh_node(daemons, nodes, daemon_pods):
    option = _option(ca_node("t", 1000, "4Gi"), [PendingPods(ca_pod("w", 400, 1000), 10)], daemons)
    assert option.node_count == nodes
    assert option.daemon_pods == daemon_pods


def test_daemon_set_pods_respect_taints():
    tainted = ca_node("t", 1000, "4Gi")
    tainted["spec"]["taints"] = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    toleration = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    pending = [PendingPods(ca_pod("w", 400, 1000), 2)]
    pending[0].pod["spec"]["tolerations"] = toleration
    assert _option(tainted, pending, [_ds("plain", 200)]).daemon_pods == []
    assert _option(tainted, pending, [_ds("tolerant", 200, tolerations=toleration)]).daemon_pods == [
        "daemonset/kube-system/tolerant"
    ]


@pytest.mark.parametrize(
    ("key", "removed"),
    [
        ("ToBeDeletedByClusterAutoscaler", True),
        ("DeletionCandidateOfClusterAutoscaler", True),
        ("node.kubernetes.io/not-ready", True),
        ("node.kubernetes.io/unschedulable", True),
        ("ignore-taint.cluster-autoscaler.kubernetes.io/warmup", True),
        ("startup-taint.cluster-autoscaler.kubernetes.io/cni", True),
        ("status-taint.cluster-autoscaler.kubernetes.io/x", True),
        ("nvidia.com/gpu", False),
    ],
)
def test_cas_own_and_condition_taints_are_sanitised_away(key, removed):
    tmpl = gpu_node("a10")
    tmpl["spec"]["taints"] = [{"key": key, "value": "1", "effect": "NoSchedule"}]
    node, keys = sanitize_template(tmpl)
    assert (keys == [key]) is removed
    option = _option(tmpl, [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=12000), 2)])
    assert (option.node_count == 1) is removed  # a kept NoSchedule taint the pod does not tolerate


def test_an_unschedulable_template_holds_only_pods_that_tolerate_it():
    tmpl = ca_node("t", 1000, "4Gi")
    tmpl["spec"]["unschedulable"] = True
    option = _option(tmpl, [PendingPods(ca_pod("w", 400, 1000), 2)])
    assert option.node_count == 0 and set(option.unschedulable.values()) == {"node(s) were unschedulable"}
    tolerant = ca_pod("t", 400, 1000)
    tolerant["spec"]["tolerations"] = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
    assert _option(tmpl, [PendingPods(tolerant, 2)]).node_count == 1


def test_allocatable_not_capacity_bounds_a_node():
    tmpl = ca_node("t", 1000, "4Gi")
    tmpl["status"]["allocatable"]["cpu"] = "800m"
    option = _option(tmpl, [PendingPods(ca_pod("w", 400, 1000), 4)])
    assert option.node_count == 2  # 2 pods per 800m allocatable; least-waste still measures capacity
    assert option.waste.cpu == pytest.approx(0.2)

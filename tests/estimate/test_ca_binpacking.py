"""CA's binpacking estimator table (``estimator/binpacking_estimator_test.go``), in our words, with
HAMi device cases beside it. Each row: a template, pending equivalence groups, the node limit, and
the node and pod counts CA's estimator answers."""

from __future__ import annotations

import pytest

from hami_sim.engine.ca_releases import ca_release
from hami_sim.engine.estimate import ClusterNode, GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node


def _run(template: dict, pods: list[PendingPods], max_nodes: int = 0, **group):
    limits = ScaleUpLimits(max_nodes_per_scale_up=max_nodes)
    result = estimate(Simulator(), pods, [GroupTemplate("g", template, **group)], limits=limits)
    return result.options[0]


def _host_port(p: dict) -> dict:
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 5555}]
    return p


CASES = [
    # name, template, pending, max nodes (0 = none), nodes, pods
    (
        "simple resource-based binpacking",
        ca_node("t", 350 * 3 - 50, "2000Mi"),
        [PendingPods(ca_pod("e", 350, 1000), 10)],
        0,
        5,
        10,
    ),
    (
        "pods-per-node bound binpacking",
        ca_node("t", 10000, "20000Mi"),
        [PendingPods(ca_pod("e", 10, 100), 20)],
        0,
        2,
        20,
    ),
    (
        "limiter cuts binpacking",
        ca_node("t", 1000, "5000Mi"),
        [PendingPods(ca_pod("e", 500, 1000), 20)],
        5,
        5,
        10,
    ),
    (
        "decreasing ordered pods are processed first",
        ca_node("t", 1000, "5000Mi"),
        [PendingPods(ca_pod("small", 50, 1000), 10), PendingPods(ca_pod("big", 500, 1000), 10)],
        5,
        5,
        10,
    ),
    # HAMi device cases: the device, not cpu, bounds the node
    (
        "two 12000 MiB pods per 2-card A10 node",
        gpu_node("a10"),
        [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=12000), 16)],
        0,
        8,
        16,
    ),
    (
        "four 5000 MiB pods per A10 card",
        gpu_node("a10"),
        [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=5000), 16)],
        0,
        2,
        16,
    ),
    (
        "the limiter cuts device binpacking too",
        gpu_node("a10"),
        [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=12000), 16)],
        3,
        3,
        6,
    ),
    (
        "a pod no empty node can hold schedules nothing and adds no node",
        gpu_node("a10"),
        [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=30000), 4)],
        0,
        0,
        0,
    ),
]


@pytest.mark.parametrize(
    ("name", "template", "pending", "max_nodes", "nodes", "pods"), CASES, ids=[c[0] for c in CASES]
)
def test_binpacking_estimate(name, template, pending, max_nodes, nodes, pods):
    option = _run(template, pending, max_nodes)
    assert (option.node_count, len(option.scheduled)) == (nodes, pods)


def test_decreasing_order_schedules_the_big_pods():
    """CA's row also checks *which* pods were processed: the bigger group, whole."""
    pending = [PendingPods(ca_pod("small", 50, 1000), 10), PendingPods(ca_pod("big", 500, 1000), 10)]
    option = _run(ca_node("t", 1000, "5000Mi"), pending, 5)
    assert option.scheduled == [f"default/big#{i}" for i in range(10)]
    assert option.unschedulable["default/small#0"].startswith("node limit reached")


def test_host_port_conflict_forces_a_pod_per_node():
    """binpacking_estimator_test.go TestBinpackingEstimate "hostport conflict forces pod-per-node"."""
    option = _run(ca_node("t", 1000, "5000Mi"), [PendingPods(_host_port(ca_pod("e", 200, 1000)), 8)])
    assert (option.node_count, len(option.scheduled)) == (8, 8)
    assert all(len(n.pods) == 1 for n in option.nodes)


def _spread(p: dict, key: str, skew: int = 2) -> dict:
    p["metadata"]["labels"] = {"app": "estimatee"}
    p["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": skew,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "estimatee"}},
        }
    ]
    return p


def _zoned(name: str, millicores: int, memory: str, zone: str) -> dict:
    """CA's ``makeNode``: hostname and zone labels."""
    return ca_node(name, millicores, memory, labels={"kubernetes.io/hostname": name, ZONE: zone})


ZONE = "topology.kubernetes.io/zone"
OLD_NODE = ClusterNode(_zoned("oldnode", 100, "100Mi", "zone-jupiter"))

SPREAD_CASES = [
    # binpacking_estimator_test.go TestBinpackingEstimate (CA 1.36.1; per release: test_ca_versions.py);
    # the snapshot holds an empty "oldnode" (100m) in zone-jupiter beside the template's zone-mars
    ("hostname topology spreading with maxSkew=2 forces 2 pods/node", "kubernetes.io/hostname", 200, 4, 8),
    ("zonal topology spreading with maxSkew=2 only allows 2 pods to schedule", ZONE, 20, 1, 2),
]


@pytest.mark.parametrize(
    ("name", "key", "millicores", "nodes", "pods"), SPREAD_CASES, ids=[c[0] for c in SPREAD_CASES]
)
def test_topology_spread_binpacking(name, key, millicores, nodes, pods):
    pending = [PendingPods(_spread(ca_pod("e", millicores, 100), key), 8)]
    limits = ScaleUpLimits(max_nodes_per_scale_up=0)
    template = _zoned("template", 1000, "5000Mi", "zone-mars")
    result = estimate(Simulator(), pending, [GroupTemplate("g", template)], limits=limits, cluster=[OLD_NODE])
    [option] = result.options
    assert (option.node_count, len(option.scheduled)) == (nodes, pods)


@pytest.mark.parametrize(
    ("budget", "ticks", "nodes", "timed_out"),
    [
        (10.0, 1.0, 5, False),  # 5 nodes well inside the budget
        (10.0, 3.0, 3, True),  # start at 3 s (deadline 13 s); the 4th node asks at 15 s: refused
        (0.0, 100.0, 5, False),  # 0 = no per-group budget
    ],
)
def test_max_nodegroup_binpacking_duration(budget, ticks, nodes, timed_out):
    """CA's limiter asks the clock before each new node (a fake clock: one tick per reading)."""
    now = [0.0]

    def clock() -> float:
        now[0] += ticks
        return now[0]

    limits = ScaleUpLimits(max_nodes_per_scale_up=0, group_budget=budget, clock=clock)
    pending = [PendingPods(ca_pod("e", 500, 1000), 10)]
    result = estimate(Simulator(), pending, [GroupTemplate("g", ca_node("t", 1000, "5000Mi"))], limits=limits)
    [option] = result.options
    assert (option.node_count, option.timed_out) == (nodes, timed_out)
    if timed_out:
        assert "max-nodegroup-binpacking-duration" in next(iter(option.unschedulable.values()))


@pytest.mark.parametrize(
    ("version", "counts", "cut"),
    [
        ("1.32", [2, 2, 2], []),
        ("1.34", [2, 2, 2], []),
        ("1.35", [2, 0, 0], ["b", "c"]),
        ("1.36", [2, 0, 0], ["b", "c"]),
    ],
)
def test_max_binpacking_time_stops_binpacking_from_ca_1_35(version, counts, cut):
    """CA 1.32 to 1.34's time limiter only logs when the whole binpacking runs over: every group is
    still estimated. From 1.35 (processors/binpacking/time_limiter.go) it stops binpacking after the
    group that ran over: the later groups are no options, and the expander chooses among the rest.
    Either way the answer says it ran over."""
    now = [0.0]

    def clock() -> float:
        now[0] += 5.0
        return now[0]

    limits = ScaleUpLimits(total_budget=2.0, group_budget=0, clock=clock)
    groups = [GroupTemplate(n, ca_node(n, 1000, "5000Mi")) for n in ("a", "b", "c")]
    pending = [PendingPods(ca_pod("e", 500, 1000), 4)]
    result = estimate(Simulator(), pending, groups, limits=limits, ca=ca_release(version))
    assert [o.node_count for o in result.options] == counts
    assert [o.node_group for o in result.options if o.cut_short] == cut
    for option in result.options[1:] if cut else ():
        assert option.skipped.startswith("max-binpacking-time of 2 s exceeded")
    assert result.chosen == "a" and result.binpacking_time_exceeded

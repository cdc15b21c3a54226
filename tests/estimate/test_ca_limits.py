"""CA's scale-up limits: group max size minus current size, maxNodesPerScaleUp 0 = no limit, the
cluster totals, and balance-similar-node-groups (``core/scaleup``, ``estimator`` thresholds,
``processors/nodegroupset``)."""

from __future__ import annotations

import pytest

from hami_sim.engine.estimate import GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.scaleup import GroupSize, balance, min_limit, node_limit
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node

TWELVE_GIB_PODS = [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=12000), 40)]  # 2 per node


def _one(group: GroupTemplate, limits: ScaleUpLimits, pods=TWELVE_GIB_PODS):
    result = estimate(Simulator(), pods, [group], limits=limits)
    return result, result.options[0]


@pytest.mark.parametrize(
    ("max_size", "current", "per_scale_up", "nodes", "skipped"),
    [
        (10, 2, 1000, 8, ""),  # warm gpu-a10: max 10, 2 live nodes -> 8 new ones (live nodes count)
        (10, 0, 1000, 10, ""),
        (0, 0, 1000, 0, "max node group size reached (0/0)"),  # max size 0 never grows
        (5, 5, 1000, 0, "max node group size reached (5/5)"),
        (30, 0, 0, 20, ""),  # maxNodesPerScaleUp 0 = no limit: all 40 pods on 20 nodes
        (30, 0, 4, 4, ""),
        (None, 0, 0, 20, ""),  # no known max size, no limit
    ],
)
def test_group_room_and_max_nodes_per_scale_up(max_size, current, per_scale_up, nodes, skipped):
    group = GroupTemplate("gpu-a10", gpu_node("a10"), max_size=max_size, current_size=current)
    result, option = _one(group, ScaleUpLimits(max_nodes_per_scale_up=per_scale_up))
    assert option.node_count == nodes
    assert option.skipped == skipped
    if skipped:
        assert result.chosen is None and "skipped" in result.explanation


@pytest.mark.parametrize(
    ("base", "target", "expected"),
    [(0, 0, 0), (0, 5, 5), (5, 3, 3), (3, 5, 3), (5, 0, 5), (-1, 5, -1), (5, -1, -1)],
)
def test_min_limit_is_cas_get_min_limit(base, target, expected):
    assert min_limit(base, target) == expected


@pytest.mark.parametrize(
    ("total", "current_nodes", "expected"),
    [(0, 50, 1000), (60, 50, 10), (50, 50, -1), (40, 50, -1)],
)
def test_max_nodes_total_limits_binpacking(total, current_nodes, expected):
    limits = ScaleUpLimits(max_nodes_total=total, current_nodes=current_nodes)
    assert node_limit(GroupSize("g", 0, None), [], limits) == expected


def test_max_nodes_total_caps_the_estimate_and_the_scale_up():
    group = GroupTemplate("gpu-a10", gpu_node("a10"), max_size=100)
    result, option = _one(group, ScaleUpLimits(max_nodes_total=56, current_nodes=50))
    assert option.node_count == 6 and result.scale_up is not None
    assert result.scale_up.node_count == 6 and result.scale_up.groups == [("gpu-a10", 0, 6)]


@pytest.mark.parametrize(
    ("limits", "count", "capped"),
    [
        # 32-core, 128 GiB, 2-GPU nodes; the estimate wants 20
        (ScaleUpLimits(cores_total=320), 10, ["cores total"]),
        (ScaleUpLimits(cores_total=400, current_cores=100), 9, ["cores total"]),
        (ScaleUpLimits(memory_total=1024 * 2**30), 8, ["memory total"]),
        (ScaleUpLimits(gpu_total=14, current_gpus=4), 5, ["gpus total"]),
        (ScaleUpLimits(cores_total=10_000), 20, []),
    ],
)
def test_resource_totals_cap_the_chosen_scale_up(limits, count, capped):
    group = GroupTemplate("gpu-a10", gpu_node("a10"), max_size=100)
    result, option = _one(group, limits)
    assert option.node_count == 20  # the estimate itself is not capped (CA caps after the expander)
    assert result.scale_up is not None
    assert (result.scale_up.node_count, result.scale_up.capped_by) == (count, capped)


def test_a_group_whose_one_node_exceeds_a_total_is_no_option():
    group = GroupTemplate("gpu-a10", gpu_node("a10"), max_size=100)
    result, option = _one(group, ScaleUpLimits(cores_total=100, current_cores=90))
    assert option.skipped == "max cluster cores limit reached" and result.chosen is None


@pytest.mark.parametrize(
    ("sizes", "new", "expected"),
    [
        # CA's balancing_processor_test shapes: smallest first, up to each max size
        ([("a", 1, 10), ("b", 3, 10), ("c", 5, 10)], 2, [("a", 1, 3)]),
        ([("a", 1, 10), ("b", 3, 10), ("c", 5, 10)], 5, [("a", 1, 5), ("b", 3, 4)]),
        ([("a", 1, 10), ("b", 3, 10), ("c", 5, 10)], 9, [("a", 1, 6), ("b", 3, 6), ("c", 5, 6)]),
        ([("a", 1, 2), ("b", 3, 10)], 6, [("a", 1, 2), ("b", 3, 8)]),
        ([("a", 1, 2), ("b", 3, 4)], 10, [("a", 1, 2), ("b", 3, 4)]),  # capped at the groups' room
        ([("a", 3, 3), ("b", 0, 1)], 4, [("b", 0, 1)]),
    ],
)
def test_balance_scale_up_between_groups(sizes, new, expected):
    result = balance([GroupSize(*s) for s in sizes], new)
    assert sorted(result) == sorted(expected)


def _zone(name: str, zone: str) -> dict:
    t = gpu_node(name)
    t["metadata"]["labels"] = {
        "kubernetes.io/hostname": name,
        "topology.kubernetes.io/zone": zone,
        "pool": "gpu",
    }
    return t


def test_balance_similar_node_groups_splits_the_scale_up():
    groups = [
        GroupTemplate("gpu-a", _zone("a", "z1"), max_size=10, current_size=2),
        GroupTemplate("gpu-b", _zone("b", "z2"), max_size=10, current_size=0),
        GroupTemplate("cpu", ca_node("c", 64000, "256Gi"), max_size=10),
    ]
    pods = [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=12000), 20)]  # 10 nodes
    limits = ScaleUpLimits(balance_similar=True)
    result = estimate(Simulator(), pods, groups, limits=limits)
    # gpu-a alone has room for 8; with its similar gpu-b the limit is 18, so all 10 nodes are estimated
    assert result.options[0].node_count == 10
    assert result.scale_up is not None
    assert result.scale_up.node_count == 10
    assert sorted(result.scale_up.groups) == [("gpu-a", 2, 6), ("gpu-b", 0, 6)]
    plain = estimate(Simulator(), pods, groups, limits=ScaleUpLimits())
    assert plain.options[0].node_count == 8 and plain.scale_up is not None
    assert plain.scale_up.groups == [("gpu-a", 2, 10)]


def test_differently_labelled_groups_are_not_balanced():
    a = _zone("a", "z1")
    b = _zone("b", "z2")
    b["metadata"]["labels"]["pool"] = "other"
    groups = [GroupTemplate("gpu-a", a, max_size=10), GroupTemplate("gpu-b", b, max_size=10)]
    pods = [PendingPods(ca_pod("g", 100, 1000, gpu_count=1, gpumem=12000), 4)]
    result = estimate(Simulator(), pods, groups, limits=ScaleUpLimits(balance_similar=True))
    assert result.scale_up is not None and len(result.scale_up.groups) == 1
    ignoring = ScaleUpLimits(balance_similar=True, ignored_labels=frozenset({"pool"}))
    result = estimate(Simulator(), pods, groups, limits=ignoring)
    assert result.scale_up is not None and len(result.scale_up.groups) == 2


@pytest.mark.parametrize(
    ("max_size", "current", "limits", "says"),
    [
        # the demo's gpu-h100: 40 pods of one card each need 20 nodes, max size 4 with 1 live
        (4, 1, ScaleUpLimits(), "(node group gpu-a10's max size 4 with 1 node(s) now)"),
        (
            None,
            0,
            ScaleUpLimits(max_nodes_total=12, current_nodes=9),
            "(--max-nodes-total 12 with 9 node(s) in the cluster)",
        ),
        (
            None,
            0,
            ScaleUpLimits(max_nodes_per_scale_up=5),
            "(CA's per-scale-up limit --max-nodes-per-scale-up 5)",
        ),
    ],
    ids=["max-size", "max-nodes-total", "per-scale-up"],
)
def test_pods_a_limit_stops_name_the_limit(max_size, current, limits, says):
    """Pods that fit the group but for a node limit say which limit stops them."""
    group = GroupTemplate("gpu-a10", gpu_node("a10"), max_size=max_size, current_size=current)
    _result, option = _one(group, limits)
    reasons = set(option.unschedulable.values())
    assert len(reasons) == 1
    (reason,) = reasons
    assert reason.startswith("node limit reached: at most ") and reason.endswith(says)

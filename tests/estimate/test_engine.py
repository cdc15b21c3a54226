"""The pure estimator and predicates (``hami_sim.engine.estimate`` / ``scheduler_filters``), no Django."""

from __future__ import annotations

import pytest

from hami_sim.engine.estimate import (
    EstimateError,
    Expander,
    GroupTemplate,
    PendingPods,
    estimate,
    parse_expander,
)
from hami_sim.engine.scheduler_filters import (
    matches_required_affinity,
    pod_demand,
    static_mismatch,
    untolerated_taint,
)
from hami_sim.engine.simulate import Simulator
from tests.factories import pod
from tests.sessions.conftest import a10_node


def _owned(p: dict, owner: str) -> dict:
    p["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": owner, "uid": owner, "controller": True}
    ]
    return p


def _cpu_pod(name: str, cpu: str, owner: str, gpumem: int = 100) -> dict:
    p = _owned(pod(name, gpumem=gpumem), owner)
    p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": cpu}
    return p


def _tmpl(cpu: str = "10") -> dict:
    t = a10_node("t")
    t["status"]["allocatable"] = {"cpu": cpu, "memory": "64Gi", "pods": "110"}
    return t


def test_bigger_pods_go_first_and_existing_nodes_are_used_round_robin():
    small = PendingPods(_cpu_pod("s", "1", "rs-s"), 4)
    big = PendingPods(_cpu_pod("b", "6", "rs-b"), 2)
    result = estimate(Simulator(), [small, big], [GroupTemplate("g", _tmpl())])
    [option] = result.options
    assert [n.pods for n in option.nodes] == [
        ["default/b#0", "default/s#0", "default/s#2"],
        ["default/b#1", "default/s#1", "default/s#3"],
    ]


def test_ties_in_share_go_to_more_device_memory():
    light = PendingPods(_owned(pod("l", gpumem=1000), "rs-l"), 1)
    heavy = PendingPods(_owned(pod("h", gpumem=9000), "rs-h"), 1)
    [option] = estimate(Simulator(), [light, heavy], [GroupTemplate("g", _tmpl())]).options
    assert option.nodes[0].pods == ["default/h#0", "default/l#0"]


def test_a_group_that_cannot_fit_an_empty_node_stops_and_the_next_goes_on():
    huge = PendingPods(_owned(pod("x", gpumem=30000), "rs-x"), 3)
    fine = PendingPods(_owned(pod("y", gpumem=1000), "rs-y"), 2)
    [option] = estimate(Simulator(), [huge, fine], [GroupTemplate("g", _tmpl())]).options
    assert option.unschedulable == {f"default/x#{i}": "2/2 CardInsufficientMemory" for i in range(3)}
    assert option.scheduled == ["default/y#0", "default/y#1"]
    # the empty node added for x is reused by y; only nodes with pods count
    assert option.node_count == 1 and option.nodes[0].name == "t-e-0"


def test_resource_and_device_limits_combine():
    pods = PendingPods(_cpu_pod("c", "4", "rs-c", gpumem=12000), 3)
    [option] = estimate(Simulator(), [pods], [GroupTemplate("g", _tmpl("100"))]).options
    assert [len(n.pods) for n in option.nodes] == [2, 1]  # two 12000 MiB pods per 2-card node
    [option] = estimate(Simulator(), [pods], [GroupTemplate("g", _tmpl("5"))]).options
    assert [len(n.pods) for n in option.nodes] == [1, 1, 1]  # cpu allows one pod a node


def test_pods_without_devices_fit_by_cpu_only():
    p = _owned(pod("cpu", gpu_count=None), "rs")
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    [option] = estimate(Simulator(), [PendingPods(p, 10)], [GroupTemplate("g", _tmpl("10"))]).options
    assert option.node_count == 2 and option.waste.gpu_memory == 1.0


def test_unregistered_template_rejects_device_pods_only():
    cold = {
        "metadata": {"name": "cold"},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
    }
    gpu_pod = PendingPods(pod("g", uid="g", gpumem=10))
    plain = pod("p", uid="p", gpu_count=None)
    [option] = estimate(Simulator(), [gpu_pod, PendingPods(plain)], [GroupTemplate("cold", cold)]).options
    assert option.unschedulable == {"g": "node unregistered"} and option.scheduled == ["p"]


def test_expander_parsing():
    assert parse_expander(None).names == ("least-waste",)
    e = parse_expander("priority,least-nodes", {"5": ["a"], "b.*": 7})
    assert e.names == ("priority", "least-nodes") and sorted(p for p, _ in e.priorities) == [5, 7]
    with pytest.raises(EstimateError):
        parse_expander("price")
    with pytest.raises(EstimateError):
        parse_expander("priority", {"x": ["a"]})
    assert isinstance(parse_expander({"name": "most-pods"}), Expander)


# -- predicates ----------------------------------------------------------------------------------


def _node(labels=None, taints=None, name="n") -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def _with(spec: dict) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"containers": [], **spec}}


@pytest.mark.parametrize(
    ("tolerations", "taint", "tolerated"),
    [
        ([], {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        ([], {"key": "k", "value": "v", "effect": "PreferNoSchedule"}, True),
        ([{"operator": "Exists"}], {"key": "k", "value": "v", "effect": "NoExecute"}, True),
        (
            [{"key": "k", "operator": "Equal", "value": "v"}],
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            True,
        ),
        ([{"key": "k", "value": "w"}], {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        (
            [{"key": "k", "operator": "Exists", "effect": "NoExecute"}],
            {"key": "k", "effect": "NoSchedule"},
            False,
        ),
        ([{"key": "other", "operator": "Exists"}], {"key": "k", "effect": "NoSchedule"}, False),
    ],
)
def test_tolerations(tolerations, taint, tolerated):
    reason = untolerated_taint(_with({"tolerations": tolerations}), _node(taints=[taint]))
    assert (reason == "") is tolerated


@pytest.mark.parametrize(
    ("expr", "labels", "matches"),
    [
        ({"key": "z", "operator": "In", "values": ["a", "b"]}, {"z": "b"}, True),
        ({"key": "z", "operator": "In", "values": ["a"]}, {}, False),
        ({"key": "z", "operator": "NotIn", "values": ["a"]}, {}, True),
        ({"key": "z", "operator": "NotIn", "values": ["a"]}, {"z": "a"}, False),
        ({"key": "z", "operator": "Exists"}, {"z": ""}, True),
        ({"key": "z", "operator": "DoesNotExist"}, {"z": ""}, False),
        ({"key": "n", "operator": "Gt", "values": ["4"]}, {"n": "5"}, True),
        ({"key": "n", "operator": "Gt", "values": ["4"]}, {"n": "4"}, False),
        ({"key": "n", "operator": "Lt", "values": ["4"]}, {"n": "3"}, True),
        ({"key": "n", "operator": "Lt", "values": ["4"]}, {"n": "x"}, False),
    ],
)
def test_required_affinity_operators(expr, labels, matches):
    p = _with(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [expr]}]
                    }
                }
            }
        }
    )
    assert matches_required_affinity(p, _node(labels)) is matches


def test_affinity_terms_are_ored_and_empty_terms_match_nothing():
    required = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]},
        ]
    }
    p = _with({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}})
    assert matches_required_affinity(p, _node(name="n"))
    assert not matches_required_affinity(p, _node(name="m"))
    empty = _with(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}
                }
            }
        }
    )
    assert not matches_required_affinity(empty, _node())
    assert (
        static_mismatch(_with({"nodeSelector": {"a": "1"}}), _node({"a": "2"}))
        == "node(s) didn't match Pod's node affinity/selector"
    )


def test_pod_demand_uses_init_peak_overhead_and_limits():
    p = {
        "spec": {
            "initContainers": [{"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}],
            "containers": [
                {"resources": {"requests": {"cpu": "500m"}}},
                {"resources": {"limits": {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "1Gi"}}},
            ],
            "overhead": {"cpu": "100m"},
        }
    }
    d = pod_demand(p)
    assert (d.cpu, d.memory, d.ephemeral, d.pods) == (3100, 2 * 2**30, 2**30, 1)


def test_pods_without_a_controller_pack_like_replicas():
    """Each ownerless pod is its own equivalence group (as in CA); the packing is the same."""
    owned = estimate(
        Simulator(), [PendingPods(_owned(pod("w", gpumem=5000), "rs"), 16)], [GroupTemplate("g", _tmpl())]
    )
    loose = [PendingPods(pod(f"w{i}", uid=f"u{i}", gpumem=5000)) for i in range(16)]
    alone = estimate(Simulator(), loose, [GroupTemplate("g", _tmpl())])
    assert alone.options[0].node_count == owned.options[0].node_count == 2
    assert [len(n.pods) for n in alone.options[0].nodes] == [8, 8]


def test_mixed_shapes_fill_gaps_left_by_bigger_pods():
    big = PendingPods(_owned(pod("big", gpumem=15000), "rs-big"), 4)  # one per card, 8028 MiB left on each
    small = PendingPods(_owned(pod("small", gpumem=8000), "rs-small"), 4)  # fits the gaps
    [option] = estimate(Simulator(), [small, big], [GroupTemplate("g", _tmpl())]).options
    assert option.node_count == 2 and not option.unschedulable
    for n in option.nodes:
        assert sorted(d.usedmem for d in n.devices) == [23000, 23000]

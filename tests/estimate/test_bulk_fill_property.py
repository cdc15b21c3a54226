"""Bulk filling (``engine/estimate/bulk.py``: a fresh node takes as many pods of one equivalence group
as it holds, at once) against pod-by-pod packing (``estimate(fast=False)``): on generated bursts of
large Deployments, over templates with and without devices, few pod slots, extended resources,
DaemonSet pods and node limits, with host ports and mixed shapes meeting on a node, every answer is
the same, down to each new node's name, pods, requests and devices."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine.estimate import Expander, GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.simulate import Simulator
from tests.factories import kube

from .helpers import ca_pod
from .test_fast_path_property import _answer

FOO = "example.com/foo"

# (cards, devmem, cpu millicores, memory, pod slots, example.com/foo): the templates of the groups
KINDS = (
    (2, 23028, 8000, "64Gi", "110", None),
    (4, 81920, 16000, "128Gi", "12", None),
    (8, 46068, 64000, "512Gi", "110", "5"),
    (0, 0, 16000, "64Gi", "20", None),  # no devices: only cpu, memory and pod slots limit a node
)

GROUP = st.fixed_dictionaries(
    {
        "kind": st.integers(0, len(KINDS) - 1),
        "limit": st.sampled_from([None, None, 3]),  # the request's maxNewNodes
        "daemon": st.sampled_from([0, 0, 500, 4000]),  # a DaemonSet pod's cpu on every new node
    }
)
DEPLOYMENT = st.fixed_dictionaries(
    {
        "gpus": st.sampled_from([None, 1, 1, 2]),
        "mem": st.sampled_from([None, 3000, 9000, 20000]),
        "cores": st.sampled_from([None, 10, 30, 100]),
        "cpu": st.sampled_from([100, 1000, 3000]),
        "replicas": st.integers(1, 80),
        "port": st.sampled_from([False, False, False, True]),  # a host port: one pod per node
        "foo": st.sampled_from([False, False, True]),  # one example.com/foo each
    }
)


def _group(k: int, g: dict) -> GroupTemplate:
    cards, devmem, cpu, memory, slots, foo = KINDS[g["kind"]]
    name = f"template-node-for-b{k}"
    devices = [kube.gpu(f"GPU-{name}-{i}", index=i, devmem=devmem) for i in range(cards)] if cards else None
    capacity = {"cpu": f"{cpu}m", "memory": memory, "pods": slots}
    if foo:
        capacity[FOO] = foo
    tmpl = kube.node(name, devices, capacity=capacity)
    daemons = ()
    if g["daemon"]:
        daemons = (ca_pod(f"ds-{k}", g["daemon"], "1Gi"),)
    return GroupTemplate(f"b{k}", tmpl, max_new_nodes=g["limit"], daemon_pods=daemons)


def _pod(k: int, d: dict) -> PendingPods:
    device = {"gpu_count": d["gpus"], "gpumem": d["mem"] if d["gpus"] else None}
    if d["gpus"]:
        device["gpucores"] = d["cores"]
    p = ca_pod(f"d{k}", d["cpu"], f"{1 + k % 3}Gi", **device)
    main = p["spec"]["containers"][0]
    if d["port"]:
        main["ports"] = [{"containerPort": 80, "hostPort": 8080 + k % 2}]
    if d["foo"]:
        main["resources"]["requests"][FOO] = "1"
        main["resources"].setdefault("limits", {})[FOO] = "1"
    return PendingPods(p, d["replicas"])


def _both(pods: list[PendingPods], groups: list[GroupTemplate], per_scale_up: int = 0) -> tuple:
    limits = ScaleUpLimits(max_nodes_per_scale_up=per_scale_up, group_budget=0)
    expander = Expander(names=("least-waste",))
    fast = estimate(Simulator(), pods, groups, expander, limits=limits)
    exact = estimate(Simulator(), pods, groups, expander, limits=limits, fast=False)
    return _answer(fast), _answer(exact)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    groups=st.lists(GROUP, min_size=1, max_size=4),
    deployments=st.lists(DEPLOYMENT, min_size=1, max_size=5),
    per_scale_up=st.sampled_from([0, 0, 20]),
)
def test_bulk_filling_answers_as_pod_by_pod_packing(groups, deployments, per_scale_up):
    pods = [_pod(k, d) for k, d in enumerate(deployments)]
    fast, exact = _both(pods, [_group(k, g) for k, g in enumerate(groups)], per_scale_up)
    assert fast == exact


# a Deployment that fills many fresh nodes alone, then one whose pods meet it on partly used nodes
BURSTS = [
    pytest.param([{"mem": 5000, "replicas": 200}], 25, id="one-shape-200-on-2xA10"),
    pytest.param([{"mem": 5000, "replicas": 30}, {"mem": 3000, "replicas": 45}], 10, id="two-shapes-meet"),
    pytest.param([{"mem": None, "gpus": None, "replicas": 50}], 4, id="no-devices-cpu-bound"),
]


@pytest.mark.parametrize(("deployments", "nodes"), BURSTS)
def test_bursts_fill_fresh_nodes_as_pod_by_pod_packing(deployments, nodes):
    base = {"gpus": 1, "cores": None, "cpu": 1000, "port": False, "foo": False}
    pods = [_pod(k, {**base, **d}) for k, d in enumerate(deployments)]
    group = {"kind": 0 if deployments[0]["mem"] else 3, "limit": None, "daemon": 0}
    fast, exact = _both(pods, [_group(0, group)])
    assert fast == exact
    assert fast[0][0][1] == nodes  # the group's node count

"""The estimator's candidate lists (a node that rejected a pod shape is skipped until it changes)
must never change a placement, now that affinity, anti-affinity, spread and host ports decide fits
too: the same request packed with every shape scanning every node gives the same nodes and pods."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hami_sim.engine import estimate as engine
from hami_sim.engine.estimate import ClusterNode, GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.simulate import Simulator
from tests.factories import gpu

from .helpers import ca_node, ca_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"

GROUP = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from([100, 300, 600]),
        "count": st.integers(1, 6),
        "app": st.sampled_from(["a", "b"]),
        "port": st.sampled_from([None, 80]),
        "anti": st.sampled_from([None, HOST, ZONE]),
        "affinity": st.sampled_from([None, HOST]),
        "spread": st.sampled_from([None, HOST, ZONE]),
        "gpu": st.booleans(),
    }
)


def _pod(k: int, g: dict) -> PendingPods:
    device = {"gpu_count": 1, "gpumem": 8000} if g["gpu"] else {}
    p = ca_pod(f"p{k}", g["cpu"], 10, **device)
    p["metadata"]["labels"] = {"app": g["app"]}
    spec = p["spec"]
    if g["port"]:
        spec["containers"][0]["ports"] = [{"containerPort": 1, "hostPort": g["port"]}]
    term = {"labelSelector": {"matchLabels": {"app": "a"}}}
    affinity = {}
    if g["anti"]:
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [{**term, "topologyKey": g["anti"]}]
        }
    if g["affinity"]:
        affinity["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [{**term, "topologyKey": g["affinity"]}]
        }
    if affinity:
        spec["affinity"] = affinity
    if g["spread"]:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": g["spread"], "whenUnsatisfiable": "DoNotSchedule", **term}
        ]
    return PendingPods(p, g["count"])


def _packed(entries, cluster) -> list[list[str]]:
    template = ca_node("t", 1000, "5000Mi", labels={HOST: "t", ZONE: "zone-mars"})
    devices = [gpu(f"G{i}", index=i) for i in range(2)]
    template["metadata"]["annotations"] = {"hami.io/node-nvidia-register": orjson.dumps(devices).decode()}
    limits = ScaleUpLimits(max_nodes_per_scale_up=12)
    result = estimate(Simulator(), entries, [GroupTemplate("g", template)], limits=limits, cluster=cluster)
    return [n.pods for n in result.options[0].nodes]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(groups=st.lists(GROUP, min_size=1, max_size=4), other_zone=st.booleans())
def test_candidate_lists_never_change_a_placement(groups, other_zone):
    entries = [_pod(k, g) for k, g in enumerate(groups)]
    cluster = (
        [ClusterNode(ca_node("old", 100, "100Mi", labels={HOST: "old", ZONE: "zone-jupiter"}))]
        if other_zone
        else []
    )
    fast = _packed(entries, cluster)
    with pytest.MonkeyPatch.context() as mp:
        original = engine.Shape.__init__

        def scan_everything(self, fitter):
            original(self, fitter)
            self.dynamic = True

        mp.setattr(engine.Shape, "__init__", scan_everything)
        slow = _packed(entries, cluster)
    assert fast == slow

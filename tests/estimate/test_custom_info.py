"""The estimator's fit memo must see what Fit reads: a MetaX sGPU card's QoS tag lives in ``custom_info``.

Two new nodes can carry identical usage numbers while their cards hold different QoS policies (the
first pod placed retags the card); a pod of the first policy fits one of them and not the other.
"""

from __future__ import annotations

from hami_sim.engine.estimate import GroupTemplate, PendingPods, estimate
from tests.vendors.helpers import json_register, limits, node, pod, simulator

QOS = "metax-tech.com/sgpu-qos-policy"


def _one_card_template() -> dict:
    return node(
        "tmpl-sgpu",
        annotations={
            "metax-tech.com/node-gpu-devices": json_register(
                [
                    {
                        "uuid": "Q-0",
                        "totalDevCount": 16,
                        "totalCompute": 100,
                        "totalVRam": 65536,
                        "healthy": True,
                        "qosPolicy": "best-effort",
                    }
                ]
            )
        },
    )


def _sgpu(owner: str, qos: str) -> dict:
    half = limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 50, "metax-tech.com/vmemory": 4})
    p = pod(half, annotations={QOS: qos}, name=owner)
    p["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": owner, "uid": owner, "controller": True}
    ]
    return p


def test_nodes_with_equal_usage_but_other_card_qos_get_their_own_verdict():
    pods = [
        PendingPods(_sgpu("fixed-a", "fixed-share"), 1),  # node 0: card retagged fixed-share, 50 cores
        PendingPods(_sgpu("burst", "burst-share"), 1),  # cannot share node 0 -> node 1, tagged burst-share
        PendingPods(_sgpu("fixed-b", "fixed-share"), 2),  # fills node 0; node 1's policy refuses it
    ]
    [option] = estimate(simulator(), pods, [GroupTemplate("sgpu", _one_card_template())]).options
    assert not option.unschedulable
    by_node = [sorted(n.pods) for n in option.nodes]
    assert by_node == [
        ["default/fixed-a#0", "default/fixed-b#0"],
        ["default/burst#0"],
        ["default/fixed-b#1"],
    ]
    # every card ends with the policy of the pods it holds
    policies = [n.devices[0].custom_info["QosPolicy"] for n in option.nodes]
    assert policies == ["fixed-share", "burst-share", "fixed-share"]

"""``POST /api/v1/estimate`` with ``"expander": "grpc,least-waste"``: what CA with hami-sim's gRPC
expander chooses. The estimate's ``grpc`` step must answer exactly as the gRPC service answers CA, so
each case is checked against the real service: the estimate's options are sent as CA 1.36 sends them
(each option's placed pods, its node count, every template) over TLS, and CA's next expander
(least-waste) narrows what the service kept."""

from __future__ import annotations

import orjson
import pytest

from simulations.grpcexpander.convert import node_dict, pod_dict
from tests.estimate.answers import scheduled
from tests.expander.ca_clients import NEWEST, best_options, encode
from tests.expander.test_grpc_expander import node_msg, pod_msg, warm_a10
from tests.factories import gpu, node

pytestmark = [pytest.mark.api, pytest.mark.django_db(transaction=True)]

H100_TEMPLATE = node_msg(
    node(
        "template-node-for-gpu-h100-1",
        [gpu(f"GPU-H{i}", index=i, devmem=81559, type="NVIDIA H100 80GB HBM3") for i in range(8)],
    )
)
TEMPLATES = {"gpu-a10": warm_a10(), "gpu-h100": H100_TEMPLATE}


def estimate(client, pods: int, gpumem: int, max_new: int, expander: str) -> tuple[int, dict]:
    body = {
        "pods": [{"pod": pod_dict(pod_msg("w", gpumem)), "count": pods}],
        "nodeGroups": [
            {"name": name, "template": node_dict(tmpl), "maxNewNodes": max_new}
            for name, tmpl in TEMPLATES.items()
        ],
        "expander": expander,
    }
    response = client.post("/api/v1/estimate", orjson.dumps(body), content_type="application/json")
    return response.status_code, orjson.loads(response.content)


def ca_with_hami_expander(client, channel, answer: dict, gpumem: int, max_new: int, pods: int) -> str | None:
    """CA's choice with ``--expander=grpc,least-waste``: the gRPC service keeps some of CA's options
    (those that schedule a pod); one kept is chosen, several go to least-waste."""
    offered = [o for o in answer["options"] if scheduled(answer, o)]
    options = [
        (
            o["nodeGroup"],
            o["nodeCount"],
            [pod_msg(f"w-{i}", gpumem) for i in range(len(scheduled(answer, o)))],
        )
        for o in offered
    ]
    kept = best_options(channel, encode(NEWEST, options, TEMPLATES))
    if len(kept) <= 1:
        return kept[0] if kept else None
    _, narrowed = estimate(client, pods, gpumem, max_new, "least-waste")
    least_waste = [o for o in narrowed["options"] if o["nodeGroup"] in kept]
    return min(least_waste, key=lambda o: o["waste"]["cpu"] + o["waste"]["memory"])["nodeGroup"]


CASES = [
    # (what the user sees, pods, gpumem MiB, maxNewNodes per group, chosen)
    ("one new A10 node holds 4 of 6 pods, one H100 node all 6: grpc keeps H100", 6, 12000, 1, "gpu-h100"),
    ("a 40000 MiB pod fits no A10 card: only H100 is an option", 2, 40000, 2, "gpu-h100"),
    ("both place every pod: grpc keeps both and least-waste decides", 4, 12000, 2, None),
]


@pytest.mark.parametrize(("why", "pods", "gpumem", "max_new", "chosen"), CASES, ids=[c[0] for c in CASES])
def test_grpc_least_waste_answers_as_ca_with_hami_sims_expander(
    client, channel, why, pods, gpumem, max_new, chosen
):
    status, answer = estimate(client, pods, gpumem, max_new, "grpc,least-waste")
    assert status == 200, answer
    expected = ca_with_hami_expander(client, channel, answer, gpumem, max_new, pods)
    assert answer["chosen"] == expected, why
    if chosen is not None:
        assert expected == chosen, why
    else:  # a tie in the grpc step: least-waste alone decides the same
        assert answer["chosen"] == estimate(client, pods, gpumem, max_new, "least-waste")[1]["chosen"]
    assert "grpc kept" in answer["explanation"] or "only node group" in answer["explanation"]


@pytest.mark.parametrize(
    ("expander", "message"),
    [
        ("price", "price ranks node groups by the cloud provider's node prices"),
        ("grpc,price", "price ranks node groups by the cloud provider's node prices"),
        ("grpc,grpc", "expander grpc was specified multiple times"),
        ("grpcx", "unknown expander 'grpcx'"),
    ],
)
def test_expanders_it_cannot_run_are_a_clear_400(client, expander, message):
    """CA's price expander asks the cloud provider for node prices (``cloudProvider.Pricing()`` and
    ``NodePrice`` in ``cluster-autoscaler/expander/price/price.go``, tag cluster-autoscaler-1.36.1),
    which no hami-sim node group carries; a repeated name is refused as CA's expander factory does."""
    status, answer = estimate(client, 2, 12000, 1, expander)
    assert status == 400 and message in orjson.dumps(answer).decode(), answer

"""The extender's usual body is split without decoding the nodes it has answered for before
(``engine.sightings``): whatever was sighted, every body is checked and answered as on first sight."""

from __future__ import annotations

import orjson
import pytest

from hami_sim.runtime.simulator import get_simulator
from simulations.api.views import run_filter
from tests.engine.test_cache import gpu_node, gpu_pod

pytestmark = pytest.mark.api

A, B = gpu_node("template-node-for-gpu-a-1", gpus=1), gpu_node("template-node-for-gpu-a-2", gpus=4)


def body(nodes: list[dict], **top: object) -> bytes:
    return orjson.dumps({"Pod": gpu_pod(mem=20000, gpus=2), "Nodes": {"items": nodes}, **top})


@pytest.mark.parametrize(
    ("second", "error", "fitting"),
    [
        (body([A, B]), "", ["template-node-for-gpu-a-2"]),  # every node sighted: the same answer
        (body([B, A]), "", ["template-node-for-gpu-a-2"]),
        (body([A, A]), "duplicate node name 'template-node-for-gpu-a-1'", None),  # still checked
        (body([A, B], NodeNames=["x"]), "needs full Node objects", None),
        (
            orjson.dumps({"pod": gpu_pod(mem=20000, gpus=2), "nodes": {"Items": [A, B]}}),
            "",
            ["template-node-for-gpu-a-2"],
        ),
        (body([A, {**B, "metadata": {**B["metadata"], "annotations": {"x": 1}}}]), "must be a string", None),
    ],
)
def test_a_body_of_sighted_nodes_is_checked_and_answered_as_on_first_sight(db, second, error, fitting):
    get_simulator().clear_caches()
    run_filter(body([A, B]))  # both nodes sighted
    assert get_simulator().sightings.lru.stats()["entries"] == 2
    answer = orjson.loads(run_filter(second)[0])
    assert error in answer["Error"] and bool(error) == bool(answer["Error"])
    names = [n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items") or []]
    assert (names or None) == fitting
    if fitting:
        assert answer["FailedNodes"] == {"template-node-for-gpu-a-1": "NodeInsufficientDevice"}

"""``POST /api/v1/estimate`` packs pods by the device rules of the HAMi release ``HAMI_VERSION`` names.

The pods: an init container asking a whole A10 (23028 MiB) before a main container of 10000 MiB.
Under HAMi v2.10.0 the init container runs alone first (#1773): each new two-A10 node holds two such
pods (one per card). Under v2.9.0 the init container keeps its card while the main container takes
the other: one pod per node, so four pods need four nodes, not two. v2.8.3 never reads init
containers: two main containers share each card, and one node holds all four.
"""

from __future__ import annotations

import orjson
import pytest

from tests.factories import container

from .answers import scheduled
from .helpers import gpu_node

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def _body() -> dict:
    pod = {
        "metadata": {"name": "big-init", "namespace": "ml",
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "uid": "rs", "controller": True}]},
        "spec": {"containers": [container(gpumem=10000)], "initContainers": [container("init")]},
    }  # fmt: skip
    return {"pods": [{"pod": pod, "count": 4}], "nodeGroups": [{"name": "a10", "template": gpu_node("t", 2)}]}


@pytest.mark.parametrize(("version", "nodes"), [("2.10", 2), ("v2.10.0", 2), ("2.9", 4), ("2.8", 1)])
def test_an_init_container_larger_than_the_main_one_on_a_full_card(client, settings, version, nodes):
    settings.HAMI_VERSION = version
    response = client.post("/api/v1/estimate", orjson.dumps(_body()), content_type="application/json")
    assert response.status_code == 200, response.content
    answer = orjson.loads(response.content)
    [option] = answer["options"]
    assert (option["nodeCount"], len(scheduled(answer, option))) == (nodes, 4)

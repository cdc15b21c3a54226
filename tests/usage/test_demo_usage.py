"""The demo cluster (``demo/cluster-snapshot.json``, loaded as ``make demo`` loads it) carries HAMi
allocations: the issue's own example, a 4 x 23000 MiB pod, must not fit ``ip-10-0-1-11`` once its
cards are used, while a fresh node of its group (CA's template) still fits it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.factories import extender_args, pod
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.django_db]

DEMO = Path(__file__).resolve().parents[2] / "demo"
FULL, PARTLY = "ip-10-0-1-11.ec2.internal", "ip-10-0-1-12.ec2.internal"
TEMPLATE = "template-node-for-gpu-a10-0"


@pytest.fixture
def demo_nodes() -> dict[str, dict]:
    """Load the demo's profiles and snapshot (Nodes and Pods) the way the demo does; the nodes CA
    would send: the two live gpu-a10 nodes and a template of their group."""
    from profiles.models import NodeGroup
    from profiles.nodetemplates import group_template
    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles
    from usage.store import get_store

    import_profiles((DEMO / "profiles.yaml").read_text())
    counts = sync_cluster_inventory.apply(kwargs={"source": f"file://{DEMO / 'cluster-snapshot.json'}"}).get()
    assert counts["pods"] == 14  # the Succeeded batch pod is not counted, as HAMi does not count it
    get_store().refresh(force=True)
    snapshot = orjson.loads((DEMO / "cluster-snapshot.json").read_bytes())
    nodes = {i["metadata"]["name"]: i for i in snapshot["items"] if i["kind"] == "Node"}
    template = group_template(NodeGroup.objects.get(name="gpu-a10"))
    template["metadata"]["name"] = TEMPLATE
    return {FULL: nodes[FULL], PARTLY: nodes[PARTLY], TEMPLATE: template}


@pytest.mark.parametrize(
    ("gpus", "gpumem", "node", "reason"),
    [
        (4, 23000, FULL, "4/4 CardInsufficientMemory"),  # the example
        (
            4,
            23000,
            PARTLY,
            "1/4 AllocatedCardsInsufficientRequest, 1/4 CardNotHealth, 2/4 CardInsufficientMemory",
        ),
        (4, 23000, TEMPLATE, ""),  # a fresh node of the group fits it
        (1, 8000, FULL, "4/4 CardInsufficientMemory"),
        (1, 8000, PARTLY, ""),  # partly used: cards 0, 1 and 3 have room
        (3, 10000, PARTLY, ""),  # cards 0, 1 and 3 each have 10000 MiB free
    ],
)
def test_demo_nodes_answer_with_their_live_usage(client, demo_nodes, gpus, gpumem, node, reason):
    request = pod("train", gpu_count=gpus, gpumem=gpumem)
    response = client.post(
        "/filter-simulation", extender_args(request, [demo_nodes[node]]), content_type="application/json"
    )
    answer = orjson.loads(response.content)
    assert response.status_code == 200
    assert answer["FailedNodes"].get(node, "") == reason
    fitting = [n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items") or []]
    assert fitting == ([] if reason else [node])


def test_demo_node_page_shows_the_used_cards(client, demo_nodes):
    client.force_login(UserFactory(username="oncall", password="pw", is_staff=True))
    html = client.get(f"/nodes/{FULL}/").content.decode()
    row = html.split('id="device-2"')[1].split("</tr>")[0]
    assert "22000 / 1028 " in row and "embedding-server" in row and "reranker" in row

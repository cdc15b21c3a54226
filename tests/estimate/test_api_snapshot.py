"""``POST /api/v1/estimate`` with CA's snapshot nodes (``snapshotNodes``): the existing nodes CA holds
in its cluster snapshot, which CA 1.33.1+'s hostname-spread retry may place pending pods on
(``binpacking_estimator.go``: the retry filters every snapshot node but the last new one)."""

from __future__ import annotations

import orjson
import pytest

from .answers import ids, scheduled
from .helpers import ca_node, ca_pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]

HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"


def _zoned(name: str, millicores: int, zone: str) -> dict:
    return ca_node(
        name, millicores, "5000Mi" if name == "template" else "100Mi", labels={HOSTNAME: name, ZONE: zone}
    )


def _body(snapshot: list | None) -> dict:
    """CA 1.36.1's row "hostname maxSkew=2" with 20m pods (small enough for oldnode): 8 pods."""
    pod = ca_pod("e", 20, 100)
    pod["metadata"]["labels"] = {"app": "estimatee"}
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 2,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "estimatee"}},
        }
    ]
    body: dict = {
        "pods": [{"pod": pod, "count": 8}],
        "nodeGroups": [{"name": "g", "template": _zoned("template", 1000, "zone-mars")}],
        "maxNodesPerScaleUp": 0,
    }
    if snapshot is not None:
        body["snapshotNodes"] = snapshot
    return body


def _post(client, body: dict) -> tuple[int, dict]:
    response = client.post("/api/v1/estimate", orjson.dumps(body), content_type="application/json")
    return response.status_code, orjson.loads(response.content)


OLDNODE = {"node": _zoned("oldnode", 100, "zone-jupiter"), "pods": []}


@pytest.mark.parametrize(
    ("ca_version", "snapshot", "nodes", "on_oldnode"),
    [
        # CA 1.36.1: the retry puts 3 pods on oldnode, which CA counts as a node: 2 new + oldnode
        ("1.36.1", [OLDNODE], 2, 3),
        ("1.34.5", [OLDNODE], 2, 3),
        # without the snapshot node there is one hostname domain: all 8 on one new node
        ("1.36.1", None, 1, 0),
        # CA 1.32 has no retry: oldnode is counted by the spread, never a target
        ("1.32.1", [OLDNODE], 4, 0),
    ],
)
def test_the_hostname_retry_places_on_the_snapshots_existing_nodes(
    client, settings, ca_version, snapshot, nodes, on_oldnode
):
    settings.CA_VERSION = ca_version
    status, out = _post(client, _body(snapshot))
    assert status == 200, out
    [option] = out["options"]
    assert (option["nodeCount"], len(scheduled(out, option))) == (nodes, 8)
    placed = option.get("onExistingNodes", {})
    assert len(ids(out, placed.get("oldnode", []))) == on_oldnode
    assert set(placed) <= {"oldnode"}


def test_a_full_snapshot_node_takes_nothing(client, settings):
    """oldnode as CA holds it with its own pods: no cpu left, so the retry cannot use it."""
    settings.CA_VERSION = "1.36.1"
    full = {"node": OLDNODE["node"], "pods": [ca_pod("resident", 100, 100)]}
    status, out = _post(client, _body([full]))
    assert status == 200, out
    [option] = out["options"]
    assert option["nodeCount"] == 4 and "onExistingNodes" not in option


@pytest.mark.parametrize(
    ("snapshot", "says"),
    [
        ({"node": {}}, "snapshotNodes must be a list"),
        (["x"], "snapshotNodes[0] must be"),
        ([{"node": {"metadata": {}}}], "snapshotNodes[0].node must be a Node object with metadata.name"),
        ([{"node": OLDNODE["node"], "pods": "p"}], "snapshotNodes[0].pods must be a list of Pod objects"),
        ([OLDNODE, OLDNODE], "snapshotNodes names node 'oldnode' twice"),
    ],
)
def test_bad_snapshot_nodes_are_a_clear_400(client, snapshot, says):
    status, out = _post(client, _body(snapshot))
    assert status == 400
    assert says in orjson.dumps(out).decode()


def test_the_schema_documents_snapshot_nodes(client):
    schema = client.get("/api/schema/?format=json").content.decode()
    assert "snapshotNodes" in schema and "onExistingNodes" in schema

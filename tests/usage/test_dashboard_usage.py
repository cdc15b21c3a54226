"""The dashboard shows live usage: per card used/free memory, cores and slots and the pods holding
them (linked to their decisions), allocated-vs-registered totals, capacity charts that are not all
free, the usage age, and the findings of pods whose allocation is malformed or on an unknown device."""

from __future__ import annotations

from html import unescape

import orjson
import pytest

from tests.factories import hami_pod
from tests.factories.models import NodeGroupFactory, UserFactory

from .conftest import gpu_node

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def staff(db):
    return UserFactory(username="oncall", password="pw-oncall", is_staff=True)


@pytest.fixture
def synced(tmp_path):
    from usage.cluster import sync_cluster

    NodeGroupFactory(name="gpu-a10", match_labels={"kubernetes.io/hostname": "n1"})
    nodes = [gpu_node("n1", cards=2), gpu_node("n2", cards=2)]
    pods = [
        hami_pod("train-0", "n1", [("GPU-n1-0", 20000, 60)]),
        hami_pod("infer-1", "n1", [("GPU-n1-0", 3000, 10)]),
        hami_pod("ghost", "n1", [("GPU-elsewhere", 1000, 10)]),
        hami_pod("bad", "n1", "GPU-n1-1,NVIDIA,lots,0:;"),
    ]
    snapshot = tmp_path / "cluster.json"
    snapshot.write_bytes(orjson.dumps({"kind": "List", "apiVersion": "v1", "items": nodes + pods}))
    sync_cluster(f"file://{snapshot}")


def test_node_page_shows_each_card_with_its_pods_and_the_usage_age(client, staff, synced):
    client.force_login(staff)
    html = client.get("/nodes/n1/").content.decode()
    card0 = html.split('id="device-0"')[1].split("</tr>")[0]
    assert "23000 / 28 " in card0 and "70 / 30 " in card0 and "2 / 8 " in card0  # used / free
    assert 'href="/pods/ml/train-0/"' in card0 and 'href="/pods/ml/infer-1/"' in card0
    card1 = html.split('id="device-1"')[1].split("</tr>")[0]
    assert "0 / 23028 " in card1 and "—" in card1
    assert "live usage from HAMi" in html and "confirmed" in html
    assert "pod holds a device its node does not register" in html and "GPU-elsewhere" in html
    assert 'invalid memory field: strconv.ParseInt: parsing "lots": invalid syntax' in unescape(html)
    plot = html.split('id="fig-capacity"')[1]
    assert "23000" in plot  # the chart's used bar, not everything free
    html = client.get("/nodes/n2/").content.decode()
    assert "0 / 23028 " in html.split('id="device-0"')[1].split("</tr>")[0]


def test_overview_and_node_group_show_allocated_vs_registered(client, staff, synced):
    client.force_login(staff)
    html = client.get("/").content.decode()
    totals = html.split('id="usage-totals"')[1].split("</div>\n</div>")[0]
    assert "23000 / 92112" in totals and "70 / 400" in totals and "2 / 40" in totals
    assert "2</b><span>pods holding devices on 2 of 2 live nodes" in totals
    html = client.get("/node-groups/gpu-a10/").content.decode()
    totals = html.split('id="usage-totals"')[1].split("</div>\n</div>")[0]
    assert "23000 / 46056" in totals and "on 1 of 1 live nodes" in totals


REGISTER = "hami.io/node-nvidia-register"


@pytest.fixture
def drifting(synced):
    """Beside ``synced``: a node of another group whose registration does not parse (a drift finding)."""
    from profiles.sync import sync_nodes
    from tests.factories import node

    NodeGroupFactory(name="gpu-l4", match_labels={"kubernetes.io/hostname": "n3"})
    sync_nodes([gpu_node("n1", cards=2), gpu_node("n2", cards=2), node("n3", annotations={REGISTER: "{"})])


@pytest.mark.parametrize(
    ("kind", "node", "pod", "detail"),
    [
        ("pod holds a device its node does not register", "n1", "ml/ghost", "GPU-elsewhere"),
        ("malformed allocation annotation", "n1", "ml/bad", 'parsing "lots": invalid syntax'),
    ],
)
def test_drift_page_lists_usage_findings_beside_drift_findings(
    client, staff, drifting, kind, node, pod, detail
):
    client.force_login(staff)
    html = unescape(client.get("/drift/").content.decode())
    drift_table, usage_table = html.split('id="usage-findings"')
    assert 'href="/nodes/n3/"' in drift_table  # the registration drift finding, listed first
    row = next(r for r in usage_table.split("<tr>") if kind in r)
    assert f'href="/nodes/{node}/"' in row and f'href="/pods/{pod}/"' in row and detail in row

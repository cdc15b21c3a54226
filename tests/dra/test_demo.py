"""The demo's HAMi-on-DRA story: a DRA node (two A10Gs on HAMi's DRA driver), a clusterapi group
gpu-a10-dra (4 x A10G), and two pods with claims: ml/notebook-dra fits the live node's slice;
ml/finetune-dra (4 GPUs) needs a new node of gpu-a10-dra, which CA never adds: the template slices its
clusterapi provider builds carry no memory. The pod pages and the DRA page say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dra.test_pages import verdict_rows
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.django_db]

DEMO = Path(__file__).resolve().parents[2] / "demo"


@pytest.fixture
def demo(settings, client):
    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles

    settings.DRA_SYNC = True  # as make demo sets it
    import_profiles((DEMO / "profiles.yaml").read_text())
    import_profiles((DEMO / "dra-profiles.yaml").read_text())
    sync_cluster_inventory.apply(kwargs={"source": f"file://{DEMO / 'cluster-snapshot.json'}"}).get()
    client.force_login(UserFactory(username="oncall", password="pw", is_staff=True))
    return client


def _verdicts(client, pod: str) -> dict[tuple[str, str], str]:
    rows = verdict_rows(client.get(f"/pods/ml/{pod}/").content.decode())
    return {(where, kind): verdict for where, kind, verdict in rows}


def test_the_notebook_fits_the_live_nodes_slice(demo):
    verdicts = _verdicts(demo, "notebook-dra")
    assert verdicts[("gpu-dra-1", "live node")].startswith("fits: gpu-0 (memory 8000Mi, cores 30)")


def test_the_finetune_can_never_scale_gpu_a10_dra_from_zero(demo):
    verdicts = _verdicts(demo, "finetune-dra")
    assert verdicts[("gpu-dra-1", "live node")].startswith("does not fit")
    assert verdicts[("gpu-a10-dra", "HAMi template")].startswith("fits: gpu-0")
    capi = verdicts[("gpu-a10-dra", "clusterapi template")]
    assert capi.startswith("does not fit") and "publishes no capacity 'memory'" in capi
    html = demo.get("/dra/").content.decode()
    blind = html[html.index('id="dra-blind-spot"') : html.index('id="dra-pending"')]
    assert '<a href="/pods/ml/finetune-dra/">ml/finetune-dra</a>' in blind and "gpu-a10-dra" in blind
    assert "notebook-dra" not in blind


def test_node_predicates_and_a_device_shortfall_are_named(demo):
    verdicts = _verdicts(demo, "finetune-dra")
    # two A10Gs could each serve the claim's request, but it asks four
    assert verdicts[("gpu-dra-1", "live node")].startswith(
        "does not fit: request gpu asks 4 device(s); 2 of the node's can serve it"
    )
    # gpu-h100's nodes are tainted nvidia.com/gpu:NoSchedule and the pod does not tolerate it
    assert verdicts[("gpu-h100", "HAMi template")].startswith("does not fit: node(s) had untolerated taint")


def test_a_dra_pod_is_not_judged_by_the_device_plugin_views(demo):
    html = demo.get("/pods/ml/finetune-dra/").content.decode()
    views = html[html.index('id="views"') : html.index('id="dra"')]
    assert "asks its devices through ResourceClaims" in views and "fits gpu-dra-1" not in views
    assert "request gpu: 4 device(s) of class hami-core-gpu.project-hami.io, memory 10000Mi" in html

"""The demo cluster with the issue's own example: 40 pods of (nvidia.com/gpu 1, gpumem 80000) on
gpu-h100 (8 x H100, split 10). CA scaled one node for them, HAMi placed 8, and the other 32 "fit" that
node by count (72 free slots): the overview lists 32 invisible pods for gpu-h100 with the estimator's
answer, the metric says 32 and the alert fires on the real scrape."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from tests.deploy.promql import as_dicts, evaluate
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo"
H100 = "ip-10-0-2-21.ec2.internal"
ALERT = next(
    r["expr"]
    for g in yaml.safe_load((ROOT / "deploy/monitoring/prometheusrule.yaml").read_text())["spec"]["groups"]
    for r in g["rules"]
    if r.get("alert") == "HamiSimCAInvisiblePods"
)


@pytest.fixture
def demo(settings):
    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles
    from usage import blindspot
    from usage.store import get_store

    import_profiles((DEMO / "profiles.yaml").read_text())
    sync_cluster_inventory.apply(kwargs={"source": f"file://{DEMO / 'cluster-snapshot.json'}"}).get()
    get_store().refresh(force=True)
    blindspot.forget()
    yield
    blindspot.forget()


def test_the_demo_shows_32_invisible_pods_for_gpu_h100(demo):
    from usage.blindspot import banner, compute

    result = compute()
    assert not result.stale
    assert sorted(result.groups) == ["gpu-h100"]
    answer = result.groups["gpu-h100"]
    assert len(answer.pods) == 32 and len(result.invisible) == 32
    first = answer.pods[0]
    assert first.ca_node == H100 and first.ca_free == {"nvidia.com/gpu": 72}
    # the roomiest card the pod could use: an H100's 1559 MiB (not an A10's, which its selector excludes)
    assert banner(first) == (
        f"CA counts 72 free nvidia.com/gpu slots on {H100}; no card holds 80000 MiB "
        "(the roomiest has 1559 MiB free)"
    )
    assert "CardInsufficientMemory" in first.hami_reason  # HAMi's own FailedScheduling text (pod -08)
    # the estimator: gpu-h100 (max size 4, one node live) adds 3 nodes, 8 pods each
    assert answer.estimate_group == "gpu-h100" and answer.estimate_nodes == 3
    # the 8 left are stopped by the group's max size, and the message says so (they fit gpu-h100)
    assert answer.estimate_left == 8
    assert answer.estimate_reason == (
        "8 pod(s) left pending: node limit reached: at most 3 new node(s) for node group gpu-h100 "
        "(node group gpu-h100's max size 4 with 1 node(s) now)"
    )
    assert answer.oldest_seconds > 0


def test_with_aggregate_capacity_ca_sees_the_node_full(demo):
    from usage.blindspot import compute

    result = compute(aggregate=True)
    assert result.aggregate and result.invisible == []
    assert all(p.ca_node is None for p in result.pods if p.name.startswith("llm-train"))


@pytest.mark.parametrize(("enabled", "invisible"), [(False, 32), (True, 0)])
def test_the_service_follows_the_ca_aggregate_capacity_setting(demo, settings, client, enabled, invisible):
    """The report the metric, the overview and the pod page share reads ``CA_AGGREGATE_CAPACITY``."""
    from usage import blindspot
    from usage.metrics import refresh_blind_spot

    settings.CA_AGGREGATE_CAPACITY = enabled
    blindspot.forget()
    result = blindspot.report()
    assert result.aggregate is enabled and len(result.invisible) == invisible
    refresh_blind_spot()  # the worker's task: the scrape reads what it stored
    text = client.get("/metrics").content.decode()
    assert (f'hami_sim_ca_invisible_pods{{node_group="gpu-h100"}} {invisible}.0' in text) is bool(invisible)


def test_the_metric_says_32_and_the_alert_fires(demo, client):
    from usage.metrics import refresh_blind_spot

    refresh_blind_spot()  # the worker's task: the scrape reads what it stored
    text = client.get("/metrics").content.decode()
    assert 'hami_sim_ca_invisible_pods{node_group="gpu-h100"} 32.0' in text
    now = time.time()
    fired = as_dicts(evaluate(ALERT, [(now - 60, text), (now, client.get("/metrics").content.decode())]))
    assert fired == {(("node_group", "gpu-h100"),): 32.0}


def test_the_demo_node_cannot_be_drained_as_ca_thinks(demo):
    from usage.blindspot import compute

    drains = {d.node: d for d in compute().drains}
    h100 = drains[H100]
    assert h100.pods == 8 and not h100.hami_movable and not h100.ca_movable  # no other H100 node


@pytest.fixture
def staff_client(client, db):
    user = UserFactory(username="oncall", password="pw", is_staff=True)
    client.force_login(user)
    return client


def test_the_overview_lists_them_with_the_estimators_answer(demo, staff_client):
    html = staff_client.get("/").content.decode()
    assert 'id="invisible-pods"' in html
    row = html[html.index('<tr data-group="gpu-h100">') :]
    row = row[: row.index("</tr>")]
    assert '<td class="invisible-count">32</td>' in row
    assert "3 new node(s) of gpu-h100" in row
    assert f"CA counts 72 free nvidia.com/gpu slots on {H100}; no card holds 80000 MiB" in html


def test_the_pod_page_carries_the_banner(demo, staff_client):
    html = staff_client.get("/pods/ml/llm-train-7d9f8c6b5-08/").content.decode()
    assert 'id="invisible-banner"' in html
    assert f"CA counts 72 free nvidia.com/gpu slots on {H100}; no card holds 80000 MiB" in html
    assert "add 3 node(s) of gpu-h100" in html
    assert "CardInsufficientMemory" in html  # HAMi's FailedScheduling message


def test_the_node_page_shows_both_scale_down_views(demo, staff_client):
    html = staff_client.get(f"/nodes/{H100}/").content.decode()
    assert 'id="scale-down"' in html and "its pods fit no other card" in html

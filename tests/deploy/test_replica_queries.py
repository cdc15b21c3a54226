"""The alerts and panels over production's scrape: three web replicas and the expander.

Every web replica exports the same values read from the database, so a query that sums across
replicas multiplies them (128 invisible pods for the demo's 32, one failed task firing an alert that
waits for more than three). The expander's metrics port exports its own counts and bytes only. Each
target's samples carry the labels Prometheus adds (``pod``, ``instance``), as in a real scrape.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from hami_sim.project.metrics import process_registry
from tests.deploy.promql import as_dicts, evaluate
from tests.deploy.test_monitoring_queries import ALERTS, PANELS

pytestmark = [pytest.mark.api, pytest.mark.django_db]

DEMO = Path(__file__).resolve().parents[2] / "demo"
WEB_REPLICAS = ("hami-sim-web-a", "hami-sim-web-b", "hami-sim-web-c")
INVISIBLE_PANEL = next(
    expr
    for title, expr in PANELS.items()
    if title.startswith("Pods upstream CA cannot see") and "[A]" in title
)
FAILURES_PANEL = next(expr for title, expr in PANELS.items() if title.startswith("Task failures"))
#: what only the database knows: the web listener's, never the expander's
DATABASE_SERIES = (
    "hami_sim_ca_invisible_pods",
    "hami_sim_node_scale_down_misjudged",
    "hami_sim_drift_findings",
    "hami_sim_node_usage_age_seconds",
    "hami_sim_task_runs",
    "hami_sim_sessions",
)


@pytest.fixture
def demo():
    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles
    from usage.metrics import refresh_blind_spot
    from usage.store import get_store

    import_profiles((DEMO / "profiles.yaml").read_text())
    sync_cluster_inventory.apply(kwargs={"source": f"file://{DEMO / 'cluster-snapshot.json'}"}).get()
    get_store().refresh(force=True)
    refresh_blind_spot()


def scrape(client, at: float) -> list[tuple[float, str, dict]]:
    """One scrape of every target at ``at``: the web replicas (each its own /metrics; the test
    client stands for each, as they share the database) and the expander's metrics port."""
    web = client.get("/metrics").content.decode()
    expander = generate_latest(process_registry()).decode()
    targets = [(at, web, {"pod": pod, "instance": f"10.0.0.{i}:8080"}) for i, pod in enumerate(WEB_REPLICAS)]
    return [*targets, (at, expander, {"pod": "hami-sim-expander-0", "instance": "10.0.1.9:9100"})]


def test_the_invisible_pods_alert_and_panel_say_32_for_32(demo, client):
    now = time.time()
    scrapes = scrape(client, now - 60) + scrape(client, now)
    expected = {(("node_group", "gpu-h100"),): 32.0}
    assert as_dicts(evaluate(ALERTS["HamiSimCAInvisiblePods"], scrapes)) == expected
    assert as_dicts(evaluate(INVISIBLE_PANEL, scrapes)) == expected
    # the sum the rules used: every web replica counted (the expander no longer exports the series)
    summed = evaluate("sum by (node_group) (hami_sim_ca_invisible_pods)", scrapes)
    assert as_dicts(summed) == {(("node_group", "gpu-h100"),): 96.0}


def test_one_failed_task_does_not_fire_the_task_failures_alert(client):
    from tests.factories.models import TaskRunFactory

    now = time.time()
    TaskRunFactory(task="sync_cluster_inventory", outcome="failure")  # yesterday's: the series exists
    before = scrape(client, now - 120)
    TaskRunFactory(task="sync_cluster_inventory", outcome="failure")
    scrapes = before + scrape(client, now)
    assert as_dicts(evaluate(ALERTS["HamiSimTaskFailures"], scrapes)) == {}
    assert as_dicts(evaluate(FAILURES_PANEL, scrapes)) == {(("task", "sync_cluster_inventory"),): 1.0}
    for _ in range(4):  # four failures in the hour: it fires, with the number of failures
        TaskRunFactory(task="sync_cluster_inventory", outcome="failure")
    scrapes = before + scrape(client, now)
    fired = as_dicts(evaluate(ALERTS["HamiSimTaskFailures"], scrapes))
    assert fired == {(("task", "sync_cluster_inventory"),): 5.0}


def test_the_expander_exports_counts_and_bytes_only(demo, client):
    """What its metrics port serves (``run_expander --metrics-bind``): no series read from the
    database, while the web listener has them all; cache counters are counters."""
    expander = generate_latest(process_registry()).decode()
    web = client.get("/metrics").content.decode()
    for name in DATABASE_SERIES:
        assert f"# TYPE {name} " in web, name
        assert f"# TYPE {name} " not in expander, name
    assert "# TYPE hami_sim_expander_refused_total counter" in expander
    assert "# TYPE hami_sim_expander_inflight_bytes gauge" in expander
    assert "# TYPE hami_sim_cache_hits_total counter" in expander

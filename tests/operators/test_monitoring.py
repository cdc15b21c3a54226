"""The shipped Grafana dashboard and PrometheusRule load, and every query names a metric we export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.django_db

MONITORING = Path(__file__).resolve().parents[2] / "deploy" / "monitoring"
METRIC = re.compile(r"\b((?:hami_sim|django)_[a-z0-9_]+)\b")
SUFFIXES = {
    "histogram": ("_bucket", "_count", "_sum"),
    "counter": ("", "_total"),
    "summary": ("_count", "_sum"),
}


def _exported(client) -> set[str]:
    """Every sample name /metrics can carry, from its TYPE lines (a labelled metric with no samples yet
    still has one)."""
    text = client.get("/metrics").content.decode()
    names: set[str] = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        names.update(name + suffix for suffix in SUFFIXES.get(kind, ("",)))
    return names


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    return [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]


def _rule_exprs() -> list[str]:
    rule = yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())
    assert rule["kind"] == "PrometheusRule"
    return [r["expr"] for group in rule["spec"]["groups"] for r in group["rules"]]


@pytest.mark.parametrize("source", [_dashboard_exprs, _rule_exprs])
def test_every_query_names_an_exported_metric(client, source):
    exported = _exported(client)
    exprs = source()
    assert exprs
    for expr in exprs:
        names = METRIC.findall(expr)
        assert names, expr
        assert set(names) <= exported, (expr, set(names) - exported)


@pytest.mark.parametrize(
    "topic",
    [
        "hami_sim_extender_latency_seconds_bucket",
        "hami_sim_extender_requests_total",
        "hami_sim_extender_node_verdicts_total",
        "hami_sim_drift_findings",
        "hami_sim_task_last_success_timestamp_seconds",
        "hami_sim_usage_confirmed_age_seconds",
        "hami_sim_task_runs",
    ],
)
def test_dashboard_covers_each_operator_question(topic):
    assert any(topic in expr for expr in _dashboard_exprs())

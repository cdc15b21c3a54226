"""The shipped alerts and Grafana queries, evaluated against what ``/metrics`` really exports.

Traffic goes through the real extender verbs (Django test client); ``/metrics`` is scraped around it
(see ``_scrapes``), and each expression is evaluated over the two scrapes by
``tests.deploy.promql``. So the label values are the ones hami-sim writes (``fit``/``no_fit`` for the
filter verbs, ``ok`` for prioritize, ``bad_request``/``pod_error``/``too_large``/``unknown_session``
for errors), not the ones a reader of the query assumes.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
import yaml

from tests.deploy.promql import PromQLError, as_dicts, evaluate
from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
A10 = [gpu("GPU-0", devmem=23028)]


def _rules(path: Path) -> dict[str, str]:
    rule = yaml.safe_load(path.read_text())
    return {r["alert"]: r["expr"] for group in rule["spec"]["groups"] for r in group["rules"]}


ALERTS = {**_rules(DEPLOY / "monitoring/prometheusrule.yaml"), **_rules(DEPLOY / "base/prometheusrule.yaml")}
PANELS = {
    f"{panel['title']} [{target['refId']}]": target["expr"]
    for panel in json.loads((DEPLOY / "monitoring/grafana-dashboard.json").read_text())["panels"]
    for target in panel.get("targets", [])
}
ERROR_PANEL = next(expr for title, expr in PANELS.items() if title.startswith("Extender error rate"))


def _filter(client, gpumem: int) -> None:
    body = extender_args(pod(gpumem=gpumem), [node("tmpl-a10", A10)])
    assert client.post("/filter-simulation", body, content_type="application/json").status_code == 200


def _prioritize(client) -> None:
    body = extender_args(pod(gpumem=1000), [node("tmpl-a10", A10)])
    assert client.post("/prioritize-simulation", body, content_type="application/json").status_code == 200


def _bad_filter(client) -> None:
    client.post("/filter-simulation", b'{"Pod": 42}', content_type="application/json")


def _unknown_session(client) -> None:
    body = extender_args(pod(gpumem=1000), [node("tmpl-a10", A10)])
    client.post("/sessions/no-such-session/filter-simulation", body, content_type="application/json")


TRAFFIC = {
    "fits": lambda c: _filter(c, 1000),
    "does_not_fit": lambda c: _filter(c, 40000),
    "prioritize": _prioritize,
    "bad_filter": _bad_filter,
    "unknown_session": _unknown_session,
}


def _scrapes(client, traffic: dict[str, int]) -> list[tuple[float, str]]:
    """Three scrapes of /metrics, 60 s apart on the evaluation clock, the traffic sent before the second
    and again before the third: a labelled counter appears at its first use, and Prometheus (like the
    evaluator) needs two samples of a series in the window for a rate."""
    now = time.time()
    scrapes = [(now - 120, client.get("/metrics").content.decode())]
    for at in (now - 60, now):
        for kind, times in traffic.items():
            for _ in range(times):
                TRAFFIC[kind](client)
        scrapes.append((at, client.get("/metrics").content.decode()))
    return scrapes


@pytest.mark.parametrize(
    ("traffic", "firing", "panel"),
    [
        # normal traffic: pods that fit and pods that do not, prioritize answers: nothing fails
        ({"fits": 6, "does_not_fit": 6, "prioritize": 6}, {}, {}),
        # one malformed filter request in ten: 10 % of the filter verb's answers are errors
        ({"fits": 5, "does_not_fit": 4, "bad_filter": 1, "prioritize": 3}, {"filter": 0.1}, {"filter": 0.1}),
        # an error rate under the 5 % threshold shows on the panel but does not fire
        ({"fits": 30, "bad_filter": 1}, {}, {"filter": 1 / 31}),
        # a session verb with an unknown session fails every time
        ({"unknown_session": 2, "fits": 2}, {"session-filter": 1.0}, {"session-filter": 1.0}),
    ],
)
def test_the_error_alert_and_panel_count_only_errors(client, traffic, firing, panel):
    scrapes = _scrapes(client, traffic)
    fired = {
        dict(k)["verb"]: v for k, v in as_dicts(evaluate(ALERTS["HamiSimExtenderErrors"], scrapes)).items()
    }
    shown = {dict(k)["verb"]: v for k, v in as_dicts(evaluate(ERROR_PANEL, scrapes)).items()}
    assert fired == pytest.approx(firing)
    assert {verb: v for verb, v in shown.items() if v > 0} == pytest.approx(panel)
    # a verb that answered without error shows no error share (0 or no series), never 1.0; a verb with
    # no traffic in the window (a series left by earlier calls) is 0/0 = NaN, as in Prometheus, which
    # Grafana draws as no point
    assert all(v == 0 or math.isnan(v) for verb, v in shown.items() if verb not in panel)


def test_the_old_query_would_have_fired_on_normal_traffic(client):
    """The query this replaced counted fit/no_fit as failures: guard the evaluator against passing it."""
    old = (
        'sum by (verb) (rate(hami_sim_extender_requests_total{outcome!="ok"}[5m]))'
        " / sum by (verb) (rate(hami_sim_extender_requests_total[5m])) > 0.05"
    )
    scrapes = _scrapes(client, {"fits": 3, "does_not_fit": 3, "prioritize": 3})
    assert {dict(k)["verb"] for k in as_dicts(evaluate(old, scrapes))} == {"filter"}
    assert as_dicts(evaluate(ALERTS["HamiSimExtenderErrors"], scrapes)) == {}


@pytest.mark.parametrize("name", sorted(ALERTS))
def test_every_alert_evaluates_on_real_metrics(client, name):
    """Each alert parses and evaluates on a real scrape (a query outside the evaluator's subset, or one
    whose vectors cannot be matched, fails here); none fires after normal traffic on a fresh install."""
    scrapes = _scrapes(client, {"fits": 2, "does_not_fit": 2, "prioritize": 2})
    result = evaluate(ALERTS[name], scrapes)
    assert isinstance(result, dict)
    quiet = {"HamiSimSyncStale"}  # nothing has synced in a test database: "never" is stale, rightly
    if name not in quiet:
        assert as_dicts(result) == {}, name


@pytest.mark.parametrize("title", sorted(PANELS))
def test_every_grafana_query_evaluates_on_real_metrics(client, title):
    scrapes = _scrapes(client, {"fits": 2, "does_not_fit": 1, "prioritize": 1})
    result = evaluate(PANELS[title], scrapes)
    assert isinstance(result, dict), title
    assert all(not math.isinf(v) for v in result.values()), (title, as_dicts(result))


def test_latency_panel_reads_the_histogram(client):
    """p99 of filter latency is a positive number of seconds within the histogram's range."""
    scrapes = _scrapes(client, {"fits": 5})
    p99 = next(
        expr for title, expr in PANELS.items() if title.startswith("Extender latency") and "0.99" in expr
    )
    values = {dict(k)["verb"]: v for k, v in as_dicts(evaluate(p99, scrapes)).items()}
    assert 0 < values["filter"] <= 5


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("topk(1, hami_sim_sessions)", "topk"),
        ("hami_sim_sessions offset 5m", "offset"),
        ("rate(hami_sim_sessions)", "rate"),
    ],
)
def test_the_evaluator_refuses_what_it_does_not_support(query, error):
    with pytest.raises(PromQLError):
        evaluate(query, [(0.0, "# TYPE hami_sim_sessions gauge\nhami_sim_sessions 1\n")])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Prometheus' own interpolation: rank 0.5*10=5 lies in (0.1, 0.5] holding counts 4..8
        ("histogram_quantile(0.5, sum by (le) (x_bucket))", {(): 0.1 + 0.4 * (1 / 4)}),
        ("histogram_quantile(0.99, sum by (le) (x_bucket))", {(): 0.5}),  # +Inf bucket: the last bound
        ('sum by (k) (y{k=~"a|b"})', {(("k", "a"),): 1.0, (("k", "b"),): 2.0}),
        ('sum(y{k!~"a|b"})', {(): 4.0}),
        ("time() - max(y) > 0", {(): 100 - 4.0}),
    ],
)
def test_the_evaluator_on_hand_written_samples(query, expected):
    text = (
        "# TYPE x histogram\n"
        'x_bucket{le="0.1"} 4\nx_bucket{le="0.5"} 8\nx_bucket{le="+Inf"} 10\nx_count 10\nx_sum 3\n'
        "# TYPE y gauge\n"
        'y{k="a"} 1\ny{k="b"} 2\ny{k="c"} 4\n'
    )
    assert as_dicts(evaluate(query, [(100.0, text)])) == pytest.approx(expected)

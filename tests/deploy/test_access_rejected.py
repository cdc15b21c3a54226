"""Extender requests that get an ``Error`` (or ``[]``) still say why and for which pod in their access line."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]

NODES = [node("n1", [gpu("GPU-1")])]


def _post(client, path: str, body: bytes):
    return client.generic("POST", path, body, content_type="application/json")


def test_unparseable_filter_body_logs_bad_request(client, access_log):
    answer = orjson.loads(_post(client, "/filter-simulation", b"{not json").content)
    assert answer["Error"].startswith("malformed extender args")
    (line,) = access_log("/filter-simulation")
    assert line["verdict"] == "bad_request" and line["pod"] == ""


def test_bad_filter_args_with_a_pod_log_bad_request_and_the_pod(client, access_log):
    body = orjson.dumps({"Pod": pod("p", gpumem=1000, namespace="ml"), "NodeNames": ["n1"]})
    assert "NodeNames" in orjson.loads(_post(client, "/filter-simulation", body).content)["Error"]
    (line,) = access_log("/filter-simulation")
    assert (line["verdict"], line["pod"]) == ("bad_request", "ml/p")


def test_pod_hami_rejects_logs_pod_error_and_the_pod(client, access_log):
    bad = pod("w", annotations={"hami.io/device-scoring-weights": "slot=1"}, namespace="ml")
    answer = orjson.loads(_post(client, "/filter-simulation", extender_args(bad, NODES)).content)
    assert answer["Error"].startswith("calcScore failed")
    (line,) = access_log("/filter-simulation")
    assert (line["verdict"], line["pod"]) == ("pod_error", "ml/w")


def test_bad_prioritize_args_log_bad_request_and_the_pod(client, access_log):
    body = orjson.dumps({"Pod": pod("p", namespace="ml")})  # no Nodes
    assert orjson.loads(_post(client, "/prioritize-simulation", body).content) == []
    (line,) = access_log("/prioritize-simulation")
    assert (line["verdict"], line["pod"]) == ("bad_request", "ml/p")


@pytest.mark.parametrize("verb", ["filter-simulation", "prioritize-simulation"])
def test_unknown_session_logs_unknown_session_and_the_pod(client, access_log, verb):
    path = f"/sessions/no-such-session/{verb}"
    response = _post(client, path, extender_args(pod("p", gpumem=1000, namespace="ml"), NODES))
    assert response.status_code == 200
    answer = orjson.loads(response.content)
    assert answer == [] if verb.startswith("prioritize") else "unknown or expired session" in answer["Error"]
    (line,) = access_log(path)
    assert (line["verdict"], line["pod"]) == ("unknown_session", "ml/p")
    assert line["status"] == 200


@pytest.mark.parametrize(
    "path", ["/filter-simulation", "/prioritize-simulation", "/sessions/s1/filter-simulation"]
)
def test_body_over_the_extender_limit_logs_too_large(client, access_log, settings, path):
    settings.EXTENDER_MAX_BODY_BYTES = 256
    body = extender_args(pod("p", gpumem=1000), [node(f"n{i}", [gpu(f"GPU-{i}")]) for i in range(5)])
    assert len(body) > 256
    response = _post(client, path, body)
    assert response.status_code == 413
    (line,) = access_log(path)
    assert line["verdict"] == "too_large" and line["status"] == 413

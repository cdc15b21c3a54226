"""Access control, body limits, throttling, request ids and logs, /metrics and /readyz, in-process.

Each test drives the full middleware stack through Django's test client (real database, real
cache), as a REST client, a browser or Cluster Autoscaler would see it.
"""

from __future__ import annotations

import orjson
import pytest
from django.core.cache import cache

from profiles.models import NodeGroup
from tests.factories import extender_args, gpu, node, pod
from tests.factories.models import TaskRunFactory, TokenFactory

pytestmark = [pytest.mark.api, pytest.mark.django_db]

FILTER_BODY = extender_args(pod("p", gpumem=1000, uid="uid-p", namespace="ml"), [node("n1", [gpu("GPU-1")])])


@pytest.fixture(autouse=True)
def _isolated():
    """Fresh throttle counters."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def operator(db):
    token = TokenFactory(user__username="operator")  # an operator's token
    return token.user, token.key


def _post_json(client, path, payload: bytes, **headers):
    return client.generic("POST", path, payload, content_type="application/json", **headers)


# -- REST writes need a user or a token -------------------------------------------------------------------
def test_anonymous_rest_write_is_refused_and_writes_nothing(client):
    response = _post_json(client, "/api/v1/node-groups/", orjson.dumps({"name": "gpu-a10g"}))
    assert response.status_code in (401, 403)
    assert "detail" in response.json()
    assert NodeGroup.objects.count() == 0


def test_anonymous_rest_read_is_allowed(client):
    assert client.get("/api/v1/node-groups/").status_code == 200


def test_token_holder_passes_authentication_for_writes(client, operator):
    _, key = operator
    response = _post_json(client, "/api/v1/node-groups/", orjson.dumps({}), HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 400  # authenticated; now it is about the (empty) body


def test_admin_needs_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


# -- body limits -------------------------------------------------------------------------------------------
def test_rest_body_over_the_limit_is_413_json_and_writes_nothing(client, operator, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    _, key = operator
    big = orjson.dumps({"name": "gpu-big", "description": "x" * 4096})
    response = _post_json(client, "/api/v1/node-groups/", big, HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 413
    assert "exceeds the limit of 1024 bytes" in response.json()["detail"]
    assert NodeGroup.objects.count() == 0


def test_form_post_over_the_limit_is_refused_before_any_view(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = client.post("/admin/login/", {"username": "x" * 4096, "password": "y"})
    assert response.status_code == 413


def test_nonsense_content_length_is_400(client):
    response = client.generic(
        "POST", "/api/v1/node-groups/", b"{}", content_type="application/json", CONTENT_LENGTH="-5"
    )
    assert response.status_code == 400 and "Content-Length" in response.json()["detail"]


def test_simulation_paths_use_the_extender_limit_not_the_rest_limit(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64
    settings.EXTENDER_MAX_BODY_BYTES = 1 << 20
    response = _post_json(client, "/filter-simulation", FILTER_BODY)
    assert response.status_code == 200 and response.json()["Error"] == ""
    settings.EXTENDER_MAX_BODY_BYTES = 64
    response = _post_json(client, "/api/v1/estimate", FILTER_BODY)
    assert response.status_code == 413
    response = _post_json(client, "/filter-simulation", FILTER_BODY)
    assert response.status_code == 413 and "exceeds the limit" in response.json()["Error"]


# -- throttling --------------------------------------------------------------------------------------------
def test_anonymous_rest_clients_are_throttled_with_429(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/min", "user": "5/min"},
    }
    codes = [client.get("/api/v1/node-groups/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert "throttled" in client.get("/api/v1/node-groups/").json()["detail"].lower()


def test_a_forged_forwarded_for_header_does_not_reset_the_anonymous_rate(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/min", "user": "5/min"},
    }
    codes = [
        client.get("/api/v1/node-groups/", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code for i in range(3)
    ]
    assert codes == [200, 200, 429]


def test_simulation_endpoints_are_never_throttled(client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/min", "user": "2/min"},
    }
    for _ in range(5):
        assert _post_json(client, "/filter-simulation", FILTER_BODY).status_code == 200
    for _ in range(5):
        response = _post_json(client, "/api/v1/sessions", orjson.dumps({"name": "ca-loop"}))
        assert response.status_code == 201, response.content


# -- listeners ---------------------------------------------------------------------------------------------
def test_web_listener_serves_simulation_only_to_logged_in_users_or_tokens(client, operator, settings):
    settings.HAMI_SIM_LISTENER = "web"
    user, key = operator
    anonymous = _post_json(client, "/filter-simulation", FILTER_BODY)
    assert anonymous.status_code == 403 and "API token" in anonymous.json()["error"]
    assert _post_json(client, "/api/v1/estimate", b"{}").status_code == 403
    with_token = _post_json(client, "/filter-simulation", FILTER_BODY, HTTP_AUTHORIZATION=f"Token {key}")
    assert (
        with_token.status_code == 200 and with_token.json()["Nodes"]["items"][0]["metadata"]["name"] == "n1"
    )
    bad_token = _post_json(client, "/filter-simulation", FILTER_BODY, HTTP_AUTHORIZATION="Token nope")
    assert bad_token.status_code == 403
    client.force_login(user)
    assert _post_json(client, "/filter-simulation", FILTER_BODY).status_code == 200
    assert client.get("/api/v1/node-groups/").status_code == 200


def test_extender_listener_hides_admin_rest_and_dashboard(client, settings):
    settings.HAMI_SIM_LISTENER = "extender"
    client.defaults["hami_sim.client_identities"] = (
        "cluster-autoscaler",
    )  # as hami_sim.project.proxied sets it
    for path in ("/admin/", "/api/v1/node-groups/", "/", "/api/schema/"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "extender listener" in response.json()["detail"]
    assert _post_json(client, "/filter-simulation", FILTER_BODY).status_code == 200
    assert _post_json(client, "/sessions/nope/prioritize-simulation", FILTER_BODY).status_code == 200
    assert client.get("/healthz").status_code == 200


# -- request ids and structured logs ----------------------------------------------------------------------


def test_filter_access_line_is_json_with_request_id_pod_and_verdict(client, access_log):
    response = _post_json(client, "/filter-simulation", FILTER_BODY, HTTP_X_REQUEST_ID="ca-loop-42.7")
    assert response["X-Request-ID"] == "ca-loop-42.7"
    (line,) = [r for r in access_log() if r.get("path") == "/filter-simulation"]
    assert line["request_id"] == "ca-loop-42.7"
    assert line["pod"] == "ml/p"
    assert line["verdict"] == "fit 1/1"
    assert line["status"] == 200 and line["level"] == "INFO"


def test_unsafe_request_id_is_replaced(client, access_log):
    response = client.get("/api/v1/node-groups/", HTTP_X_REQUEST_ID="evil\nforged line")
    rid = response["X-Request-ID"]
    assert "\n" not in rid and len(rid) == 32
    assert [r["request_id"] for r in access_log()] == [rid]
    assert client.get("/api/v1/node-groups/")["X-Request-ID"] != rid


# -- /metrics and /readyz ----------------------------------------------------------------------------------
def test_metrics_export_task_runs_and_extender_counts(client):
    from django.utils import timezone

    now = timezone.now()
    TaskRunFactory(task="sync_cluster_inventory", started_at=now, finished_at=now, outcome="success")
    TaskRunFactory(task="sync_cluster_inventory", started_at=now, outcome="failure", error="boom")
    _post_json(client, "/filter-simulation", FILTER_BODY)
    text = client.get("/metrics").content.decode()
    assert 'hami_sim_task_runs{outcome="failure",task="sync_cluster_inventory"} 1.0' in text
    assert 'hami_sim_task_runs{outcome="success",task="sync_cluster_inventory"} 1.0' in text
    assert 'hami_sim_task_last_success_timestamp_seconds{task="sync_cluster_inventory"}' in text
    assert "hami_sim_sessions " in text
    assert 'hami_sim_extender_requests_total{outcome="fit",verb="filter"}' in text
    assert "hami_sim_drift_findings" in text
    assert "django_http_requests_total_by_method_total" in text


def test_readyz_needs_only_the_database_not_broker_or_cluster(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.KUBE_SOURCE = "kubeconfig:/nonexistent"
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "migrations": "ok"}}
    assert client.get("/healthz").json() == {"status": "ok"}

"""What JSON clients (Cluster Autoscaler, REST scripts) see in the logs and on a bad Host header."""

from __future__ import annotations

import orjson
import pytest
from django.core.cache import cache

from tests.factories import extender_args, gpu, node, pod
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.api, pytest.mark.django_db]

BODY = extender_args(
    pod("p", gpumem=1000, uid="uid-p", namespace="ml"),
    [node("n1", [gpu("GPU-1")]), node("n2", [gpu("GPU-2")]), node("small", [gpu("GPU-3", devmem=500)])],
)


@pytest.fixture(autouse=True)
def _isolated():
    cache.clear()
    yield
    cache.clear()


def _post(client, path, payload: bytes, **headers):
    return client.generic("POST", path, payload, content_type="application/json", **headers)


@pytest.mark.parametrize("in_session", [False, True])
def test_prioritize_access_line_names_the_pod_and_hosts_scored(client, access_log, in_session):
    path = "/prioritize-simulation"
    if in_session:
        created = _post(client, "/api/v1/sessions", b"{}")
        assert created.status_code == 201, created.content
        path = f"/sessions/{orjson.loads(created.content)['id']}/prioritize-simulation"
    response = _post(client, path, BODY, HTTP_X_REQUEST_ID="ca-loop-7")
    assert response.status_code == 200
    assert {h["Host"] for h in orjson.loads(response.content)} == {"n1", "n2"}
    (line,) = [r for r in access_log() if r.get("path") == path]
    assert line["request_id"] == "ca-loop-7"
    assert line["pod"] == "ml/p"
    assert line["verdict"] == "scored 2/3"


def test_rejected_prioritize_access_line_says_so(client, access_log):
    response = _post(client, "/prioritize-simulation", b"{not json")
    assert response.status_code == 200 and response.content == b"[]"
    (line,) = [r for r in access_log() if r.get("path") == "/prioritize-simulation"]
    assert line["verdict"] == "bad_request"


# -- a Host header outside ALLOWED_HOSTS ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/filter-simulation"),
        ("POST", "/prioritize-simulation"),
        ("POST", "/sessions/s1/filter-simulation"),
        ("GET", "/api/v1/node-groups/"),
        ("POST", "/api/v1/sessions"),
    ],
)
def test_bad_host_is_a_json_400_for_json_clients_and_writes_nothing(client, settings, method, path):
    from simulations.models import SimulationSession

    settings.ALLOWED_HOSTS = ["hami-sim.example"]
    before = SimulationSession.objects.count()
    response = client.generic(method, path, BODY, content_type="application/json", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    # the extender verbs answer Go's Error field (decoded case-insensitively), the REST API "detail"
    error = orjson.loads(response.content)["detail" if path.startswith("/api/") else "error"]
    assert "evil.example" in error and "ALLOWED_HOSTS" in error  # Django's own wording
    assert response["X-Request-ID"]
    assert SimulationSession.objects.count() == before


def test_bad_host_on_the_dashboard_keeps_the_html_page(client, settings):
    settings.ALLOWED_HOSTS = ["hami-sim.example"]
    response = client.get("/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert not response["Content-Type"].startswith("application/json")


def test_allowed_host_is_served(client, settings):
    settings.ALLOWED_HOSTS = ["hami-sim.example"]
    assert client.get("/api/v1/node-groups/", HTTP_HOST="hami-sim.example").status_code == 200


def test_malformed_host_is_a_json_400_too(client, settings):
    settings.ALLOWED_HOSTS = ["*"]
    response = client.post("/filter-simulation", BODY, content_type="application/json", HTTP_HOST="bad host!")
    assert response.status_code == 400
    assert "bad host!" in orjson.loads(response.content)["error"]


# -- other requests Django refuses as suspicious ----------------------------------------------------------------
def test_too_many_fields_is_a_json_400_on_the_api_and_html_on_the_dashboard(client, settings, db):
    from profiles.models import NodeGroup

    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 2
    user = UserFactory(username="root", password="pw-root-1", superuser=True)
    client.force_login(user)
    query = "&".join(f"f{i}=1" for i in range(5))
    response = client.get(f"/api/v1/node-groups/?{query}")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in orjson.loads(response.content)["detail"]
    response = client.post("/api/v1/node-groups/", query, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert NodeGroup.objects.count() == 0
    response = client.get(f"/decisions/?{query}")
    assert response.status_code == 400 and response["Content-Type"].startswith("text/html")

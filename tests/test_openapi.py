"""The OpenAPI schema is served and documents the extender verbs with their wire format."""

import pytest
import yaml

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def test_schema_lists_extender_verbs(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    for path in ("/filter-simulation", "/prioritize-simulation", "/sessions/{id}/filter-simulation"):
        assert "post" in schema["paths"][path], path
    result = schema["components"]["schemas"]["ExtenderFilterResult"]
    assert set(result["required"]) == {
        "Nodes",
        "NodeNames",
        "FailedNodes",
        "FailedAndUnresolvableNodes",
        "Error",
    }


def test_docs_page_renders(client):
    assert client.get("/api/docs/").status_code == 200


def test_api_root_lists_every_endpoint(client):
    response = client.get("/api/v1/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    listed = response.json()
    assert set(listed) == {
        "node-groups",
        "device-profiles",
        "node-inventories",
        "drift-findings",
        "task-runs",
        "blind-spot",
        "sessions",
        "estimate",
        "decisions",
        "ca-events",
        "autoscaler-status",
        "upgrade",
    }
    for name, url in listed.items():
        assert url.endswith(f"/api/v1/{name}"), (name, url)


def test_schema_documents_the_session_list_and_the_one_error_shape(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    assert "get" in schema["paths"]["/api/v1/sessions/"]
    assert schema["components"]["schemas"]["Error"]["required"] == ["detail"]


def test_schema_documents_the_blind_spot_list(client):
    """The pods upstream CA cannot see: a paginated GET with its filters, in the schema."""
    schema = yaml.safe_load(client.get("/api/schema/").content)
    path = next(p for p in schema["paths"] if p.rstrip("/") == "/api/v1/blind-spot")
    names = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
    assert {"node_group", "namespace", "q", "limit", "offset"} <= names

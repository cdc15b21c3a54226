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

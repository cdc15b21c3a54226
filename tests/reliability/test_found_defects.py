"""Regression tests for the defects schema fuzzing found (each one was a 5xx or a schema violation)."""

from __future__ import annotations

import orjson
import pytest

pytestmark = [pytest.mark.api, pytest.mark.django_db]


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("since=0341-06-06T05:25:14%2B23:48", 200),  # was a 500 on PostgreSQL: offset beyond +-15:59
        ("until=2026-01-01T00:00:00-23:00", 200),
        ("since=0001-01-01T00:00:00%2B01:00", 400),  # before year 1 in UTC: out of range, not a 500
        ("since=not-a-date", 400),
    ],
)
def test_decision_time_filters_never_500(client, query, status):
    response = client.get(f"/api/v1/decisions/?{query}")
    assert response.status_code == status, response.content
    assert isinstance(orjson.loads(response.content), dict)


def test_unknown_node_group_template_as_kwok_is_a_json_404(client):
    """``?format=kwok`` for a group that does not exist was a 500 (YAML cannot dump ErrorDetail)."""
    response = client.get("/api/v1/node-groups/no-such-group/template?format=kwok")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert "detail" in orjson.loads(response.content)


def test_created_node_group_answer_has_open_findings(admin_client):
    """The create answer lacked ``open_findings``, which the schema marks required."""
    response = admin_client.post(
        "/api/v1/node-groups/", {"name": "fuzz-group"}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert orjson.loads(response.content)["open_findings"] == 0

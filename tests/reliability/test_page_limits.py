"""A dashboard list page is capped as the REST API is: ``?per_page=`` never above
``API_MAX_PAGE_SIZE`` (100,000 decisions on one page held a web worker for 139 s and 418 MiB), and a
nonsense size or page shows a normal page, never a 500."""

from __future__ import annotations

import pytest

from tests.factories.models import DecisionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("query", "rows", "page"),
    [
        ("?per_page=100000", 5, 1),  # capped at API_MAX_PAGE_SIZE
        ("?per_page=3", 3, 1),  # a smaller page is honoured
        ("?per_page=-7", 1, 1),  # at least one row
        ("?per_page=abc", 5, 1),  # the page's default (25), capped
        ("?per_page=5&page=99", 2, 3),  # past the end: the last page (12 rows, 5 a page)
        ("?page=zero&per_page=5", 5, 1),
    ],
)
def test_decision_list_page_size_is_capped_like_the_api(client, settings, query, rows, page):
    settings.API_MAX_PAGE_SIZE = 5
    DecisionFactory.create_batch(12)
    client.force_login(UserFactory(username="oncall", password="pw-oncall", is_staff=True))
    response = client.get(f"/decisions/{query}")
    assert response.status_code == 200
    table = response.context["table"]
    assert len(table.page.object_list) == rows
    assert table.page.number == page


def test_the_api_caps_the_same_size(client, settings):
    settings.API_MAX_PAGE_SIZE = 5
    DecisionFactory.create_batch(7)
    client.force_login(UserFactory(username="oncall", password="pw-oncall", is_staff=True))
    body = client.get("/api/v1/decisions/?limit=100000").json()
    assert len(body["results"]) == 5

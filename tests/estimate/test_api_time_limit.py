"""The estimate's time limit (``ESTIMATE_TIME_LIMIT_SECONDS``) over HTTP: as CA's max-binpacking-time,
the groups it leaves unpacked are named in the answer, never a failed request."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import pod
from tests.sessions.conftest import a10_node

from .answers import scheduled, unschedulable

pytestmark = [pytest.mark.api, pytest.mark.django_db]

BODY = {
    "pods": [{"pod": pod("w", gpumem=12000), "count": 4}],
    "nodeGroups": [
        {"name": "a10-a", "template": a10_node("template-node-for-a10-a")},
        {"name": "a10-b", "template": a10_node("template-node-for-a10-b")},
    ],
}


@pytest.mark.parametrize(
    ("limit", "cut", "chosen"),
    [(20, [], "a10-a"), (0, ["a10-a", "a10-b"], None)],
)
def test_groups_past_the_time_limit_are_reported_cut_short(client, settings, limit, cut, chosen):
    settings.ESTIMATE_TIME_LIMIT_SECONDS = limit
    response = client.post("/api/v1/estimate", orjson.dumps(BODY), content_type="application/json")
    assert response.status_code == 200, response.content
    body = orjson.loads(response.content)
    assert body["binpacking"]["cutShortGroups"] == cut
    assert body["chosen"] == chosen
    for option in body["options"]:
        if option["nodeGroup"] in cut:
            assert "time limit of 0 s ran out" in option["skipped"]
            assert option["nodeCount"] == 0 and scheduled(body, option) == []
            assert set(unschedulable(body, option)) == {f"default/w#{i}" for i in range(4)}
        else:
            assert option["nodeCount"] == 2 and "skipped" not in option
    if cut:
        assert "skipped (the estimate's time limit of 0 s ran out" in body["explanation"]

"""Estimate and session answers are capped in size (``MAX_ANSWER_BYTES``): a bigger answer is a 413
naming the limit, never hundreds of MiB encoded in a worker."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import gpu, node, pod

pytestmark = [pytest.mark.api]

TEMPLATE = node("template-node-for-a10-x1", [gpu("GPU-a"), gpu("GPU-b", index=1)])
ESTIMATE = {
    "pods": [{"pod": pod("e", gpumem=20000), "count": 40}],
    "nodeGroups": [{"name": "x", "template": TEMPLATE}],
}


def _estimate(client):
    return client.post("/api/v1/estimate", orjson.dumps(ESTIMATE), content_type="application/json")


def _session_state(client):
    """A session's state (a read: a write is answered in full, so a refusal never hides one)."""
    created = client.post("/api/v1/sessions", b'{"name": "capped"}', content_type="application/json")
    assert created.status_code == 201
    sid = orjson.loads(created.content)["id"]
    return lambda client: client.get(f"/api/v1/sessions/{sid}")


@pytest.mark.django_db
@pytest.mark.parametrize("what", ["estimate", "session state"])
def test_an_answer_over_the_limit_is_a_413_naming_it(client, settings, what):
    ask = _estimate if what == "estimate" else _session_state(client)
    answer = ask(client)
    assert answer.status_code == 200, answer.content[:300]
    size = len(answer.content)
    # below the answer by more than its own duration can vary (``seconds``, 6 decimals: a few bytes)
    limit = size - 16
    settings.MAX_ANSWER_BYTES = limit
    refused = ask(client)
    assert refused.status_code == 413, refused.content[:300]
    detail = orjson.loads(refused.content)
    assert f"over the limit of {limit} bytes (MAX_ANSWER_BYTES)" in detail["detail"]
    assert detail["limit"] == limit
    settings.MAX_ANSWER_BYTES = size + 64  # (an estimate reports its own duration) within it: answered
    assert ask(client).status_code == 200

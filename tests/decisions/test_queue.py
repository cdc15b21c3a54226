"""The async recorder's queue: bounded in bytes, honest about what it holds, and the times it records.

The answering thread queues a question and the time of the answer; the writer turns them into a row
later. What a user sees: the row's count, its first and last time (those of the calls, not of the
write), and the drops counted once the queue holds ``DECISION_QUEUE_MAX_BYTES``; once written, the
queue holds nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from decisions import recorder
from decisions.models import Decision
from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api]

A10 = [gpu("GPU-a10-0", devmem=23028)]


def _ask(client, uid: str) -> None:
    body = extender_args(pod(uid, gpumem=1000, uid=uid), [node("tmpl-a10", A10)])
    response = client.post("/filter-simulation", body, content_type="application/json")
    assert response.status_code == 200 and orjson.loads(response.content)["Error"] == ""


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("calls", "bound_in_calls", "rows", "dropped"),
    [
        ([1, 1, 1], None, {"q-1": 3}, 0),  # one question three times: one row, count 3
        ([1, 2, 1, 2], None, {"q-1": 2, "q-2": 2}, 0),
        ([1, 1, 1], 1, {"q-1": 1}, 2),  # room for one call: the others are dropped, and counted
        ([1, 2, 3], 2, {"q-1": 1, "q-2": 1}, 1),
    ],
)
def test_the_queue_holds_what_it_counts_and_drops_past_its_bound(
    client, settings, idle_decision_writer, calls, bound_in_calls, rows, dropped
):
    dropped_before = recorder.RECORD_DROPPED._value.get()
    started = datetime.now(UTC)
    _ask(client, f"q-{calls[0]}")
    one_call = recorder._writer.queued_bytes
    assert one_call > 0
    if bound_in_calls is not None:
        settings.DECISION_QUEUE_MAX_BYTES = one_call * bound_in_calls
    for uid in calls[1:]:
        _ask(client, f"q-{uid}")
    ended = datetime.now(UTC)
    kept = min(len(calls), bound_in_calls or len(calls))
    assert recorder._writer.queued_bytes == one_call * kept  # the same call costs the same

    assert recorder.flush(timeout=20)
    assert recorder._writer.queued_bytes == 0  # written: nothing held any more
    assert recorder.RECORD_DROPPED._value.get() - dropped_before == dropped
    stored = {d.pod_uid: d for d in Decision.objects.all()}
    assert {uid: d.count for uid, d in stored.items()} == rows
    for d in stored.values():  # the calls' own times, as aware datetimes
        assert started <= d.first_seen <= d.last_seen <= ended
        assert d.first_seen.utcoffset() is not None

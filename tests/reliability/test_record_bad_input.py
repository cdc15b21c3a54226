"""One bad request never silences the decision record.

The hardening probe sent, among innocent calls, one whose pod name held a NUL character or a name
longer than 253 characters; PostgreSQL refused that row and the writer dropped its whole batch (0 of
5 innocent decisions recorded). Now every row is written in its own savepoint, stored trimmed (NUL
replaced by U+FFFD, strings cut to their column), and a row the database still refuses is stored as
a marker saying why. Runs on the test database (PostgreSQL in CI: SQLite accepts all of these).
"""

from __future__ import annotations

import orjson
import pytest
from django.db import connection

from decisions import recorder
from decisions.models import Decision
from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api]

A10 = [gpu("GPU-a10-0", devmem=23028)]
LONG = "n" * 300
BAD_PODS = {
    "NUL in the pod name": {"name": "bad\x00pod"},
    "names longer than 253 characters": {"name": LONG, "namespace": "ns-" + LONG},
    "NUL in a node name and an annotation": {"name": "bad-node", "node": "node-\x00-" + LONG},
    "NUL in the owner and the uid": {"name": "owner", "owner": "job\x00" + LONG, "uid": "uid-\x00" * 50},
}


def _bad_pod(kind: str) -> tuple[dict, list[dict]]:
    spec = BAD_PODS[kind]
    p = pod(spec["name"], gpumem=1000, uid=spec.get("uid", f"uid-bad-{len(kind)}"))
    p["metadata"]["namespace"] = spec.get("namespace", "default")
    p["metadata"]["annotations"] = {"note": "a\x00b"}
    if "owner" in spec:
        p["metadata"]["ownerReferences"] = [{"kind": "Job", "name": spec["owner"], "controller": True}]
    return p, [node(spec.get("node", "tmpl-a10"), A10)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", list(BAD_PODS))
def test_five_innocent_decisions_and_one_bad_one_in_one_batch_are_six_rows(
    client, idle_decision_writer, kind
):
    bad_pod, bad_nodes = _bad_pod(kind)
    calls = [
        (pod(f"innocent-{i}", gpumem=1000, uid=f"uid-innocent-{i}"), [node("tmpl-a10", A10)])
        for i in range(5)
    ]
    calls.insert(2, (bad_pod, bad_nodes))
    for p, nodes in calls:
        response = client.post("/filter-simulation", extender_args(p, nodes), content_type="application/json")
        assert response.status_code == 200 and orjson.loads(response.content)["Error"] == ""
    assert recorder.flush(timeout=20)
    rows = {d.pod_uid: d for d in Decision.objects.all()}
    assert len(rows) == 6, sorted(rows)
    assert {f"uid-innocent-{i}" for i in range(5)} <= set(rows)
    (bad,) = [d for uid, d in rows.items() if not uid.startswith("uid-innocent")]
    for column in ("pod_uid", "pod_name", "pod_namespace", "pod_owner"):
        value = getattr(bad, column)
        assert "\x00" not in value and len(value) <= Decision._meta.get_field(column).max_length
    assert "\x00" not in orjson.dumps(bad.nodes).decode()
    assert bad.verdict == "fit" and bad.count == 1


@pytest.mark.django_db
def test_a_row_the_database_refuses_even_trimmed_is_stored_as_a_marker():
    """A value no trimming repairs (an integer past PostgreSQL's range) leaves a marker that names
    the refusal; the innocent rows of the batch are stored as they were."""
    from django.utils import timezone

    now = timezone.now()

    def row(i: int, **extra) -> dict:
        base = {
            "digest": f"d{i}",
            "pod_uid": f"u{i}",
            "pod_namespace": "ns",
            "pod_name": f"p{i}",
            "caller": "extender",
            "verdict": "fit",
            "node_count": 1,
            "fit_count": 1,
            "nodes": [{"name": "n", "reason": ""}],
            "latency_ms": 1.0,
            "first_seen": now,
            "last_seen": now,
        }
        return {**base, **extra}

    rows = [row(i) for i in range(5)] + [row(5, node_count=2**40, pod_name="bad\x00name")]
    assert recorder.write_batch(rows) == 6
    stored = {d.digest: d for d in Decision.objects.all()}
    assert len(stored) == 6
    assert all(stored[f"d{i}"].nodes == [{"name": "n", "reason": ""}] for i in range(5))
    marker = stored["d5"]
    if connection.vendor != "postgresql":
        pytest.skip("SQLite stores the big integer as it is")
    assert marker.nodes == [] and marker.node_count == 2**31 - 1
    assert marker.top_reason.startswith("unstorable record: DataError"), marker.top_reason
    assert marker.pod_name == "bad?name"  # ASCII in a marker: nothing left to refuse


def test_storable_trims_to_the_column_and_replaces_nul():
    row = {"pod_name": "x" * 300, "top_reason": "a\x00b", "nodes": [{"na\x00me": ["\x00"]}], "count": 1}
    clean = recorder.storable(row)
    assert len(clean["pod_name"]) == 253 and clean["pod_name"].endswith("…")
    assert clean["top_reason"] == "a\ufffdb"
    assert clean["nodes"] == [{"na\ufffdme": ["\ufffd"]}]
    assert clean["count"] == 1

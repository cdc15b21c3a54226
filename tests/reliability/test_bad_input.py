"""The bad-input corpus (``corpus.py``) against ``/filter-simulation``, ``/prioritize-simulation`` and
the session API: a clear error, never a 5xx, no change to stored state, and the server keeps
answering (a good request after every bad one gets the right answer).
"""

from __future__ import annotations

import orjson
import pytest

from tests.factories import gpu, node, pod

from .corpus import (
    FILTER_DEFINED,
    FILTER_ERRORS,
    GOOD_POD,
    SESSION_ERRORS,
    SESSION_NODE,
    Case,
    _verdicts,
    good_filter_body,
    row_counts,
)

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def _post(client, path: str, case: Case):
    return client.generic(
        "POST", path, case.body, content_type=case.content_type, **case.extra.get("headers", {})
    )


def _assert_good_filter_still_answered(client) -> None:
    response = client.post("/filter-simulation", good_filter_body(), content_type="application/json")
    assert response.status_code == 200
    answer = orjson.loads(response.content)
    assert answer["Error"] == ""
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["tmpl-good"]


def test_the_corpus_is_big_enough():
    assert len(FILTER_ERRORS) + len(SESSION_ERRORS) >= 40
    assert len({c.id for c in FILTER_ERRORS + SESSION_ERRORS + [c for c, _ in FILTER_DEFINED]}) == (
        len(FILTER_ERRORS) + len(SESSION_ERRORS) + len(FILTER_DEFINED)
    )


@pytest.mark.parametrize("case", FILTER_ERRORS, ids=lambda c: c.id)
def test_filter_rejects_bad_input_clearly(client, case):
    before = row_counts()
    response = _post(client, "/filter-simulation", case)
    assert response.status_code in case.statuses
    assert response["Content-Type"].startswith("application/json")
    answer = orjson.loads(response.content)
    assert set(answer) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    assert answer["Error"], "a rejected request must say why"
    assert case.expect.lower() in answer["Error"].lower()
    assert answer["Nodes"] is None and answer["NodeNames"] is None
    assert answer["FailedNodes"] == {} and not answer["FailedAndUnresolvableNodes"]
    assert len(answer["Error"]) < 2000, "the error names the problem, it does not echo the request"
    assert row_counts() == before
    _assert_good_filter_still_answered(client)


@pytest.mark.parametrize("case", FILTER_ERRORS, ids=lambda c: c.id)
def test_prioritize_answers_empty_list_for_bad_input(client, case):
    before = row_counts()
    response = _post(client, "/prioritize-simulation", case)
    assert response.status_code in case.statuses
    assert orjson.loads(response.content) == []
    assert row_counts() == before
    good = client.post("/prioritize-simulation", good_filter_body(), content_type="application/json")
    assert good.status_code == 200
    assert [p["Host"] for p in orjson.loads(good.content)] == ["tmpl-good"]


@pytest.mark.parametrize(("case", "expected"), FILTER_DEFINED, ids=lambda c: getattr(c, "id", ""))
def test_hostile_but_decodable_input_gets_hamis_answer(client, case, expected):
    response = _post(client, "/filter-simulation", case)
    assert response.status_code == 200
    answer = orjson.loads(response.content)
    assert answer["Error"] == ""
    got = _verdicts(answer)
    assert set(got) == set(expected)
    for name, want in expected.items():
        assert got[name].startswith(want.split(": ")[0])
        if ": " in want:
            assert want.split(": ", 1)[1] in got[name], (name, got[name])
    # fitting nodes are echoed back unchanged, in input order
    sent = orjson.loads(case.body)
    items = (sent.get("Nodes") or sent.get("nodes"))["items"]
    fitting = [n for n in items if expected.get(n["metadata"]["name"]) == "fit"]
    assert ((answer["Nodes"] or {}).get("items") or []) == fitting
    _assert_good_filter_still_answered(client)


def test_body_over_the_limit_is_refused_before_parsing(client, settings):
    settings.EXTENDER_MAX_BODY_BYTES = 1024 * 1024
    before = row_counts()
    body = good_filter_body()[:-1] + b', "Padding": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    response = client.post("/filter-simulation", body, content_type="application/json")
    assert response.status_code in (200, 413)
    answer = orjson.loads(response.content)
    assert "exceeds the limit" in answer["Error"]
    assert row_counts() == before
    _assert_good_filter_still_answered(client)


def test_unknown_session_verbs_answer_in_extender_shape(client):
    response = client.post(
        "/sessions/nope/filter-simulation", good_filter_body(), content_type="application/json"
    )
    assert response.status_code == 200
    assert orjson.loads(response.content)["Error"] == "unknown or expired session nope"
    response = client.post(
        "/sessions/nope/prioritize-simulation", good_filter_body(), content_type="application/json"
    )
    assert response.status_code == 200
    assert orjson.loads(response.content) == []


# -- the session API ---------------------------------------------------------------------------------


@pytest.fixture
def session_id(client) -> str:
    """A session that already holds one placement (so the node is known and the state is non-trivial)."""
    created = client.post("/api/v1/sessions", b'{"name": "reliability"}', content_type="application/json")
    assert created.status_code == 201, created.content
    sid = orjson.loads(created.content)["id"]
    placed = client.post(
        f"/api/v1/sessions/{sid}/placements",
        orjson.dumps({"pod": pod("first", gpu_count=1, gpumem=2000, uid="uid-first"), "node": SESSION_NODE}),
        content_type="application/json",
    )
    assert placed.status_code == 201, placed.content
    return sid


def _session_state(client, sid: str) -> dict:
    response = client.get(f"/api/v1/sessions/{sid}")
    assert response.status_code == 200
    return orjson.loads(response.content)


@pytest.mark.parametrize("case", SESSION_ERRORS, ids=lambda c: c.id)
def test_session_api_rejects_bad_input_clearly(client, session_id, case):
    state = _session_state(client, session_id)
    before = row_counts()
    path = case.extra.get("path", "/api/v1/sessions/{id}/placements").format(id=session_id)
    method = case.extra.get("method", "post").upper()
    response = client.generic(
        method, path, case.body, content_type=case.content_type, **case.extra.get("headers", {})
    )
    assert response.status_code in case.statuses, response.content
    answer = orjson.loads(response.content)
    assert isinstance(answer.get("detail"), str) and answer["detail"]
    assert case.expect.lower() in answer["detail"].lower()
    assert row_counts() == before
    assert _session_state(client, session_id) == state
    # still answering: a good placement on the same session succeeds
    good = client.post(
        f"/api/v1/sessions/{session_id}/placements",
        orjson.dumps({"pod": GOOD_POD, "nodeName": "tmpl-s"}),
        content_type="application/json",
    )
    assert good.status_code == 201, good.content
    assert orjson.loads(good.content)["revision"] == state["revision"] + 1


@pytest.mark.parametrize("case", FILTER_ERRORS, ids=lambda c: c.id)
def test_session_filter_verb_rejects_bad_input_clearly(client, session_id, case):
    """``/sessions/<id>/filter-simulation`` shares the extender's contract, bad input included."""
    state = _session_state(client, session_id)
    before = row_counts()
    response = _post(client, f"/sessions/{session_id}/filter-simulation", case)
    assert response.status_code in case.statuses
    answer = orjson.loads(response.content)
    assert answer["Error"] and case.expect.lower() in answer["Error"].lower()
    assert answer["Nodes"] is None
    assert row_counts() == before
    assert _session_state(client, session_id) == state
    good = client.post(
        f"/sessions/{session_id}/filter-simulation", good_filter_body(), content_type="application/json"
    )
    assert orjson.loads(good.content)["Error"] == ""


def test_unicode_names_round_trip_through_a_session(client, session_id):
    name = "节点-🚀-ü"
    body = orjson.dumps(
        {"pod": pod("пoд", gpu_count=1, gpumem=1000, uid="uid-ü"), "node": node(name, [gpu("GPU-ü")])}
    )
    placed = client.post(f"/api/v1/sessions/{session_id}/placements", body, content_type="application/json")
    assert placed.status_code == 201, placed.content
    assert orjson.loads(placed.content)["nodeName"] == name
    state = _session_state(client, session_id)
    assert name in [n["name"] for n in state["nodes"]]
    assert {"podUID": "uid-ü", "nodeName": name}.items() <= next(
        p for p in state["placements"] if p["podUID"] == "uid-ü"
    ).items()


def test_the_pure_python_path_refuses_a_deep_fitting_node_it_could_not_echo(client, monkeypatch):
    """Without msgspec (``SPLIT_NODES`` off) the nodes are encoded again, and orjson writes at most 254
    levels: the 600-deep node that the default path echoes is refused where it is parsed."""
    from tests.reliability.corpus import DEEP_FITTING_NODE

    monkeypatch.setattr("simulations.extender.SPLIT_NODES", False)
    response = _post(client, "/filter-simulation", DEEP_FITTING_NODE)
    answer = orjson.loads(response.content)
    assert response.status_code == 200 and answer["Nodes"] is None
    assert DEEP_FITTING_NODE.expect in answer["Error"]

"""The extender verbs' DRF classes, seen from the client: who may call (the client certificate's
allow-list on the extender listener), what a body may look like (any content type, empty, too
large), and which refusal a session verb names first."""

from __future__ import annotations

import logging

import orjson
import pytest

from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]

IDENTITIES = "hami_sim.client_identities"  # what hami_sim.project.proxied puts in the WSGI environ
VERBS = ["/filter-simulation", "/prioritize-simulation"]
BODY = extender_args(pod("p", gpumem=1000, namespace="ml"), [node("n1", [gpu("GPU-1")])])


def _post(client, path: str, body: bytes = BODY, content_type: str = "application/json", **extra):
    return client.generic("POST", path, body, content_type=content_type, **extra)


def _fits(path: str, response) -> bool:
    answer = orjson.loads(response.content)
    if path.endswith("filter-simulation"):
        return answer["Error"] == "" and [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["n1"]
    return [host["Host"] for host in answer] == ["n1"]


@pytest.mark.parametrize("path", VERBS)
@pytest.mark.parametrize(
    ("presented", "allowed"),
    [
        (("cluster-autoscaler",), True),
        (("someone-else", "ca-2"), True),  # any CN/SAN value on the list will do
        (("someone-else",), False),
        ((), False),
        (None, False),  # a server that cannot pass the certificate on: fail closed
    ],
)
def test_extender_listener_answers_only_allowed_certificates(
    client, settings, caplog, path, presented, allowed
):
    settings.HAMI_SIM_LISTENER = "extender"
    settings.HAMI_SIM_CLIENT_IDENTITIES = "cluster-autoscaler, ca-2"
    if presented is not None:
        client.defaults[IDENTITIES] = presented
    with caplog.at_level(logging.WARNING, logger="hami_sim.security"):
        response = _post(client, path)
    assert response["Content-Type"] == "application/json"
    if allowed:
        assert response.status_code == 200 and _fits(path, response)
        assert not caplog.records
        return
    assert response.status_code == 403
    assert "HAMI_SIM_CLIENT_IDENTITIES" in orjson.loads(response.content)["error"]
    (record,) = caplog.records
    assert record.status_code == 403 and "not allowed on the extender listener" in record.getMessage()


@pytest.mark.parametrize("path", ["/sessions/nope/filter-simulation", "/api/v1/sessions"])
def test_extender_listener_refuses_other_certificates_on_sessions_too(client, settings, path):
    settings.HAMI_SIM_LISTENER = "extender"
    client.defaults[IDENTITIES] = ("someone-else",)
    response = _post(client, path)
    assert response.status_code == 403
    assert "HAMI_SIM_CLIENT_IDENTITIES" in str(orjson.loads(response.content))


@pytest.mark.parametrize("path", VERBS)
@pytest.mark.parametrize(
    "content_type",
    ["application/json", "text/plain", "application/octet-stream", "application/x-www-form-urlencoded", ""],
)
def test_any_content_type_is_read_as_extender_args(client, path, content_type):
    response = _post(client, path, content_type=content_type)
    assert response.status_code == 200 and _fits(path, response)


@pytest.mark.parametrize(
    ("path", "answer"),
    [("/filter-simulation", "malformed extender args: "), ("/prioritize-simulation", [])],
)
def test_empty_body_is_a_request_error_in_the_verbs_shape(client, path, answer):
    response = _post(client, path, b"")
    assert response.status_code == 200
    got = orjson.loads(response.content)
    assert got == answer if isinstance(answer, list) else got["Error"].startswith(answer)


@pytest.mark.parametrize("path", VERBS)
def test_an_unknown_token_is_no_identity_rather_than_a_refusal(client, path):
    """On the ``all`` listener (demo, development) a bad token neither refuses nor names a caller."""
    response = _post(client, path, HTTP_AUTHORIZATION="Token not-a-token")
    assert response.status_code == 200 and _fits(path, response)


@pytest.mark.parametrize(
    ("verb", "body", "status", "expected"),
    [
        # an unknown session is named before a malformed body, as when it was looked up first
        ("filter-simulation", b"{not json", 200, "unknown or expired session"),
        ("prioritize-simulation", b"{not json", 200, []),
        # the body limit comes before either
        ("filter-simulation", BODY, 413, "exceeds the limit of 256 bytes"),
        ("prioritize-simulation", BODY, 413, []),
    ],
)
def test_session_verb_names_the_first_refusal(client, settings, verb, body, status, expected):
    settings.EXTENDER_MAX_BODY_BYTES = 256
    response = _post(client, f"/sessions/nope/{verb}", body)
    assert response.status_code == status
    got = orjson.loads(response.content)
    assert got == expected if isinstance(expected, list) else expected in got["Error"]

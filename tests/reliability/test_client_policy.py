"""The one client-certificate policy (``ClientCertificatePolicy``) both refusing seams ask.

The extender verbs' permission class and the middleware in front of the other simulation endpoints
used to hold the allow-list check each; now both ask ``client_policy().refuses``. The table says which
certificates the policy admits: the subject CN and DNS SANs count by default, an email, URI or IP SAN
does not (a certificate with SAN ``email:cluster-autoscaler`` is not Cluster Autoscaler), and both the
parts that count and the allowed names are configurable. The seams are then checked to agree."""

from __future__ import annotations

import pytest

from hami_sim.project.clientcert import IDENTITIES_KEY, ClientCertificatePolicy, client_policy
from tests.factories import extender_args, node, pod

CA = "cluster-autoscaler"
CN_DNS = frozenset({"CN", "DNS"})


def _cert(cn: str, *sans: tuple[str, str]) -> dict:
    """A certificate as the standard library decodes it (``SSLSocket.getpeercert()``)."""
    return {"subject": ((("organizationName", "x"),), (("commonName", cn),)), "subjectAltName": sans}


# (certificate, allowed names, fields that name a certificate, the allowed names it carries)
CASES = [
    pytest.param(_cert(CA), {CA}, CN_DNS, [CA], id="CN counts"),
    pytest.param(_cert("mallory", ("DNS", CA)), {CA}, CN_DNS, [CA], id="DNS SAN counts"),
    pytest.param(_cert("mallory", ("email", CA)), {CA}, CN_DNS, [], id="email SAN does not"),
    pytest.param(_cert("mallory", ("URI", CA)), {CA}, CN_DNS, [], id="URI SAN does not"),
    pytest.param(_cert("mallory", ("IP Address", CA)), {CA}, CN_DNS, [], id="IP SAN does not"),
    pytest.param(_cert("mallory"), {CA}, CN_DNS, [], id="another CN"),
    pytest.param(_cert(CA), {"other"}, CN_DNS, [], id="allow-list is configurable"),
    pytest.param(_cert("b", ("DNS", "a")), {"a", "b"}, CN_DNS, ["a", "b"], id="sorted"),
    pytest.param(_cert(CA), {CA}, frozenset({"DNS"}), [], id="CN off"),
    pytest.param(_cert("mallory", ("DNS", CA)), {CA}, frozenset({"CN"}), [], id="DNS off"),
    pytest.param(_cert("mallory", ("email", CA)), {CA}, frozenset({"email"}), [CA], id="email on"),
    pytest.param(_cert("mallory", ("URI", CA)), {CA}, frozenset({"URI"}), [CA], id="URI on"),
    pytest.param({}, {CA}, CN_DNS, [], id="no certificate"),
    pytest.param(None, {CA}, CN_DNS, [], id="none"),
    pytest.param(_cert(CA), set(), CN_DNS, [], id="empty allow-list"),
]


@pytest.mark.parametrize(("cert", "allowed", "fields", "admitted"), CASES)
def test_the_policy_admits_only_allowed_names_from_the_counted_parts(cert, allowed, fields, admitted):
    policy = ClientCertificatePolicy(allowed=frozenset(allowed), fields=fields)
    assert policy.admits(cert) == admitted
    meta = {IDENTITIES_KEY: policy.names(cert)}
    assert policy.refuses(meta) is not admitted
    assert not ClientCertificatePolicy(frozenset(allowed), fields, enforced=False).refuses(meta)


# (settings, what the policy in force says)
SETTINGS = [
    ({"HAMI_SIM_LISTENER": "extender"}, (frozenset({CA}), CN_DNS, True)),
    ({"HAMI_SIM_LISTENER": "web"}, (frozenset({CA}), CN_DNS, False)),
    (
        {
            "HAMI_SIM_LISTENER": "extender",
            "HAMI_SIM_CLIENT_IDENTITIES": "a, b",
            "HAMI_SIM_CLIENT_IDENTITY_FIELDS": "URI",
        },
        (frozenset({"a", "b"}), frozenset({"URI"}), True),
    ),
]


@pytest.mark.parametrize(("values", "want"), SETTINGS)
def test_the_policy_in_force_follows_the_settings(settings, values, want):
    for name, value in values.items():
        setattr(settings, name, value)
    policy = client_policy()
    assert (policy.allowed, policy.fields, policy.enforced) == want


# the two seams: a verb (the DRF permission class) and a session create (the middleware)
SEAMS = {"/filter-simulation": extender_args(pod("p"), [node("n1")]), "/api/v1/sessions": b"{}"}


@pytest.mark.api
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("presented", "refused"),
    [
        (("cluster-autoscaler",), False),
        (("mallory", "ca-2"), False),
        (("mallory",), True),
        ((), True),
        (None, True),
    ],
)
def test_both_seams_refuse_the_same_certificates(client, settings, presented, refused):
    settings.HAMI_SIM_LISTENER = "extender"
    settings.HAMI_SIM_CLIENT_IDENTITIES = "cluster-autoscaler, ca-2"
    if presented is not None:
        client.defaults[IDENTITIES_KEY] = presented
    answers = {path: client.post(path, body, content_type="application/json") for path, body in SEAMS.items()}
    assert {path: r.status_code == 403 for path, r in answers.items()} == dict.fromkeys(SEAMS, refused)

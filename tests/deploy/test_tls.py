"""The production server, for real: nginx with TLS and mTLS in front of gunicorn on loopback,
certificates made here.

Cluster Autoscaler's extender client presents ``tlsConfig.certFile/keyFile`` and verifies us with
``caFile``; these tests play that client with Python's ``ssl`` module over real sockets. nginx
verifies the client certificate and passes it on; the application reads its names from nginx only.
"""

from __future__ import annotations

import http.client
import re
import ssl
import subprocess
from urllib.parse import quote

import orjson
import pytest

from hami_sim.server.serve import free_port, start_server, stop_server
from tests.factories import extender_args, gpu, node, pod
from tests.waiting import eventually

# django_db: makes pytest-django create (and migrate) the test database the server subprocess opens.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

NODES = [node("gpu-a", [gpu("GPU-a0", devmem=24000)]), node("gpu-b", [gpu("GPU-b0", devmem=8000)])]
BODY = extender_args(pod("trainer", gpumem=16000, uid="uid-trainer"), NODES)
# What a production listener refuses to start without; the test PKI's client
# certificate names cluster-autoscaler.kube-system.
PRODUCTION_SETTINGS = {
    "SECRET_KEY": "test-" + "k" * 60,
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "HAMI_SIM_CLIENT_IDENTITIES": "cluster-autoscaler.kube-system",
}


def _context(pki, client_pem: str | None, *, trust_server: bool = True) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=pki.ca_cert if trust_server else None)
    if client_pem:
        ctx.load_cert_chain(client_pem)
    return ctx


def _request(url: str, ctx: ssl.SSLContext, method: str, path: str, body: bytes | None = None):
    port = int(url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server_log(tmp_path_factory):
    return tmp_path_factory.mktemp("logs") / "extender.log"


@pytest.fixture(scope="module")
def extender_server(pki, server_database_url, server_log):
    """The extender listener as deployed: mTLS against the cluster CA, 2 workers, metrics port."""
    metrics_port = free_port()
    log_file = server_log.open("wb")
    proc, url = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        client_ca=pki.ca_cert,
        workers=2,
        env={
            "DATABASE_URL": server_database_url,
            "HAMI_SIM_LISTENER": "extender",
            **PRODUCTION_SETTINGS,
            "HAMI_SIM_HTTPS": "true",  # as deployed: SSL redirect on, so the server must see https
            "HAMI_SIM_METRICS_PORT": str(metrics_port),
            "DECISION_RECORDING": "off",
            "LOG_LEVEL": "INFO",
        },
        stdout=log_file,
        stderr=log_file,
    )
    yield url, metrics_port
    stop_server(proc)
    log_file.close()


def test_client_with_cluster_ca_certificate_gets_filter_answer(pki, extender_server):
    url, _ = extender_server
    status, body, headers = _request(url, _context(pki, pki.client_pem), "POST", "/filter-simulation", BODY)
    assert status == 200
    answer = orjson.loads(body)
    assert answer["Error"] == ""
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["gpu-a"]
    assert "gpu-b" in answer["FailedNodes"]
    assert headers["X-Request-ID"]  # every answer can be found in the logs


@pytest.mark.parametrize(
    ("who", "message"),
    [("no certificate", "a client certificate is required"), ("certificate from another CA", "not valid")],
)
def test_client_without_valid_certificate_is_refused_by_nginx(pki, extender_server, who, message):
    """nginx finishes the handshake and refuses the request itself, in the extender's error shape;
    the application never sees it."""
    url, _ = extender_server
    client_pem = None if who == "no certificate" else pki.stranger_pem
    try:
        status, body, _ = _request(url, _context(pki, client_pem), "POST", "/filter-simulation", BODY)
    except (ssl.SSLError, ConnectionError, http.client.RemoteDisconnected):
        return  # refused in the handshake (TLS 1.3 clients may see it so)
    assert status == 403 and message in orjson.loads(body)["error"], body


def test_a_client_cannot_claim_a_certificate_in_a_header(pki, extender_server):
    """``X-Client-Cert`` sent by a client is replaced by nginx's (here: a certificate naming
    somebody else); the application believes nginx only."""
    url, _ = extender_server
    forged = pki.client.cert_chain_pems[0].bytes().decode()
    intruder = pki.ca.issue_cert("someone-else.default.svc")
    pem = pki.dir / "forger.pem"
    pem.write_bytes(intruder.private_key_and_cert_chain_pem.bytes())
    port = int(url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=_context(pki, str(pem)), timeout=20)
    try:
        conn.request(
            "POST",
            "/filter-simulation",
            body=BODY,
            headers={"Content-Type": "application/json", "X-Client-Cert": quote(forged)},
        )
        response = conn.getresponse()
        status, body = response.status, response.read()
    finally:
        conn.close()
    assert status == 403 and "HAMI_SIM_CLIENT_IDENTITIES" in orjson.loads(body)["error"]


def test_cluster_autoscaler_refuses_a_server_it_cannot_verify(pki, extender_server):
    """Without ``caFile`` the Go client would skip verification; with it, a foreign server fails."""
    url, _ = extender_server
    ctx = ssl.create_default_context(cafile=None)
    ctx.load_verify_locations(cadata=pki.other_ca.cert_pem.bytes().decode())
    ctx.load_cert_chain(pki.client_pem)
    with pytest.raises(ssl.SSLCertVerificationError):
        _request(url, ctx, "POST", "/filter-simulation", BODY)


def test_extender_listener_serves_only_simulation_and_probes(pki, extender_server):
    url, _ = extender_server
    ctx = _context(pki, pki.client_pem)
    status, body, _ = _request(url, ctx, "GET", "/readyz")
    assert status == 200 and orjson.loads(body)["status"] == "ready", body
    status, body, _ = _request(url, ctx, "GET", "/admin/")
    assert status == 404 and "extender listener" in orjson.loads(body)["detail"]


def test_requests_of_every_worker_show_up_on_the_metrics_port(pki, extender_server):
    url, metrics_port = extender_server
    ctx = _context(pki, pki.client_pem)

    def served() -> float:
        conn = http.client.HTTPConnection("127.0.0.1", metrics_port, timeout=10)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
        found = re.findall(
            r'^hami_sim_extender_requests_total\{(?=[^}]*verb="filter")[^}]*\} (\S+)$', text, re.M
        )
        return sum(float(v) for v in found)

    before = served()
    for _ in range(6):  # new connections: gunicorn spreads them over both workers
        assert _request(url, ctx, "POST", "/filter-simulation", BODY)[0] == 200
    assert served() - before == 6


def test_web_listener_over_tls_needs_no_client_certificate_but_login_for_simulation(pki, server_database_url):
    """The dashboard/admin listener: TLS for browsers, no client certificate, simulation behind login."""
    proc, url = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        env={
            "DATABASE_URL": server_database_url,
            "HAMI_SIM_LISTENER": "web",
            **PRODUCTION_SETTINGS,
            "HAMI_SIM_HTTPS": "true",
            "DECISION_RECORDING": "off",
            "LOG_LEVEL": "WARNING",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ctx = _context(pki, None)
        status, _, _ = _request(url, ctx, "GET", "/healthz")
        assert status == 200
        status, body, _ = _request(url, ctx, "POST", "/filter-simulation", BODY)
        assert status == 403 and "API token" in orjson.loads(body)["error"]
        status, _, headers = _request(url, ctx, "GET", "/admin/")
        assert status == 302 and "/admin/login/" in headers["Location"]
        assert "max-age=31536000" in headers["Strict-Transport-Security"]
        # /metrics in multiprocess mode: the workers' samples plus the database-backed collectors.
        status, body, _ = _request(url, ctx, "GET", "/metrics")
        text = body.decode()
        assert status == 200
        for family in (
            "hami_sim_sessions",
            "hami_sim_task_runs",
            "hami_sim_drift_findings",
            "django_http_requests_total_by_method_total",
        ):
            assert f"# TYPE {family}" in text, family
    finally:
        stop_server(proc)


def test_server_logs_are_json_lines_with_request_id_pod_and_verdict(pki, extender_server, server_log):
    url, _ = extender_server
    port = int(url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=_context(pki, pki.client_pem), timeout=20)
    conn.request(
        "POST",
        "/filter-simulation",
        body=BODY,
        headers={"X-Request-ID": "ca-loop-7", "Content-Type": "application/json"},
    )
    assert conn.getresponse().read()
    conn.close()

    def lines():
        complete = server_log.read_bytes().split(b"\n")[:-1]  # a line being written has no newline yet
        return [orjson.loads(line) for line in complete if line.startswith(b"{")]

    # the server writes its lines as it goes: wait for this request's
    assert eventually(lambda: any(r.get("request_id") == "ca-loop-7" for r in lines())), lines()
    (access,) = [r for r in lines() if r.get("request_id") == "ca-loop-7"]
    assert (access["pod"], access["verdict"], access["status"]) == ("default/trainer", "fit 1/2", 200)
    assert access["logger"] == "hami_sim.access" and access["level"] == "INFO"
    assert not [ln for ln in server_log.read_bytes().splitlines() if ln.strip() and not ln.startswith(b"{")]


def test_a_certificate_from_the_same_ca_for_somebody_else_is_refused_per_request(
    pki, extender_server, tmp_path
):
    """The handshake only proves "signed by the CA"; the CN/SAN allow-list
    (HAMI_SIM_CLIENT_IDENTITIES) decides who that is. Probes stay reachable for the kubelet."""
    url, _ = extender_server
    intruder = pki.ca.issue_cert("someone-else.default.svc")
    pem = tmp_path / "intruder.pem"
    pem.write_bytes(intruder.private_key_and_cert_chain_pem.bytes())
    status, body, _ = _request(url, _context(pki, str(pem)), "POST", "/filter-simulation", BODY)
    assert status == 403 and "HAMI_SIM_CLIENT_IDENTITIES" in orjson.loads(body)["error"]
    status, _, _ = _request(url, _context(pki, str(pem)), "GET", "/healthz")
    assert status == 200
    status, body, _ = _request(url, _context(pki, pki.client_pem), "POST", "/filter-simulation", BODY)
    assert status == 200 and orjson.loads(body)["Error"] == ""

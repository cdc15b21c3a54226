"""Who may read the dashboard and the REST API in production, and how it is exposed at an external
name: ``deploy/production`` refuses anonymous reads, the web pods admit only the ingress controller
and Prometheus, and ``deploy/ingress-example`` (ingress-nginx re-encrypting to the web listener) is
wired to what the settings and the docs say.
"""

from __future__ import annotations

import http.client
import shutil
import subprocess
from urllib.parse import urlsplit

import orjson
import pytest
import yaml
from django.contrib.auth import get_user_model
from django.test import Client

from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import DEPLOY, REPO
from tests.deploy.test_manifests import _allowed
from tests.factories.models import TokenFactory

INGRESS_NGINX = (
    {"kubernetes.io/metadata.name": "ingress-nginx"},
    {"app.kubernetes.io/name": "ingress-nginx"},
)
PROMETHEUS = ({"kubernetes.io/metadata.name": "monitoring"}, {"app.kubernetes.io/name": "prometheus"})


def _render(name: str) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    result = subprocess.run(
        [kubectl, "kustomize", str(DEPLOY / name)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module")
def production() -> list[dict]:
    return _render("production")


@pytest.fixture(scope="module")
def ingress_example() -> list[dict]:
    return _render("ingress-example")


def _one(objects: list[dict], kind: str, prefix: str) -> dict:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"].startswith(prefix)]
    return found


def _config(objects: list[dict]) -> dict[str, str]:
    return _one(objects, "ConfigMap", "hami-sim-config-")["data"]


def _web_labels(objects: list[dict]) -> dict:
    return _one(objects, "Deployment", "hami-sim-web")["spec"]["template"]["metadata"]["labels"]


# -- reads need a login or a token -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_production_refuses_anonymous_reads_and_serves_a_token(production, server_database_url):
    """The production ConfigMap's setting, given to the real server: an anonymous read is refused,
    the same read with a token answers."""
    config = _config(production)
    assert config["API_REQUIRE_AUTH_FOR_READS"] == "true"
    token = TokenFactory(user__username="reader")
    env = {
        "DATABASE_URL": server_database_url,
        "HAMI_SIM_LISTENER": "all",
        "LOG_LEVEL": "ERROR",
        "API_REQUIRE_AUTH_FOR_READS": config["API_REQUIRE_AUTH_FOR_READS"],
    }
    proc, url = start_server(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def get(path: str, **headers: str) -> tuple[int, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=30)
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, orjson.loads(response.read())

    try:
        for path in ("/api/v1/node-groups/", "/api/v1/decisions/"):
            status, body = get(path)
            assert status in (401, 403) and "detail" in body, path
        assert get("/api/v1/node-groups/", Authorization=f"Token {token.key}")[0] == 200
    finally:
        stop_server(proc)


@pytest.mark.parametrize(
    "source,admitted",
    [
        (INGRESS_NGINX, True),
        (PROMETHEUS, True),
        (({"kubernetes.io/metadata.name": "team-a"}, {"app": "curl"}), False),  # any other pod
        (({"kubernetes.io/metadata.name": "team-a"}, INGRESS_NGINX[1]), False),  # the label elsewhere
        (({"kubernetes.io/metadata.name": "hami-sim"}, {"app.kubernetes.io/component": "worker"}), False),
        (({"kubernetes.io/metadata.name": "ingress-nginx"}, {"app": "something-else"}), False),
    ],
)
def test_the_web_pods_admit_only_the_ingress_controller_and_prometheus(production, source, admitted):
    policies = [o for o in production if o["kind"] == "NetworkPolicy"]
    namespace, pod = source
    assert _allowed(policies, _web_labels(production), 8080, namespace, pod) is admitted


# -- the Ingress example ------------------------------------------------------------------------------------
def test_the_ingress_reencrypts_to_the_web_services_tls_port(ingress_example):
    ingress = _one(ingress_example, "Ingress", "hami-sim-web")
    assert ingress["metadata"]["namespace"] == "hami-sim"
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/backend-protocol"] == "HTTPS"
    assert notes["nginx.ingress.kubernetes.io/proxy-ssl-verify"] == "on"
    (path,) = ingress["spec"]["rules"][0]["http"]["paths"]
    backend = path["backend"]["service"]
    service = _one(ingress_example, "Service", backend["name"])
    (port,) = [p for p in service["spec"]["ports"] if p["name"] == backend["port"]["name"]]
    assert port["name"] == "https"
    # the pods behind that port serve TLS on it: the container listening there (nginx) has a certificate
    web = _one(ingress_example, "Deployment", "hami-sim-web")["spec"]["template"]["spec"]
    container = next(
        c for c in web["containers"] if any(p.get("name") == port["targetPort"] for p in c.get("ports", []))
    )
    assert "/etc/hami-sim/tls" in {m["mountPath"] for m in container.get("volumeMounts", [])}


def test_the_ingress_verifies_the_web_certificate_with_a_documented_ca(ingress_example):
    notes = _one(ingress_example, "Ingress", "hami-sim-web")["metadata"]["annotations"]
    namespace, secret = notes["nginx.ingress.kubernetes.io/proxy-ssl-secret"].split("/")
    assert namespace == "hami-sim"
    steps = (REPO / "docs" / "production.md").read_text()
    assert f"-n hami-sim create secret generic {secret} " in steps
    certificate = yaml.safe_load_all((DEPLOY / "cert-manager" / "certificates.yaml").read_text())
    web_names = next(c for c in certificate if c["metadata"]["name"] == "hami-sim-server")["spec"]["dnsNames"]
    assert notes["nginx.ingress.kubernetes.io/proxy-ssl-name"] in web_names
    assert notes["nginx.ingress.kubernetes.io/proxy-ssl-server-name"] == "on"


def test_the_ingress_controller_is_admitted_and_the_external_name_allowed(ingress_example, production):
    ingress = _one(ingress_example, "Ingress", "hami-sim-web")
    policies = [o for o in ingress_example if o["kind"] == "NetworkPolicy"]
    assert _allowed(policies, _web_labels(ingress_example), 8080, *INGRESS_NGINX)
    (host,) = [rule["host"] for rule in ingress["spec"]["rules"]]
    assert ingress["spec"]["tls"][0]["hosts"] == [host]
    config = _config(ingress_example)
    allowed = config["ALLOWED_HOSTS"].split(",")
    assert host in allowed
    assert set(_config(production)["ALLOWED_HOSTS"].split(",")) <= set(allowed)  # in-cluster names kept
    assert config["CSRF_TRUSTED_ORIGINS"].split(",") == [f"https://{host}"]
    assert config["API_REQUIRE_AUTH_FOR_READS"] == "true"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "host,origin,expected",
    [
        ("hami-sim.example.com", "https://hami-sim.example.com", 302),  # logged in
        ("hami-sim.example.com", "https://evil.example.net", 403),  # CSRF origin check
        ("evil.example.net", "https://evil.example.net", 400),  # Host not allowed
    ],
)
def test_a_browser_logs_in_through_the_external_name(ingress_example, settings, host, origin, expected):
    """The overlay's ALLOWED_HOSTS and CSRF_TRUSTED_ORIGINS, as Django applies them to a login POST
    arriving through the controller (TLS to the web listener, the browser's Host and Origin)."""
    config = _config(ingress_example)
    settings.ALLOWED_HOSTS = config["ALLOWED_HOSTS"].split(",")
    settings.CSRF_TRUSTED_ORIGINS = config["CSRF_TRUSTED_ORIGINS"].split(",")
    get_user_model().objects.create_user("operator", password="a-long-password-1", is_staff=True)
    browser = Client(enforce_csrf_checks=True)
    external = urlsplit(config["CSRF_TRUSTED_ORIGINS"]).hostname
    page = browser.get("/admin/login/", HTTP_HOST=external, secure=True)
    assert page.status_code == 200
    response = browser.post(
        "/admin/login/",
        {
            "username": "operator",
            "password": "a-long-password-1",
            "csrfmiddlewaretoken": page.context["csrf_token"],
        },
        HTTP_HOST=host,
        HTTP_ORIGIN=origin,
        secure=True,
    )
    assert response.status_code == expected

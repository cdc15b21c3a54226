"""Estimates cannot starve health checks or other users of a web process.

Two estimates from one read-only token held the web listener about 20 s and ``/healthz`` answered
after 19.97 s. Now a process runs at most ``ESTIMATE_MAX_CONCURRENT`` estimates (the API and the
what-if page), one per identity, refusing more at once (429 for the caller's second, 503 when others
hold the process's), and the web listener has threads to spare for everything else
(``deploy/base/web.yaml``: ``HAMI_SIM_THREADS`` above the estimate limit).
"""

# ruff: noqa: F811 -- server_database_url is a fixture imported by name
from __future__ import annotations

import http.client
import ssl
import subprocess
import threading

import orjson
import pytest

from hami_sim.project.concurrency import ESTIMATES
from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import Pki, server_database_url  # noqa: F401 (a fixture, used by name)
from tests.factories import gpu, node, pod
from tests.factories.models import TokenFactory, UserFactory

from .test_closed_by_default_server import _token_in
from .test_container_limits import SETTINGS, deployed

TEMPLATE = node("template-node-for-a10-x1", [gpu("GPU-a"), gpu("GPU-b", index=1)])
SMALL = orjson.dumps(
    {
        "pods": [{"pod": pod("one", gpumem=1000), "count": 1}],
        "nodeGroups": [{"name": "g", "template": TEMPLATE}],
    }
)


def heavy_estimate() -> bytes:
    """Seconds of packing on one thread: 3,000 pods that share nothing, over 100 node groups."""
    groups = [{"name": f"g{i}", "template": TEMPLATE} for i in range(100)]
    pods = [{"pod": pod(f"e{j}", gpumem=1000 + j, uid=f"u{j}"), "count": 1} for j in range(3000)]
    return orjson.dumps({"pods": pods, "nodeGroups": groups})


# -- the gate, in process ------------------------------------------------------------------------------------
@pytest.fixture
def token_client(db, client):
    """A client with a read-only user's API token; returns (client, the identity it acts as)."""
    token = TokenFactory(user=UserFactory(username="reader"))
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {token.key}"
    return client, "user:reader"


@pytest.mark.api
@pytest.mark.parametrize(
    ("holder", "status", "words"),
    [
        ("user:reader", 429, "still running"),  # the caller's own estimate is running
        ("user:someone-else", 503, "ESTIMATE_MAX_CONCURRENT"),  # the process's one is taken
    ],
)
def test_an_estimate_beyond_the_limits_is_refused_at_once(token_client, holder, status, words):
    client, _identity = token_client
    with ESTIMATES.slot(holder):
        response = client.post("/api/v1/estimate", SMALL, content_type="application/json")
        assert response.status_code == status
        assert words in response.json()["detail"] and int(response["Retry-After"]) > 0
        assert client.get("/healthz").status_code == 200
    assert client.post("/api/v1/estimate", SMALL, content_type="application/json").status_code == 200


@pytest.mark.api
def test_the_what_if_page_shares_the_limit(db, client):
    from decisions.forms import EXAMPLE_POD
    from tests.factories.models import NodeGroupFactory
    from tests.profiles.conftest import A10

    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    user = UserFactory(username="oncall", password="pw-oncall", is_staff=True)
    client.force_login(user)
    form = {"pod": EXAMPLE_POD, "count": 2, "groups": [group.name], "expander": "least-waste"}
    with ESTIMATES.slot("user:oncall"):
        busy = client.post("/what-if/", form)
        assert busy.status_code == 429 and "still running" in busy.content.decode()
    assert client.post("/what-if/", form).status_code == 200


# -- the web listener as deployed ------------------------------------------------------------------------------
@pytest.mark.slow
def test_health_checks_and_other_users_are_answered_while_an_estimate_runs(
    tmp_path, transactional_db, server_database_url
):
    web = deployed("hami-sim-web", "web")
    threads = int(web["env"]["HAMI_SIM_THREADS"])
    assert threads > int(web["env"].get("ESTIMATE_MAX_CONCURRENT", "1"))
    first, second = _token_in(server_database_url), _token_in(server_database_url)
    pki = Pki(tmp_path)
    env = {
        **SETTINGS,
        "DATABASE_URL": server_database_url,
        "HAMI_SIM_LISTENER": "web",
        "HAMI_SIM_THREADS": str(threads),
    }
    proc, url = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        env=env,
        workers=1,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port = int(url.rsplit(":", 1)[1])
    ctx = ssl.create_default_context(cafile=pki.ca_cert)

    def call(method: str, path: str, body: bytes | None = None, token: str = "") -> int:
        conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=120)  # a hang detector
        headers = {
            "Content-Type": "application/json",
            **({"Authorization": f"Token {token}"} if token else {}),
        }
        try:
            conn.request(method, path, body, headers)
            response = conn.getresponse()
            response.read()
            return response.status
        finally:
            conn.close()

    try:
        assert call("POST", "/api/v1/estimate", SMALL, first) == 200  # warm
        running = threading.Thread(target=call, args=("POST", "/api/v1/estimate", heavy_estimate(), first))
        running.start()
        # the heavy estimate holds its slot once the caller's next one is refused (before: it ran)
        while call("POST", "/api/v1/estimate", SMALL, first) != 429:
            assert running.is_alive(), "the heavy estimate ended before it was seen running"
        assert call("GET", "/healthz") == 200
        assert call("POST", "/api/v1/estimate", SMALL, second) == 503  # the process's one is taken
        assert call("GET", "/api/v1/node-groups/", None, second) == 200  # other requests answered
        assert running.is_alive(), "the estimate ended first: the test proved nothing"
        running.join(120)
        assert call("POST", "/api/v1/estimate", SMALL, second) == 200
    finally:
        stop_server(proc)

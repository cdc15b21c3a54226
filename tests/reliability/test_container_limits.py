"""Every process stays inside its container's memory limit in ``deploy/production`` under the probes.

The limits, workers and body limits come from the rendered ``deploy/production`` manifest; each
probe runs against ``python -m hami_sim.server.serve`` with production settings (TLS, a real secret key,
DEBUG off, PostgreSQL or a migrated SQLite file, decision recording on) and reads each process's
peak resident memory (``VmHWM`` in ``/proc``: what the kernel's memory limit compares against):

(a) the web listener, a token of a user with no permissions sending the heaviest requests it can:
    estimates at the work budget (whose answers exceed ``MAX_ANSWER_BYTES``), filter bodies at the
    listener's body limit, eight of them at once, list pages at the maximum page size, session reads.
    Each worker stays under its share of the web container's limit (limit / ``HAMI_SIM_WORKERS``).
(b) the extender listener (mTLS, CA's certificate), 300 calls with 1 MiB annotations from eight
    clients while every database round trip takes 0.2 s more (a TCP proxy in front of PostgreSQL):
    the decision writer falls behind and its queue is bounded in bytes; the worker stays under its share.
(c) the gunicorn master of both: a few tens of MiB, not growing with the traffic; master plus every
    worker at the measured peak fits the container.

Reported before: an estimate inside the budget answered 162 MiB and a no-permission token pushed a web
worker to 1,393 MiB (limit 768 Mi); 300 calls with 1 MiB annotations took an extender worker to 417
MiB with the database slow. The expander's bounds are checked here against the manifest; its memory
under four large concurrent requests is ``tests/reliability/test_expander_limits.py``'s.
"""

from __future__ import annotations

import http.client
import os
import shutil
import ssl
import subprocess
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
import yaml

from hami_sim.engine.quantity import parse_quantity
from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import REPO, Pki, server_database_url  # noqa: F401 (a fixture, used by name)
from tests.factories import extender_args, gpu, node, pod
from tests.loadgen import children

from .tcpproxy import TcpProxy
from .test_closed_by_default_server import _token_in

MiB = 1 << 20
SETTINGS = {
    "SECRET_KEY": "test-" + "k" * 60,
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "HAMI_SIM_CLIENT_IDENTITIES": "cluster-autoscaler.kube-system",
    "HAMI_SIM_HTTPS": "true",
    "DECISION_RECORDING": "async",
    "LOG_LEVEL": "ERROR",
}


# -- what deploy/production gives each container ---------------------------------------------------------
def _rendered() -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is required on CI (it renders deploy/ kustomizations)")
        pytest.skip("kubectl is not installed")
    out = subprocess.run(
        [kubectl, "kustomize", str(REPO / "deploy" / "production")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return [o for o in yaml.safe_load_all(out) if o]


def deployed(deployment: str, container: str) -> dict:
    """The container's memory limit (bytes) and environment (the ConfigMap, then its own values)."""
    objects = _rendered()
    spec = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == deployment)
    (found,) = [c for c in spec["spec"]["template"]["spec"]["containers"] if c["name"] == container]
    env: dict[str, str] = {}
    for source in found.get("envFrom", []):
        name = source["configMapRef"]["name"]
        env.update(
            next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name)["data"]
        )
    env.update({e["name"]: e["value"] for e in found.get("env", []) if "value" in e})
    return {
        "limit": int(parse_quantity(found["resources"]["limits"]["memory"])),
        "env": env,
        "command": found.get("command", []),
    }


def peak_mib(pid: int) -> dict[int, float]:
    """``VmHWM`` (peak RSS, MiB) of a gunicorn master and each of its workers."""
    out = {}
    for p in [pid, *children(pid)]:
        status = Path(f"/proc/{p}/status").read_text()
        (line,) = [x for x in status.splitlines() if x.startswith("VmHWM:")]
        out[p] = int(line.split()[1]) / 1024
    return out


def _within(pid: int, limit: int, workers: int, master_before: float) -> tuple[float, float]:
    """Assert (b)/(a) and (c); returns (worker peak, master peak) in MiB."""
    peaks = peak_mib(pid)
    master = peaks.pop(pid)
    worker = max(peaks.values())
    share = limit / workers / MiB
    print(
        f"worker peak {worker:.0f} MiB (share {share:.0f} MiB), master {master_before:.0f} -> {master:.0f} MiB"
    )
    assert worker < share
    assert master < 64 and master - master_before < 8  # the master serves no request
    assert master + workers * worker < limit / MiB
    return worker, master


def _post_many(call, bodies: list[bytes], clients: int) -> list[int]:
    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(call, bodies))


# -- (a) the web listener and a token with no permissions -------------------------------------------------
def _big_filter_body(limit: int) -> bytes:
    """A filter request just under ``limit`` bytes: 8-GPU template nodes (whose answer echoes them)."""
    one = len(extender_args(pod("p", gpumem=1000), [node("template-node-for-x-0", [gpu("GPU-0")] * 8)]))
    count = int(limit * 0.9) // one
    nodes = [
        node(f"template-node-for-x-{i}", [gpu(f"GPU-{i}-{g}", index=g) for g in range(8)])
        for i in range(count)
    ]
    body = extender_args(pod("p", gpumem=1000, uid=str(uuid.uuid4())), nodes)
    assert limit * 0.5 < len(body) < limit
    return body


def _estimate_at_the_budget() -> bytes:
    template = node("template-node-for-a10-x1", [gpu("GPU-a"), gpu("GPU-b", index=1)])
    groups = [{"name": f"g{i}", "template": template} for i in range(100)]
    pods = [{"pod": pod(f"e{j}", gpumem=20000 + j), "count": 1000} for j in range(10)]  # 10,000 x 100
    return orjson.dumps({"pods": pods, "nodeGroups": groups})


@pytest.mark.slow
def test_a_token_with_no_permissions_keeps_a_web_worker_under_its_share(
    tmp_path,
    transactional_db,
    server_database_url,  # noqa: F811 (the imported fixture)
):
    web = deployed("hami-sim-web", "web")
    workers = int(web["env"]["HAMI_SIM_WORKERS"])
    body_limit = int(web["env"]["EXTENDER_MAX_BODY_BYTES"])
    token = _token_in(server_database_url)
    pki = Pki(tmp_path)
    env = {
        **SETTINGS,
        "DATABASE_URL": server_database_url,
        "HAMI_SIM_LISTENER": "web",
        "EXTENDER_MAX_BODY_BYTES": str(body_limit),
        "DATA_UPLOAD_MAX_MEMORY_SIZE": web["env"]["DATA_UPLOAD_MAX_MEMORY_SIZE"],
        "HAMI_SIM_THREADS": web["env"].get("HAMI_SIM_THREADS", ""),
        "API_THROTTLE_USER": "100000/min",  # the probe measures memory, not the throttle
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
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def call(method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=120)  # a hang detector
        try:
            conn.request(method, path, body, headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    try:
        assert call("GET", "/api/v1/sessions")[0] == 200  # warm
        master_before = peak_mib(proc.pid)[proc.pid]
        status, answer = call("POST", "/api/v1/estimate", _estimate_at_the_budget())
        assert status == 413 and b"MAX_ANSWER_BYTES" in answer  # refused before it was all built
        big = _big_filter_body(body_limit)
        assert _post_many(lambda b: call("POST", "/filter-simulation", b)[0], [big] * 8, 8) == [200] * 8
        session = orjson.loads(call("POST", "/api/v1/sessions", b'{"name": "heavy"}')[1])["id"]
        for i in range(50):
            template = node(f"template-node-for-a10-{i}", [gpu(f"GPU-{i}-a"), gpu(f"GPU-{i}-b", index=1)])
            placed = {"pod": pod(f"s{i}", gpumem=1000, uid=f"uid-s{i}"), "node": template}
            assert call("POST", f"/api/v1/sessions/{session}/placements", orjson.dumps(placed))[0] in (
                200,
                201,
            )
        for path in (
            f"/api/v1/sessions/{session}",
            "/api/v1/decisions/?limit=1000000",
            "/api/v1/sessions?limit=500",
        ):
            assert [call("GET", path)[0] for _ in range(5)] == [200] * 5, path
        _within(proc.pid, web["limit"], workers, master_before)
    finally:
        stop_server(proc)


# -- (b) the extender listener, CA's calls with 1 MiB annotations, the database slow ---------------------
def _annotated_call(i: int) -> bytes:
    nodes = [
        node(f"template-node-for-y-{i}-{n}", [gpu(f"GPU-{i}-{n}-{g}", index=g) for g in range(4)])
        for n in range(4)
    ]
    nodes[0]["metadata"]["annotations"]["example.com/big"] = "a" * MiB  # 1 MiB, not HAMi's
    return extender_args(pod(f"p{i}", gpumem=1000, uid=str(uuid.uuid4())), nodes)


@pytest.mark.slow
def test_large_annotations_with_a_slow_database_keep_an_extender_worker_under_its_share(
    tmp_path,
    transactional_db,
    server_database_url,  # noqa: F811 (the imported fixture)
):
    if not server_database_url.startswith("postgres"):
        pytest.skip("needs PostgreSQL (the TCP proxy slows its connections)")
    extender = deployed("hami-sim-extender", "extender")
    workers = int(extender["env"]["HAMI_SIM_WORKERS"])
    url = urlsplit(server_database_url)
    proxy = TcpProxy((url.hostname or "127.0.0.1", url.port or 5432))
    proxied = url._replace(netloc=f"{url.username}@127.0.0.1:{proxy.port}").geturl()
    pki = Pki(tmp_path)
    env = {
        **SETTINGS,
        "DATABASE_URL": proxied,
        "HAMI_SIM_LISTENER": "extender",
        "EXTENDER_MAX_BODY_BYTES": extender["env"]["EXTENDER_MAX_BODY_BYTES"],
        "HAMI_SIM_THREADS": extender["env"].get("HAMI_SIM_THREADS", ""),
        "HAMI_SIM_CACHE_BYTES": extender["env"].get("HAMI_SIM_CACHE_BYTES", ""),
    }
    proc, base = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        client_ca=pki.ca_cert,
        env=env,
        workers=1,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port = int(base.rsplit(":", 1)[1])
    ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ctx.load_cert_chain(pki.client_pem)
    local = threading.local()

    def call(body: bytes) -> int:
        if getattr(local, "conn", None) is None:
            local.conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=120)
        local.conn.request("POST", "/filter-simulation", body, {"Content-Type": "application/json"})
        response = local.conn.getresponse()
        answer = orjson.loads(response.read())
        return response.status if not answer.get("Error") else 500

    try:
        assert call(_annotated_call(-1)) == 200  # warm
        master_before = peak_mib(proc.pid)[proc.pid]
        proxy.latency = 0.2
        statuses = _post_many(call, [_annotated_call(i) for i in range(300)], 8)
        assert statuses == [200] * 300
        _within(proc.pid, extender["limit"], workers, master_before)
    finally:
        proxy.latency = 0
        stop_server(proc)
        proxy.close()


# -- the gRPC expander: bounds set for its limit ----------------------------------------------------------
def test_the_expanders_bounds_fit_its_container():
    """Two calls and 64 MiB of requests in work at once peak at ~540 MiB (tests/reliability/test_expander_limits.py):
    the production overlay keeps those bounds, under a 1Gi limit, with its metrics served."""
    expander = deployed("hami-sim-expander", "expander")
    env = expander["env"]
    inflight, request = int(env["EXPANDER_MAX_INFLIGHT_BYTES"]), int(env["EXPANDER_MAX_REQUEST_BYTES"])
    assert int(env["EXPANDER_MAX_CONCURRENT"]) <= 2 and inflight <= 64 * MiB and request <= inflight
    assert expander["limit"] >= 1024 * MiB
    assert "--metrics-bind=0.0.0.0:9100" in expander["command"]

"""A stream of unique large inventories keeps an extender worker under its share of the
``deploy/`` memory limit.

CA's templates come and go (new node names, new device UUIDs); each unseen 8-GPU inventory is parsed
and memoised. The memos are bounded in bytes (``HAMI_SIM_CACHE_BYTES``, ``hami_sim/engine/cache.py``),
so a worker's memory must level off below what the extender container may use per worker: the memory
limit written in ``deploy/production`` divided by the ``HAMI_SIM_WORKERS`` it runs. The server is the
production extender listener (gunicorn, mTLS) with the settings of the rendered manifest, decision
recording on; the inventories streamed alone are more than the whole memo budget holds.
The RSS read is the worker's ``VmRSS`` from ``/proc``; nothing is timed.
"""

from __future__ import annotations

import http.client
import os
import shutil
import ssl
import subprocess
import uuid

import orjson
import pytest
import yaml

from hami_sim.engine.cache import DEFAULT_CACHE_BYTES
from hami_sim.engine.quantity import parse_quantity
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import REPO, Pki, server_database_url  # noqa: F401 (a fixture, used by name)
from tests.factories import extender_args, gpu, node, pod
from tests.loadgen import server_rss_kib

pytestmark = [pytest.mark.slow]

CALLS = 1250
NODES_PER_CALL = 48  # 60,000 new 8-GPU inventories in all
SAMPLES = 16
GROWTH_BOUND = 0.05  # of the worker's share: what the last quarter of the stream may still add


def _extender_settings() -> dict:
    """What ``deploy/production`` gives the extender container: its memory limit (bytes), its workers
    and threads, and the memo budget (the container's env, then the ConfigMap, then the default)."""
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
    objects = [o for o in yaml.safe_load_all(out) if o]
    deployment = next(
        o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "hami-sim-extender"
    )
    (container,) = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "extender"
    ]
    config_name = container["envFrom"][0]["configMapRef"]["name"]
    config = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == config_name)
    env = {**config["data"], **{e["name"]: e["value"] for e in container["env"] if "value" in e}}
    return {
        "limit": int(parse_quantity(container["resources"]["limits"]["memory"])),
        "workers": int(env["HAMI_SIM_WORKERS"]),
        "threads": env.get("HAMI_SIM_THREADS", ""),
        "cache_bytes": env.get("HAMI_SIM_CACHE_BYTES", ""),
    }


def _new_template_nodes(count: int) -> list[dict]:
    """8-GPU A100 template nodes CA has never sent before: new names, new device UUIDs."""
    out = []
    for _ in range(count):
        name = f"template-node-for-gpu-a100-{uuid.uuid4().hex[:12]}"
        devices = [
            gpu(f"GPU-{uuid.uuid4()}", index=g, devmem=81920, type="NVIDIA A100-SXM4-80GB", numa=g // 4)
            for g in range(8)
        ]
        out.append(node(name, devices))
    return out


def _worker_rss_bytes(master_pid: int) -> int:
    (worker,) = [rss for pid, rss in server_rss_kib(master_pid).items() if pid != master_pid]
    return worker * 1024


def test_unique_inventories_keep_a_worker_under_its_share_of_the_memory_limit(
    tmp_path,
    transactional_db,
    server_database_url,  # noqa: F811 (the imported fixture)
):
    deployed = _extender_settings()
    share = deployed["limit"] // deployed["workers"]
    budget = int(deployed["cache_bytes"] or DEFAULT_CACHE_BYTES)
    pki = Pki(tmp_path)
    env = {
        "DATABASE_URL": server_database_url,
        "HAMI_SIM_LISTENER": "extender",
        "SECRET_KEY": "test-" + "k" * 60,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "HAMI_SIM_CLIENT_IDENTITIES": "cluster-autoscaler.kube-system",
        "HAMI_SIM_HTTPS": "true",
        "HAMI_SIM_THREADS": deployed["threads"],
        "HAMI_SIM_CACHE_BYTES": deployed["cache_bytes"],
        "LOG_LEVEL": "WARNING",
        # Decision recording on, as deployed: every call is a new question (a new pod uid), so the
        # writer's queue fills to its byte bound (DECISION_QUEUE_MAX_BYTES) when the database is
        # slower than the stream, and drops beyond it: memory still levels off.
        "DECISION_RECORDING": "async",
    }
    proc, url = start_server(
        cert=pki.server_cert,
        key=pki.server_key,
        client_ca=pki.ca_cert,
        workers=1,  # one worker, measured against one worker's share
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ctx = ssl.create_default_context(cafile=pki.ca_cert)
    ctx.load_cert_chain(pki.client_pem)
    conn = http.client.HTTPSConnection("localhost", int(url.rsplit(":", 1)[1]), context=ctx, timeout=60)
    samples: list[int] = []
    try:
        the_pod = pod("trainer", gpu_count=1, gpumem=4000, gpucores=20, namespace="ml")
        for call in range(CALLS):
            nodes = _new_template_nodes(NODES_PER_CALL)
            body = extender_args(
                {**the_pod, "metadata": {**the_pod["metadata"], "uid": str(uuid.uuid4())}}, nodes
            )
            conn.request("POST", "/filter-simulation", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            answer = orjson.loads(response.read())
            assert response.status == 200 and not answer.get("Error"), answer
            assert len(answer["Nodes"]["items"]) == NODES_PER_CALL  # every new node fits: real work
            if (call + 1) % (CALLS // SAMPLES) == 0:
                samples.append(_worker_rss_bytes(proc.pid))
    finally:
        conn.close()
        stop_server(proc)
    mib = [round(s / 2**20, 1) for s in samples]
    print(f"worker VmRSS MiB every {CALLS // SAMPLES} calls: {mib}; share {share / 2**20:.0f} MiB")
    # what the memos would hold if nothing were evicted: more than their whole budget (each new
    # node's inventory as the memo charges it; its bytes in the node-bytes memo come on top)
    roomy = Simulator(EngineConfig(cache_bytes=1 << 30))
    first, second = _new_template_nodes(2)
    roomy.annotation_inventory(first)
    before = roomy.cache.lru.bytes
    roomy.annotation_inventory(second)
    inventory = roomy.cache.lru.bytes - before  # (a node of a known template, as all but the first)
    assert CALLS * NODES_PER_CALL * inventory > budget
    assert max(samples) < share, mib
    last_quarter = samples[-1] - samples[(3 * SAMPLES) // 4 - 1]
    assert last_quarter < GROWTH_BOUND * share, mib

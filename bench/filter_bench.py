"""Benchmark of /filter-simulation (issue 2). Prints ratios against the floors; never run by tests.

ratio_large: server-side time to answer 1 pod x 1,000 template nodes x 8 GPUs (realistic ~2.5 KB Node
JSON) divided by ``orjson.loads(body) + orjson.dumps(nodes)`` (what any implementation must pay).
Reported cold (fresh process caches) and warm (CA asks the same question every loop; parsed
inventories and zero-usage verdicts are memoised by content digest). Target: <= 2.0 (warm).

ratio_small: median latency of 1 pod x 1 node over real HTTP to the production server (gunicorn,
keep-alive) divided by the median latency of a trivial endpoint on the same server returning a fixed
4 KB JSON. Target: <= 1.5.

Run: ``make bench`` (or ``PYTHONPATH=. .venv/bin/python bench/filter_bench.py``).
"""

from __future__ import annotations

import http.client
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_node(i: int, gpus: int = 8) -> dict:
    devices = [
        {
            "id": f"GPU-{i:04d}{g:02d}aa-bbbb-cccc-dddd-{i:06d}{g:06d}",
            "index": g,
            "count": 10,
            "devmem": 81920,
            "devcore": 100,
            "type": "NVIDIA A100-SXM4-80GB",
            "numa": g // 4,
            "mode": "hami-core",
            "health": True,
        }
        for g in range(gpus)
    ]
    for d in devices:
        if d["index"] == 0:
            del d["index"]
        if d["numa"] == 0:
            del d["numa"]
    name = f"template-node-for-gpu-a100-{i:05d}"
    return {
        "metadata": {
            "name": name,
            "uid": f"0000{i:04d}-1111-2222-3333-444455556666",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "p4de.24xlarge",
                "topology.kubernetes.io/region": "us-west-2",
                "topology.kubernetes.io/zone": "us-west-2a",
                "eks.amazonaws.com/nodegroup": "gpu-a100",
                "nvidia.com/gpu.present": "true",
                "gpu": "on",
            },
            "annotations": {
                "hami.io/node-nvidia-register": orjson.dumps(devices).decode(),
                "node.alpha.kubernetes.io/ttl": "0",
            },
        },
        "spec": {
            "providerID": f"aws:///us-west-2a/i-0{i:016x}",
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        },
        "status": {
            "capacity": {
                "cpu": "96",
                "memory": "1152Gi",
                "pods": "110",
                "ephemeral-storage": "500Gi",
                "nvidia.com/gpu": "80",
            },
            "allocatable": {
                "cpu": "95690m",
                "memory": "1130Gi",
                "pods": "110",
                "ephemeral-storage": "450Gi",
                "nvidia.com/gpu": "80",
            },
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.32.1",
                "containerRuntimeVersion": "containerd://1.7.25",
                "osImage": "Amazon Linux 2023",
            },
        },
    }


def make_pod(mem: int = 20000) -> dict:
    return {
        "metadata": {"name": "trainer-0", "namespace": "ml", "uid": "a1b2c3d4-0000-1111-2222-333344445555"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/pytorch:24.01-py3",
                    "resources": {
                        "limits": {
                            "nvidia.com/gpu": "2",
                            "nvidia.com/gpumem": str(mem),
                            "nvidia.com/gpucores": "30",
                        },
                        "requests": {"cpu": "4", "memory": "16Gi"},
                    },
                }
            ],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


def body_for(nodes: list[dict], pod: dict) -> bytes:
    return orjson.dumps({"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None})


def bench_large(n_nodes: int = 1000, rounds: int = 15) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.settings")
    os.environ.setdefault("HAMI_INVENTORY_RESOLVER", "")
    import django

    django.setup()
    from hami_sim.runtime.simulator import get_simulator
    from simulations.api.views import run_filter

    nodes = [make_node(i) for i in range(n_nodes)]
    body = body_for(nodes, make_pod())
    floor_times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        parsed = orjson.loads(body)
        orjson.dumps(parsed["Nodes"]["items"])
        floor_times.append(time.perf_counter() - t0)
    floor = statistics.median(floor_times)

    cold_times = []
    for _ in range(5):
        get_simulator().clear_caches()
        t0 = time.perf_counter()
        out, _ = run_filter(body)
        cold_times.append(time.perf_counter() - t0)
    answer = orjson.loads(out)
    assert len(answer["Nodes"]["items"]) == n_nodes, answer["Error"] or answer["FailedNodes"]
    warm_times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        run_filter(body)
        warm_times.append(time.perf_counter() - t0)
    cold, warm = statistics.median(cold_times), statistics.median(warm_times)
    return {
        "body_bytes": len(body),
        "bytes_per_node": len(body) // n_nodes,
        "floor_ms": floor * 1000,
        "cold_ms": cold * 1000,
        "warm_ms": warm * 1000,
        "ratio_large_cold": cold / floor,
        "ratio_large": warm / floor,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def _latencies(
    conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None, n: int
) -> list[float]:
    headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        out.append(time.perf_counter() - t0)
        assert resp.status == 200, resp.status
    return out


def bench_small(n: int = 2000) -> dict:
    port = _free_port()
    tmp = tempfile.mkdtemp(prefix="hami-sim-bench-")
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        HAMI_SIM_VAR_DIR=tmp,
        HAMI_SIM_BENCH_ENDPOINT="1",
        DATABASE_URL=os.environ.get("BENCH_DATABASE_URL", f"sqlite:///{tmp}/bench.db"),
        LOG_LEVEL="WARNING",
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "hami_sim.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--worker-class",
        "gthread",
        "--workers",
        "1",
        "--threads",
        "2",
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    try:
        _wait(port)
        small = body_for([make_node(0)], make_pod())
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        _latencies(conn, "POST", "/filter-simulation", small, 200)  # warm up
        _latencies(conn, "GET", "/bench/fixed-4k", None, 200)
        filt, triv = [], []
        for _ in range(10):  # interleave so both see the same machine load
            filt += _latencies(conn, "POST", "/filter-simulation", small, n // 10)
            triv += _latencies(conn, "GET", "/bench/fixed-4k", None, n // 10)
        f_med, t_med = statistics.median(filt), statistics.median(triv)
        return {
            "small_filter_median_ms": f_med * 1000,
            "small_filter_p99_ms": sorted(filt)[int(len(filt) * 0.99)] * 1000,
            "trivial_4k_median_ms": t_med * 1000,
            "ratio_small": f_med / t_med,
        }
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    large = bench_large()
    small = bench_small()
    peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"large: {large['body_bytes'] / 1e6:.1f} MB body, {large['bytes_per_node']} B/node")
    print(f"floor (orjson loads+dumps) median: {large['floor_ms']:.2f} ms")
    print(
        f"server-side cold median:           {large['cold_ms']:.2f} ms  ratio_large_cold = {large['ratio_large_cold']:.2f}"
    )
    print(f"server-side warm median:           {large['warm_ms']:.2f} ms")
    print(f"ratio_large = {large['ratio_large']:.2f}  (target <= 2.0)")
    print(
        f"small filter over HTTP median: {small['small_filter_median_ms']:.3f} ms (p99 {small['small_filter_p99_ms']:.3f} ms)"
    )
    print(f"trivial fixed 4 KB JSON median: {small['trivial_4k_median_ms']:.3f} ms")
    print(f"ratio_small = {small['ratio_small']:.2f}  (target <= 1.5)")
    print(f"peak RSS (bench process, in-process large run): {peak_rss_mib:.0f} MiB")


if __name__ == "__main__":
    main()

"""A load generator for the production server: a CA-like request mix, concurrent keep-alive clients
that check every answer byte for byte, and the server's start and memory (RSS) readings.

One home for the tests that need load (``tests/reliability/``) and for ``bench/load_bench.py``,
which prints the figures; the tests never import ``bench/``. Times are measured here only to be
reported by the bench: a test asserts answers, errors and counts, never a duration.
"""

from __future__ import annotations

import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from tests.factories.kube import ALLOCATABLE, CAPACITY, gpu, node

ROOT = Path(__file__).resolve().parent.parent

__all__ = [
    "LoadResult",
    "children",
    "reference_answers",
    "request_mix",
    "run_load",
    "server_rss_kib",
    "start",
]


def _node(name: str, gpus: int, devmem: int, model: str) -> dict:
    """A template of ``gpus`` cards of ``model`` (four per NUMA node), advertising them split 10."""
    devices = [gpu(f"GPU-{name}-{g}", index=g, devmem=devmem, type=model, numa=g // 4) for g in range(gpus)]
    advertised = {"nvidia.com/gpu": str(gpus * 10)}
    return node(
        name,
        devices,
        labels={"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": model},
        capacity={**CAPACITY, **advertised},
        allocatable={**ALLOCATABLE, **advertised},
    )


def _pod(name: str, *, gpus: int, gpumem: int, cores: int, uid: str) -> dict:
    limits = {
        "nvidia.com/gpu": str(gpus),
        "nvidia.com/gpumem": str(gpumem),
        "nvidia.com/gpucores": str(cores),
    }
    return {
        "metadata": {"name": name, "namespace": "bench", "uid": uid, "annotations": {}},
        "spec": {"containers": [{"name": "main", "image": "cuda", "resources": {"limits": limits}}]},
    }


TEMPLATES = [
    _node("template-node-for-a10-1", 1, 23028, "NVIDIA A10"),
    _node("template-node-for-a100-8", 8, 81920, "NVIDIA A100-SXM4-80GB"),
    _node("template-node-for-t4-4", 4, 15360, "NVIDIA-Tesla T4"),
    {"metadata": {"name": "template-node-for-cold"}, "spec": {}, "status": {}},
]
PODS = [
    ("small", 1, 4000, 20),
    ("fits-a100-only", 1, 40000, 50),
    ("two-gpus", 2, 12000, 30),
    ("too-big", 1, 90000, 10),
]


def request_mix(uid_prefix: str = "") -> list[tuple[str, bytes]]:
    """(path, body) pairs; ``uid_prefix`` makes every pod a new one for decision recording."""
    out = []
    for name, gpus, mem, cores in PODS:
        pod = _pod(name, gpus=gpus, gpumem=mem, cores=cores, uid=f"{uid_prefix}{name}")
        body = orjson.dumps({"Pod": pod, "Nodes": {"metadata": {}, "items": TEMPLATES}, "NodeNames": None})
        out.append(("/filter-simulation", body))
        out.append(("/prioritize-simulation", body))
    return out


def reference_answers(base_url: str, mix: list[tuple[str, bytes]]) -> list[bytes]:
    """One answer per request of ``mix``, asked one at a time: what every loaded answer must equal."""
    conn = _connect(base_url)
    try:
        answers = []
        for path, body in mix:
            status, content = _post(conn, path, body)
            if status != 200:
                raise RuntimeError(f"reference {path} answered {status}: {content[:200]!r}")
            answers.append(content)
        return answers
    finally:
        conn.close()


def _connect(base_url: str) -> http.client.HTTPConnection:
    host, _, port = base_url.removeprefix("http://").partition(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def _post(conn: http.client.HTTPConnection, path: str, body: bytes) -> tuple[int, bytes]:
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.read()


@dataclass
class LoadResult:
    requests: int = 0
    errors: int = 0  # connection errors, timeouts, wrong answers
    non_200: int = 0
    server_errors: int = 0  # 5xx
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)  # first few problems, for the report

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> str:
        if not self.requests:
            return "no requests"
        ms = 1000.0
        return (
            f"requests={self.requests} errors={self.errors} non_200={self.non_200} 5xx={self.server_errors} "
            f"seconds={self.seconds:.1f} throughput={self.requests / self.seconds:.0f} req/s "
            f"p50={self.percentile(0.50) * ms:.2f}ms p90={self.percentile(0.90) * ms:.2f}ms "
            f"p99={self.percentile(0.99) * ms:.2f}ms max={max(self.latencies) * ms:.2f}ms "
            f"mean={statistics.fmean(self.latencies) * ms:.2f}ms"
        )


def run_load(
    base_url: str,
    mix: list[tuple[str, bytes]],
    expected: list[bytes] | None,
    *,
    clients: int = 32,
    seconds: float | None = None,
    requests_per_client: int | None = None,
) -> LoadResult:
    """``clients`` threads, each with its own keep-alive connection, cycling through ``mix``.

    Stops after ``seconds`` or after ``requests_per_client`` each (whichever is given). A response
    that is not 200 or differs from ``expected`` counts as an error.
    """
    if seconds is None and requests_per_client is None:
        raise ValueError("give seconds or requests_per_client")
    result = LoadResult()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds if seconds is not None else None
    start_gate = threading.Barrier(clients + 1)

    def client(k: int) -> None:
        latencies: list[float] = []
        errors = non_200 = server_errors = 0
        samples: list[str] = []
        conn = _connect(base_url)
        start_gate.wait()
        i = k  # clients start at different places in the mix
        sent = 0
        while True:
            if requests_per_client is not None and sent >= requests_per_client:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            path, body = mix[i % len(mix)]
            began = time.perf_counter()
            try:
                status, content = _post(conn, path, body)
            except (OSError, http.client.HTTPException) as exc:
                errors += 1
                if len(samples) < 3:
                    samples.append(f"{path}: {type(exc).__name__}: {exc}")
                conn.close()
                conn = _connect(base_url)
                status, content = -1, b""
            latencies.append(time.perf_counter() - began)
            sent += 1
            if status != -1:
                if status != 200:
                    non_200 += 1
                    server_errors += status >= 500
                    if len(samples) < 3:
                        samples.append(f"{path}: HTTP {status}: {content[:200]!r}")
                elif expected is not None and content != expected[i % len(mix)]:
                    errors += 1
                    if len(samples) < 3:
                        samples.append(f"{path}: wrong answer {content[:200]!r}")
            i += 1
        conn.close()
        with lock:
            result.requests += sent
            result.errors += errors
            result.non_200 += non_200
            result.server_errors += server_errors
            result.latencies.extend(latencies)
            result.samples.extend(samples[: max(0, 5 - len(result.samples))])

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    start_gate.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    result.seconds = time.perf_counter() - began
    return result


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (from /proc): a gunicorn master's workers."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def server_rss_kib(pid: int) -> dict[int, int]:
    """VmRSS (KiB) of the gunicorn master and each of its workers."""
    out = {}
    for p in [pid, *children(pid)]:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        out[p] = int(line.split()[1])
        except OSError:
            continue
    return out


def start(
    database_url: str | None = None, *, workers: int = 2, threads: int = 4, extra_env: dict | None = None
):
    """Start the production server; returns (process, base URL, cleanup callable)."""
    from hami_sim.server.serve import start_server, stop_server

    tmp = None
    env = {"HAMI_SIM_THREADS": str(threads), "LOG_LEVEL": "WARNING", "DEBUG": "false"}
    if database_url is None:
        tmp = tempfile.TemporaryDirectory(prefix="hami-sim-load-")
        database_url = f"sqlite:///{tmp.name}/load.db"
        migrate_env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=migrate_env, check=True)
    env["DATABASE_URL"] = database_url
    env.update(extra_env or {})
    proc, url = start_server(workers=workers, env=env, stdout=subprocess.DEVNULL)

    def cleanup() -> None:
        stop_server(proc)
        if tmp is not None:
            tmp.cleanup()

    return proc, url, cleanup

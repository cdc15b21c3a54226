"""The expander's bounds: no client can take it past its memory limit, occupy it for nothing after
giving up, or crowd out the next call. Every refusal is an error status, on which CA keeps all its
options (fail open). The process tests run ``manage.py run_expander`` as deployed (TLS, defaults)."""

# ruff: noqa: F811 -- the expander fixtures (serve, connect, tls_files) are imported from its conftest
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from simulations.grpcexpander.protos import expander_pb2 as pb
from tests.expander.ca_clients import best_options
from tests.expander.conftest import connect, serve, tls_files  # noqa: F401 (fixtures)
from tests.expander.test_grpc_expander import TEMPLATES, pod_msg
from tests.factories.models import NodeGroupFactory
from tests.profiles.conftest import A10, H100
from tests.waiting import eventually

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20


def big_request(total_bytes: int, *, distinct: bool = False, options: int = 50) -> bytes:
    """A CA 1.35+ request of about ``total_bytes``: ``options`` options over the two templates.
    ``distinct``: every pod of every option differs (owner, uid, request), so nothing decodes or packs
    alike (the costliest request per byte); else every option carries the same pods, each with a
    12 KB annotation (a large, cheap request)."""
    msg = pb.CABestOptionsRequest()
    for group, node in TEMPLATES.items():
        msg.nodeBytesMap[group] = node.SerializeToString()
    if distinct:
        per_pod = len(pod_msg("w-0-0", 1000, owner="rs-0-0").SerializeToString())
        pods_per_option = max(1, total_bytes // (options * per_pod))
        for o in range(options):
            group = list(TEMPLATES)[o % 2]
            pods = [
                pod_msg(
                    f"w-{o}-{i}", 1000 + (o * pods_per_option + i) % 9000, owner=f"rs-{o}-{i}"
                ).SerializeToString()
                for i in range(pods_per_option)
            ]
            msg.options.add(nodeGroupId=group, nodeCount=pods_per_option, podBytes=pods)
        return msg.SerializeToString()
    pod = pod_msg("w", 12000)
    pod.metadata.annotations["example.com/large"] = "x" * 12000
    raw = pod.SerializeToString()
    pods_per_option = max(1, total_bytes // (options * len(raw)))
    for o in range(options):
        msg.options.add(nodeGroupId=list(TEMPLATES)[o % 2], nodeCount=2, podBytes=[raw] * pods_per_option)
    return msg.SerializeToString()


# -- in process: the request bound, bad bytes, the concurrency bound ----------------------------------------
def test_a_request_over_the_byte_bound_is_refused_resource_exhausted(serve, connect):
    channel = connect(serve(max_request_bytes=1 * MiB))
    with pytest.raises(grpc.RpcError) as err:
        best_options(channel, big_request(2 * MiB))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.value


def test_bytes_that_are_no_request_are_invalid_argument(serve, connect):
    with pytest.raises(grpc.RpcError) as err:
        best_options(connect(serve()), b"\x0a\xff\xff")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a BestOptionsRequest" in err.value.details()


@pytest.fixture
def groups(db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])


def inflight() -> float:
    return REGISTRY.get_sample_value("hami_sim_expander_inflight_bytes") or 0.0


def test_a_call_beyond_the_concurrency_bound_is_refused_at_once(groups, serve, connect, first_call_held):
    """One call at a time: while a slow call is in work (held there until the check is done), the
    next is refused RESOURCE_EXHAUSTED at once (CA keeps its options) rather than queued past CA's
    deadline."""
    entered, release = first_call_held
    channel = connect(serve(workers=1))
    slow = big_request(4 * MiB, distinct=True)
    errors: list[grpc.RpcError] = []

    def first() -> None:
        try:
            best_options(channel, slow, timeout=60)
        except grpc.RpcError as exc:  # noqa: PERF203
            errors.append(exc)

    worker = threading.Thread(target=first)
    worker.start()
    try:
        assert entered.wait(60) and inflight() > 0, "the first call never started"
        with pytest.raises(grpc.RpcError) as err:
            best_options(channel, big_request(64 * 1024))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.value
    finally:
        release.set()
        worker.join(120)
    assert inflight() == 0


# -- the deployed process: memory and CPU ----------------------------------------------------------------------
@pytest.fixture
def expander_process(tls_files):
    """``manage.py run_expander`` on TLS with the default bounds, decisions not recorded, and its
    ``--metrics-bind`` endpoint; yields (pid, port, metrics URL). Every request is given a minute to
    arrive (``EXPANDER_RECEIVE_SECONDS``, 4 s deployed; the cut-off is the fairness tests' subject):
    a busy machine must not cut one off before it is whole, so the bounds are measured on requests
    that arrive, the worst case for memory and the only case for CPU."""
    cert, key, _ = tls_files
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DECISION_RECORDING": "off",
        "EXPANDER_RECEIVE_SECONDS": "60",
    }
    with socket.socket() as probe:  # a free port for the metrics endpoint
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "run_expander",
            "--bind",
            "127.0.0.1:0",
            "--tls-cert",
            cert,
            "--tls-key",
            key,
            "--metrics-bind",
            f"127.0.0.1:{metrics_port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "listening on" in line, line
        port = int(line.split("127.0.0.1:", 1)[1].split(" ", 1)[0])
        yield proc.pid, port, f"http://127.0.0.1:{metrics_port}/metrics"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def sample(url: str, name: str, **labels: str) -> float:
    """One series of the process's metrics endpoint (0 when it has none yet)."""
    text = urllib.request.urlopen(url, timeout=30).read().decode()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return s.value
    return 0.0


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def concurrently(channel, requests: list[bytes], timeout: float = 60) -> list[object]:
    """Send the requests at once; each call's answer or its status code."""
    results: list[object] = [None] * len(requests)

    def one(i: int) -> None:
        try:
            results[i] = best_options(channel, requests[i], timeout=timeout)
        except grpc.RpcError as exc:
            results[i] = exc.code()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.parametrize(
    ("size", "expect"),
    [
        # over the request bound (64 MiB): refused before it is read
        (120 * MiB, {grpc.StatusCode.RESOURCE_EXHAUSTED}),
        # inside it: the call and in-flight bounds admit what fits, refuse the rest; none is half-done
        (60 * MiB, {grpc.StatusCode.RESOURCE_EXHAUSTED, "answer"}),
    ],
    ids=["4 x 120 MiB", "4 x 60 MiB"],
)
def test_four_concurrent_large_requests_stay_under_one_gib(expander_process, connect, size, expect):
    pid, port, _ = expander_process
    raw = big_request(size)
    results = concurrently(connect(port), [raw] * 4)
    outcomes = {"answer" if isinstance(r, list) else r for r in results}
    assert outcomes <= expect, results
    if "answer" in expect:
        assert "answer" in outcomes, results
    peak = peak_rss(pid)
    print(f"{size // MiB} MiB x 4: peak RSS {peak / MiB:.0f} MiB, outcomes {results}")
    assert peak < 1024 * MiB, f"peak RSS {peak / MiB:.0f} MiB"


def test_a_call_the_client_gave_up_on_stops_burning_cpu(expander_process, connect):
    """A 30 MiB request of distinct pods costs far more than CA's 5 s; once the deadline has passed
    the process stops working on it (checked between options, pod decodes and packings): it gives
    the call up (counted as refused for the deadline, not finished) having spent little CPU after
    the client gave up, and goes idle. Waited for, not slept on: a busy machine gets there later,
    never with more CPU (CPU seconds, not wall seconds, are what is bounded)."""
    pid, port, metrics = expander_process
    raw = big_request(30 * MiB, distinct=True)
    channel = connect(port)
    with pytest.raises(grpc.RpcError) as err:
        best_options(channel, raw, timeout=5.0)  # CA's gRPCTimeout
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    gave_up = cpu_seconds(pid)
    # idle first (no scrape costs the process CPU while it works), then done with the call
    done = eventually(lambda: idle(pid) and sample(metrics, "hami_sim_expander_calls") == 0, within=120)
    assert done, "the process is still working on a call its client gave up on"
    stopped = cpu_seconds(pid)
    print(f"cpu from the client giving up until the process was done and idle: {stopped - gave_up:.2f} s")
    assert stopped - gave_up < 1.5, f"{stopped - gave_up:.2f} s of CPU after the client gave up"
    assert sample(metrics, "hami_sim_expander_requests_total", wire="bytes") == 1  # it arrived, was worked on
    assert eventually(lambda: sample(metrics, "hami_sim_expander_refused_total", reason="deadline") == 1), (
        "the call was finished, not given up: the request is too cheap to prove anything"
    )
    assert best_options(channel, big_request(64 * 1024)) is not None  # and it still answers


def idle(pid: int, window: float = 0.5) -> bool:
    """Whether the process used (almost) no CPU over the next ``window`` seconds."""
    before = cpu_seconds(pid)
    time.sleep(window)
    return cpu_seconds(pid) - before < 0.05

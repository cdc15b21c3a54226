"""Benchmark of live usage at scale: 5,000 nodes x 8 GPUs and 100,000 HAMi pods. Never run by tests.

The cluster is served by the loopback Kubernetes API double (``tests/kubeapi.py``) in a process of
its own (as kube-apiserver is: its CPU and its 100,000 Pod objects are not in the measured process)
and read with the real ``kubernetes`` client, page by page (``KUBE_PAGE_SIZE``, 500), into the
database of ``DATABASE_URL`` (default ``postgres://postgres@127.0.0.1:5432/hami_sim_usage_bench``,
migrated first). The first line names the database and the load average. Then:

1. ``relist cold``: a full relist (Nodes, then Pods) into an empty store: the number that bounds a
   watcher start. ``relist warm``: the same relist with nothing changed (the periodic safety net,
   a 410 Gone). Each split into the node sync (``profiles.sync``: inventories and drift) and the pod
   sync (``usage``), with the CPU time of this process and its garbage collector. Target: under
   30 s. Below: listing every pod with the client alone (HTTP and orjson, nothing stored), and the
   client's own models for 5,000 pods (what the relist avoids by reading raw JSON).
2. ``store size``: the usage tables on disk (PostgreSQL ``pg_total_relation_size``: rows, TOAST and
   indexes) and the node inventories beside them. Target: under 500 MiB.
3. ``lookup per node``: the extender's per-node lookup (``usage.live.live_node``) over 1,000 and
   over all 5,000 nodes from a warm process cache: O(1) means the two are about equal.
   ``cache load``: a replica's first full load of every node's usage from the database.
4. One pod event (a new allocation) written and visible to the store.
5. With ``--pending N`` (default 10,000; 0 leaves them out), the API also serves N pending HAMi pods
   (``PodScheduled=False``, ``Unschedulable``; 1 or 2 cards of 10000 to 80000 MiB in 20 shapes), so
   the relists above keep them and every node's requested sums too. Then the blind-spot report as
   the service computes it (``usage.blindspot.compute``: the stored nodes with their usage, both
   views of every pending pod, the estimator for the invisible ones), count-only and with aggregate
   capacity, split into reading the store and the engine's ``pod_views``. Target: both views under 5 s.

Run: ``PYTHONPATH=. .venv/bin/python bench/usage_bench.py [--nodes 5000 --pods 100000 --pending 10000]
[--profile DIR]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchdb import setup_django  # noqa: E402 (bench/ is the script's own folder)

REGISTER = "hami.io/node-nvidia-register"
ALLOCATED = "hami.io/vgpu-devices-allocated"
GPUS = 8
DEVMEM = 81559


def make_node(i: int) -> dict:
    name = f"ip-10-{i // 250}-{i % 250}-1.ec2.internal"
    devices = [
        {
            "id": f"GPU-{i:05d}-{g}",
            "index": g,
            "count": 10,
            "devmem": DEVMEM,
            "devcore": 100,
            "type": "NVIDIA H100 80GB HBM3",
            "numa": g // 4,
            "mode": "hami-core",
            "health": True,
        }
        for g in range(GPUS)
    ]
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "uid": f"node-uid-{i}",
            "resourceVersion": str(10_000 + i),
            "labels": {
                "kubernetes.io/hostname": name,
                "eks.amazonaws.com/nodegroup": f"gpu-h100-{i % 10}",
                "node.kubernetes.io/instance-type": "p5.48xlarge",
                "topology.kubernetes.io/zone": f"us-east-1{'abc'[i % 3]}",
            },
            "annotations": {REGISTER: orjson.dumps(devices).decode(), "hami.io/node-handshake": "Reported"},
        },
        "spec": {"providerID": f"aws:///us-east-1a/i-{i:017x}"},
        "status": {
            "capacity": {"cpu": "192", "memory": "2048Gi", "pods": "110", "nvidia.com/gpu": "80"},
            "allocatable": {"cpu": "191", "memory": "2000Gi", "pods": "110", "nvidia.com/gpu": "80"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def make_pod(j: int, nodes: list[dict], rng: random.Random) -> dict:
    node = nodes[rng.randrange(len(nodes))]
    i = int(node["metadata"]["uid"].rsplit("-", 1)[1])
    cards = rng.choice((1, 1, 1, 2))
    first = rng.randrange(GPUS - cards + 1)
    devices = "".join(
        f"GPU-{i:05d}-{first + c},NVIDIA,{rng.choice((4000, 10000, 20000))},{rng.choice((10, 25))}:"
        for c in range(cards)
    )
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": f"infer-{j // 100}-{j:06d}",
            "namespace": f"team-{j % 40}",
            "uid": f"pod-uid-{j}",
            "resourceVersion": str(100_000 + j),
            "labels": {"app": f"infer-{j // 100}", "pod-template-hash": "7d9f8c6b5d"},
            "annotations": {
                "hami.io/vgpu-node": node["metadata"]["name"],
                "hami.io/vgpu-time": "1764590000",
                "hami.io/bind-phase": "success",
                "hami.io/vgpu-devices-to-allocate": ";",
                ALLOCATED: devices + ";",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"infer-{j // 100}-7d9f8c6b5d",
                    "uid": f"rs-{j // 100}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": node["metadata"]["name"],
            "schedulerName": "hami-scheduler",
            "containers": [
                {
                    "name": "server",
                    "image": "registry.example.com/infer:1.4.2",
                    "resources": {
                        "limits": {
                            "nvidia.com/gpu": str(cards),
                            "nvidia.com/gpumem": "10000",
                            "cpu": "4",
                            "memory": "16Gi",
                        }
                    },
                }
            ],
        },
        "status": {"phase": "Running", "podIP": f"10.1.{j % 250}.{j // 250 % 250}", "qosClass": "Burstable"},
    }


def make_pending(j: int) -> dict:
    """A pending HAMi pod kube-scheduler gave up on: what the blind-spot report judges."""
    shape = j % 20
    cards, mem = 1 + shape % 2, 10000 + (shape * 3500) % 70001
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": f"train-{j // 100}-{j:06d}",
            "namespace": f"team-{j % 40}",
            "uid": f"pending-uid-{j}",
            "resourceVersion": str(300_000 + j),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": f"train-{j // 100}"},
        },
        "spec": {
            "schedulerName": "hami-scheduler",
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/train:2.0",
                    "resources": {
                        "limits": {"nvidia.com/gpu": str(cards), "nvidia.com/gpumem": str(mem), "cpu": "4"},
                        "requests": {"cpu": "4", "memory": "16Gi"},
                    },
                }
            ],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }


def _empty_store() -> None:
    """TRUNCATE (not DELETE): the sizes below must not count an earlier run's dead rows."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE usage_podallocation, usage_nodeusage, usage_usagefinding, usage_usagestate, "
            "usage_pendingpod, usage_nodefacts, profiles_nodeinventory CASCADE"
        )


def _sizes_mib() -> dict[str, float]:
    from django.db import connection

    tables = {
        "usage": ["usage_nodeusage", "usage_podallocation", "usage_usagefinding", "usage_usagestate"],
        "inventory": ["profiles_nodeinventory"],
    }
    out = {}
    with connection.cursor() as cursor:
        for key, names in tables.items():
            total = 0
            for name in names:
                cursor.execute("SELECT pg_total_relation_size(%s)", [name])
                total += cursor.fetchone()[0]
            out[key] = round(total / 2**20, 1)
    return out


def _lookup_ns(names: list[str], rounds: int = 5) -> float:
    from usage.live import live_node

    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter_ns()
        for name in names:
            live_node(name)
        best = min(best, (time.perf_counter_ns() - started) / len(names))
    return round(best)


def _serve(nodes: list[dict], pod_count: int, pending: int, conn) -> None:
    """The API double's process: generate the pods here, serve until the parent says stop."""
    from tests.kubeapi import FakeKubeAPI

    rng = random.Random(12)
    pods = [make_pod(j, nodes, rng) for j in range(pod_count)]
    pods.extend(make_pending(j) for j in range(pending))
    with FakeKubeAPI(nodes=nodes, pods=pods) as api:
        conn.send(api.url)
        conn.recv()


class _ApiProcess:
    """``tests/kubeapi.FakeKubeAPI`` in a forked process, as a real kube-apiserver is: its CPU and its
    100,000 Pod objects are not in the measured process (they would share its GIL and its heap)."""

    def __init__(self, nodes: list[dict], pods: int, pending: int = 0) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(nodes, pods, pending, child), daemon=True)

    def __enter__(self) -> str:
        self._proc.start()
        return self._conn.recv()

    def __exit__(self, *exc) -> None:
        self._conn.send("stop")
        self._proc.join(timeout=30)


def _kubeconfig(url: str, path: Path) -> str:
    from tests.kubeapi import write_kubeconfig

    return f"kubeconfig:{write_kubeconfig(url, path)}"


def _list_only_s(source: str) -> float:
    """The real ``kubernetes`` client listing every Pod (HTTP, raw JSON, orjson), nothing else."""
    from usage.kube import list_resource

    list_resource(source, "nodes", lambda page: None, page_size=1)  # imports and first connection
    started = time.perf_counter()
    list_resource(source, "pods", lambda page: None, page_size=500, timeout=60)
    return time.perf_counter() - started


def _models_s(source: str, pods: int) -> float:
    """The same client deserialising ``pods`` Pods into its models (``V1Pod``), which the relist avoids."""
    from kubernetes import client

    from profiles.kube import api_client

    api = client.CoreV1Api(api_client(source))
    started, token, seen = time.perf_counter(), None, 0
    while seen < pods:
        page = api.list_pod_for_all_namespaces(limit=500, _continue=token, _request_timeout=60)
        seen, token = seen + len(page.items), page.metadata._continue
    return time.perf_counter() - started


def _relist(source: str, profile: Path | None = None) -> dict[str, float]:
    """One full relist (nodes, then pods), timed; with ``profile``, under cProfile dumped there."""
    from usage.cluster import nodes_changed, relist_nodes, relist_pods

    if profile is not None:
        import cProfile

        with cProfile.Profile() as prof:
            result = _relist(source)
        profile.parent.mkdir(parents=True, exist_ok=True)
        prof.dump_stats(profile)
        return result
    gc_s = _gc_seconds()
    cpu, started = time.process_time(), time.perf_counter()
    _nodes, _rv, node_counts = relist_nodes(source)
    nodes_s = time.perf_counter() - started
    started = time.perf_counter()
    _rv, counts = relist_pods(source, everything=nodes_changed(node_counts))
    pods_s = time.perf_counter() - started
    cpu_s = time.process_time() - cpu
    return {"nodes_s": nodes_s, "pods_s": pods_s, "cpu_s": cpu_s, "gc_s": _gc_seconds() - gc_s, **counts}


_GC = {"total": 0.0, "started": 0.0}


def _gc_seconds() -> float:
    """Seconds this process has spent in the cyclic garbage collector since the first call."""
    import gc

    if not any(getattr(cb, "__name__", "") == "_gc_timer" for cb in gc.callbacks):

        def _gc_timer(phase: str, info: dict) -> None:
            if phase == "start":
                _GC["started"] = time.perf_counter()
            else:
                _GC["total"] += time.perf_counter() - _GC["started"]

        gc.callbacks.append(_gc_timer)
    return _GC["total"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--pending", type=int, default=10_000, help="pending HAMi pods served beside them")
    parser.add_argument("--profile", type=Path, help="dump cProfile stats of each relist into this directory")
    args = parser.parse_args()
    setup_django("hami_sim_usage_bench")
    from django.conf import settings
    from django.db import connection

    from usage.store import get_store
    from usage.sync import apply_pod_events

    settings.KUBE_PAGE_SIZE = 500
    settings.USAGE_CACHE_SECONDS = 3600  # the lookups below measure the cache, not its refresh
    nodes = [make_node(i) for i in range(args.nodes)]
    sample = [make_pod(j, nodes, random.Random(j)) for j in range(1000)]
    pod_bytes = sum(len(orjson.dumps(p)) for p in sample) / len(sample)
    print(
        f"cluster: {args.nodes} nodes x {GPUS} GPUs, {args.pods} pods (~{pod_bytes:.0f} bytes of JSON each), "
        f"{args.pending} of them more pending; "
        f"database: {connection.vendor} {connection.settings_dict['NAME']}; "
        "API: tests/kubeapi.py double in its own process, read with the kubernetes client; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    with _ApiProcess(nodes, args.pods, args.pending) as url, tempfile.TemporaryDirectory() as tmp:
        _empty_store()
        source = _kubeconfig(url, Path(tmp) / "kubeconfig")
        list_s = _list_only_s(source)
        models_s = _models_s(source, min(args.pods, 5000))
        runs = {
            run: _relist(source, args.profile / f"relist_{run}.prof" if args.profile else None)
            for run in ("cold", "warm")
        }
    for run, t in runs.items():
        total = t["nodes_s"] + t["pods_s"]
        print(
            f"relist {run}: {total:.1f} s wall (nodes {t['nodes_s']:.1f} s + pods {t['pods_s']:.1f} s; "
            f"target < 30 s), {t['cpu_s']:.1f} s CPU in this process, {t['gc_s']:.1f} s of it in the GC"
        )
    print(
        f"  of which listing {args.pods + args.pending} pods with the kubernetes client alone "
        "(HTTP + orjson, no store): "
        f"{list_s:.1f} s"
    )
    print(
        f"  for comparison, the client's models (V1Pod) for {min(args.pods, 5000)} pods: {models_s:.1f} s "
        f"(~{models_s * args.pods / min(args.pods, 5000):.0f} s for all; the relist reads raw JSON)"
    )
    counts = runs["warm"]
    print(
        f"  pods stored: {counts['pods']}; unchanged on the warm relist: {counts['pods_unchanged']}; "
        f"pending HAMi pods kept: {counts.get('pending', 0)}"
    )
    sizes = _sizes_mib()
    print(
        f"store size: {sizes['usage']} MiB (target < 500 MiB); node inventories beside it: {sizes['inventory']} MiB"
    )

    store = get_store()
    store.clear()
    started = time.perf_counter()
    store.refresh(force=True)
    load = time.perf_counter() - started
    names = [n["metadata"]["name"] for n in nodes]
    print(f"cache load (a replica's first read of every node's usage): {load:.2f} s")
    print(
        f"lookup per node: {_lookup_ns(names[:1000])} ns over 1000 nodes, "
        f"{_lookup_ns(names)} ns over {len(names)} nodes (O(1): about equal)"
    )
    extra = make_pod(args.pods + 1, nodes, random.Random(args.pods + 1))
    started = time.perf_counter()
    apply_pod_events([("ADDED", extra)])
    store.refresh(force=True)
    event = (time.perf_counter() - started) * 1000
    target = extra["metadata"]["annotations"]["hami.io/vgpu-node"]
    assert store.get(target) is not None
    print(f"one pod event written and visible in the store: {event:.1f} ms")
    if args.pending:
        _blind_spot(args.pending)


def _blind_spot(pending: int) -> None:
    """Both views of every pending pod, as the service computes them (``usage.blindspot.compute``)."""
    import hami_sim.engine.blindspot as engine
    from usage import blindspot

    spent = {"pod_views": 0.0}
    original = engine.pod_views

    def timed(*a, **kw):
        started = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            spent["pod_views"] += time.perf_counter() - started

    blindspot.pod_views = timed  # the report's own call, timed in place
    try:
        for aggregate in (False, True):
            spent["pod_views"] = 0.0
            started = time.perf_counter()
            report = blindspot.compute(aggregate=aggregate)
            total = time.perf_counter() - started
            label = "aggregate" if aggregate else "count-only"
            groups = ", ".join(f"{g}: {len(a.pods)}" for g, a in sorted(report.groups.items())[:3])
            print(
                f"blind spot {label:>10}: {total:.2f} s for the report; both views of {len(report.pods)} of "
                f"{pending} pending pods in {spent['pod_views']:.2f} s (target < 5 s); "
                f"invisible {len(report.invisible)} ({groups}{', ...' if len(report.groups) > 3 else ''}); "
                f"scale-down views: {len(report.drains)} nodes, groups too large: {report.drains_skipped}"
            )
    finally:
        blindspot.pod_views = original


if __name__ == "__main__":
    main()

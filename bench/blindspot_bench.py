"""Benchmark of the blind-spot views (engine only; the relist with pending pods is usage_bench.py's).

5,000 live nodes of 8 x H100 (split 10) with random usage (0-10 slots per card, 97 % of the cards
full by memory but for up to 8000 MiB) and what their pods request, and 10,000 pending pods in 20 shapes (1 or 2 cards, 10000 to
80000 MiB): CA's count-only view and HAMi's view of every pending pod (``pod_views``), once with the
count-only profile and once with aggregate capacity. Prints seconds and counts; never asserts time.

Run: ``PYTHONPATH=. .venv/bin/python bench/blindspot_bench.py [--nodes 5000 --pending 10000]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hami_sim.engine.blindspot import CAProfile, Pending, ViewNode, aggregate_names, pod_views  # noqa: E402
from hami_sim.engine.scheduler_filters import Resources  # noqa: E402
from hami_sim.engine.simulate import Simulator  # noqa: E402

DEVMEM = 81559
IGNORED = frozenset(
    {"nvidia.com/gpumem", "nvidia.com/gpucores", "nvidia.com/gpumem-percentage", "nvidia.com/priority"}
)


def make_node(sim: Simulator, i: int, rng: random.Random) -> ViewNode:
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
        for g in range(8)
    ]
    alloc = {"cpu": "191", "memory": "2000Gi", "pods": "110", "nvidia.com/gpu": "80"}
    obj = {
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name},
            "annotations": {"hami.io/node-nvidia-register": orjson.dumps(devices).decode()},
        },
        "spec": {},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }
    state = sim.inventory(obj).state(name)
    pods = mem = 0
    for dev in state.devices:
        dev.used = rng.randint(0, 10)
        # most cards full by memory with free slots left: the blind spot at scale
        full = rng.random() < 0.97
        dev.usedmem = DEVMEM - rng.randint(0, 8000) if full else min(DEVMEM, dev.used * rng.randint(0, 9000))
        pods += dev.used
        mem += dev.usedmem
    requested = Resources(
        cpu=pods * 1000, pods=pods, scalars={"nvidia.com/gpu": pods, "nvidia.com/gpumem": mem}
    )
    return ViewNode(name, obj, requested, state, f"gpu-h100-{i % 10}")


def make_pod(i: int, shape: int) -> Pending:
    gpus, mem = 1 + shape % 2, 10000 + (shape * 3500) % 70001
    limits = {"nvidia.com/gpu": str(gpus), "nvidia.com/gpumem": str(mem)}
    pod = {
        "metadata": {"name": f"p-{i}", "namespace": "ml", "uid": f"uid-{i}"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits, "requests": {"cpu": "1"}}}]},
    }
    return Pending(pod)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pending", type=int, default=10000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.nodes} nodes x 8 H100, {args.pending} pending pods")
    rng = random.Random(7)
    sim = Simulator()
    started = time.perf_counter()
    nodes = [make_node(sim, i, rng) for i in range(args.nodes)]
    pending = [make_pod(i, i % 20) for i in range(args.pending)]
    print(f"built in {time.perf_counter() - started:.2f} s")
    for label, profile in (
        ("count-only", CAProfile(IGNORED)),
        ("aggregate", CAProfile(IGNORED, aggregate_names(sim.vendors.values()))),
    ):
        started = time.perf_counter()
        views = pod_views(sim, nodes, pending, profile)
        seconds = time.perf_counter() - started
        invisible = sum(v.invisible for v in views)
        ca = sum(v.ca_node is not None for v in views)
        hami = sum(v.hami_node is not None for v in views)
        print(
            f"{label:>10}: both views of {len(views)} pods in {seconds:.2f} s "
            f"(CA places {ca}, HAMi places {hami}, invisible {invisible}); target < 5 s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

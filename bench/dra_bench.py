"""Benchmark of the DRA filter: one HAMi-DRA pod judged on 1,000 live nodes' ResourceSlices.

Prints, beside the device-plugin filter's figures (``bench/filter_bench.py``):
- ``dra_parse_ms``: parsing 1,000 ResourceSlices of 8 GPUs each (what a sync's read-back pays once);
- ``dra_filter_ms``: judging one pod's claim (1 GPU, 8000 MiB, 30 cores; HAMi-DRA's class and type
  selector) on every node, as the pod page and the DRA blind spot do: CPU time of the best of 3;
- ``dra_ratio``: ``dra_filter_ms`` over ``orjson.loads`` of the same slices' JSON, the floor any
  implementation reading them pays (the device-plugin filter's ``ratio_large`` is read the same way).
No target yet: this is the first figure, to watch as the allocator grows.

Run: ``make bench`` (or ``PYTHONPATH=. .venv/bin/python bench/dra_bench.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hami_sim.engine.dra.explain import judge  # noqa: E402
from hami_sim.engine.dra.hamidra import HAMI_DRA_CLASS, GpuSpec, claims_of_pod, hami_dra_class, profile_slice  # noqa: E402
from hami_sim.engine.dra.objects import parse_slice  # noqa: E402

NODES, GPUS = 1000, 8
POD = {
    "metadata": {"name": "bench", "namespace": "ml"},
    "spec": {
        "containers": [
            {
                "name": "main",
                "resources": {
                    "limits": {
                        "nvidia.com/gpu": "1",
                        "nvidia.com/gpumem": "8000",
                        "nvidia.com/gpucores": "30",
                    }
                },
            }
        ]
    },
}


def _best(run, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        run()
        best = min(best, time.thread_time() - start)
    return best


def main() -> None:
    raw = orjson.dumps(
        [profile_slice(f"node-{i}", [GpuSpec("NVIDIA A10G", 23028)] * GPUS) for i in range(NODES)]
    )
    floor = _best(lambda: orjson.loads(raw))
    objects = orjson.loads(raw)
    parse = _best(lambda: [parse_slice(o) for o in objects])
    slices = [parse_slice(o) for o in objects]
    claims = claims_of_pod(POD)
    classes = {HAMI_DRA_CLASS: hami_dra_class()}
    nodes = [({"metadata": {"name": s.node_name}}, (s,)) for s in slices]

    def filter_all() -> None:
        for node, own in nodes:
            assert judge(node, claims, classes, own).fits

    filtering = _best(filter_all)
    print(f"dra_parse_ms: {parse * 1000:.1f} (1,000 slices x {GPUS} GPUs)")
    print(f"dra_filter_ms: {filtering * 1000:.1f} (1 pod x 1,000 nodes, CPU time, best of 3)")
    print(f"dra_ratio: {filtering / floor:.1f} (over orjson.loads of the slices, {floor * 1000:.1f} ms)")


if __name__ == "__main__":
    main()

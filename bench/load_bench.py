"""Load benchmark of the production server. Prints figures; never asserts timings.

Starts the production stack (``hami_sim.server.serve.start_server``: nginx in front of gunicorn, 2
workers x 4 threads, i.e. ``gthread``) on loopback, then:

1. **load**: 32 concurrent keep-alive clients for a bounded time, a CA-like mix of
   ``/filter-simulation`` (3 warm template nodes; fits, failures and unregistered nodes) and
   ``/prioritize-simulation``. Prints requests, errors, non-200s, p50/p90/p99/max latency and
   throughput. Every answer is compared byte for byte with the reference answer for its request.
2. **memory**: RSS of the server (gunicorn's master + workers; nginx apart) after warm-up, then after 100,000 more requests
   (``--requests``), and the growth. Pods carry unique uids so decision recording folds new rows.

Run: ``PYTHONPATH=. .venv/bin/python bench/load_bench.py [--clients 32] [--seconds 20] [--requests 100000]``
``DATABASE_URL`` selects the server's database (default: a fresh SQLite file, migrated first).
The load generator itself lives in ``tests/loadgen.py`` (one home: the tests in
``tests/reliability/`` load the server with it too; ``tests/reliability/test_load.py`` is the short run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.loadgen import reference_answers, request_mix, run_load, server_rss_kib, start  # noqa: E402

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--requests", type=int, default=100_000, help="requests for the RSS growth check")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args(argv)

    proc, url, cleanup = start(os.environ.get("DATABASE_URL"), workers=args.workers, threads=args.threads)
    try:
        mix = request_mix()
        expected = reference_answers(url, mix)
        warm = run_load(url, mix, expected, clients=args.clients, requests_per_client=50)
        print(f"warm-up: {warm.summary()}")

        load = run_load(url, mix, expected, clients=args.clients, seconds=args.seconds)
        print(
            f"load ({args.clients} clients, {args.seconds:.0f}s, {args.workers} workers x {args.threads} threads):"
        )
        print(f"  {load.summary()}")
        for sample in load.samples:
            print(f"  problem: {sample}")

        rss_before = server_rss_kib(proc.pid)
        per_client = -(-args.requests // args.clients)
        # new pod uids every round: decisions are folded into new rows, caches see the same inventories
        done = 0
        memory_runs = []
        checkpoint = 25_000
        while done < per_client:
            step = min(per_client - done, 500)
            run = run_load(
                url, request_mix(uid_prefix=f"r{done}-"), None, clients=args.clients, requests_per_client=step
            )
            memory_runs.append(run)
            done += step
            sent = sum(r.requests for r in memory_runs)
            if sent >= checkpoint:  # RSS along the way: a plateau is warm-up, a slope is a leak
                print(
                    f"  after {sent:>7} requests: RSS {sum(server_rss_kib(proc.pid).values()) / 1024:.1f} MiB"
                )
                checkpoint += 25_000
        total = sum(r.requests for r in memory_runs)
        errors = sum(r.errors + r.non_200 for r in memory_runs)
        time.sleep(1.0)  # let the decision writer drain its queue
        rss_after = server_rss_kib(proc.pid)
        before_total, after_total = sum(rss_before.values()), sum(rss_after.values())
        print(f"memory: {total} requests ({errors} errors/non-200)")
        print(f"  RSS before: {before_total / 1024:.1f} MiB {sorted(v // 1024 for v in rss_before.values())}")
        print(f"  RSS after:  {after_total / 1024:.1f} MiB {sorted(v // 1024 for v in rss_after.values())}")
        growth = (after_total - before_total) / max(before_total, 1)
        print(f"  growth: {(after_total - before_total) / 1024:+.1f} MiB ({growth:+.1%})")
        print(f"ratio_rss_after_before={after_total / max(before_total, 1):.3f}")
        return 0 if load.errors == load.non_200 == errors == 0 else 1
    finally:
        cleanup()


if __name__ == "__main__":
    raise SystemExit(main())

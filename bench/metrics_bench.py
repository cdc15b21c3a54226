"""Benchmark of ``/metrics`` with many pending pods: what a scrape cost when it computed the blind spot,
and what it costs now that the worker computes it (``usage.tasks.refresh_blind_spot``) and the scrape
reads one row.

The demo's node groups and cluster, plus pending pods up to ``--pending`` (default 10,000), each asking
a different amount of GPU memory (nothing to fold), in the database of ``DATABASE_URL`` (default
``postgres://postgres@127.0.0.1:5432/hami_sim_metrics_bench``, created and migrated first; its pending
pods are replaced). Prints seconds and the ratio; never asserts time.

Run: ``PYTHONPATH=. .venv/bin/python bench/metrics_bench.py [--pending 10000]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchdb import setup_django  # noqa: E402 (bench/ is the script's own folder)


def _load(pending: int) -> int:
    """The demo, then its first unschedulable pod copied until ``pending`` wait, each its own size."""
    from django.utils import timezone

    from profiles.tasks import sync_cluster_inventory
    from profiles.yamlio import import_profiles
    from usage.models import PendingPod
    from usage.store import get_store

    demo = ROOT / "demo"
    PendingPod.objects.all().delete()
    import_profiles((demo / "profiles.yaml").read_text())
    sync_cluster_inventory.apply(kwargs={"source": f"file://{demo / 'cluster-snapshot.json'}"}).get()
    get_store().refresh(force=True)
    base = PendingPod.objects.filter(unschedulable=True).first()
    rows, now = [], timezone.now()
    for i in range(pending - PendingPod.objects.count()):
        pod = copy.deepcopy(base.pod)
        pod["metadata"]["name"] = f"bench-{i}"
        pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpumem"] = str(30000 + i)
        rows.append(
            PendingPod(
                uid=f"bench-{i}", namespace="ml", name=f"bench-{i}", pod=pod, reasons=base.reasons,
                created_at=base.created_at, unschedulable=True, content_hash=f"bench-{i}", observed_at=now,
            )
        )  # fmt: skip
    PendingPod.objects.bulk_create(rows, batch_size=2000)
    return PendingPod.objects.filter(unschedulable=True).count()


def _seconds(step) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=10000)
    args = parser.parse_args()
    setup_django("hami_sim_metrics_bench", ALLOWED_HOSTS="localhost")
    from django.test import Client

    from usage import blindspot
    from usage.metrics import refresh_blind_spot

    print(f"database {os.environ['DATABASE_URL']}; load average {os.getloadavg()[0]:.1f}")
    print(f"pending pods: {_load(args.pending)}")
    client = Client(HTTP_HOST="localhost")
    before = _seconds(blindspot.compute)
    task = _seconds(refresh_blind_spot)
    client.get("/metrics")  # the first request loads the URLs and views
    scrape = _seconds(lambda: client.get("/metrics"))
    print(f"a scrape computing the blind spot (before): {before:.2f} s")
    print(f"the worker's refresh_blind_spot task:       {task:.2f} s")
    print(f"a scrape now (one row):                     {scrape:.3f} s")
    print(f"ratio before/now: {before / scrape:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

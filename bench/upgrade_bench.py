"""Benchmark of the upgrade comparison (``decisions.upgrade.compare``). Never run by tests.

The comparison judges each pod under the release hami-sim follows and under another one, and, for a
pod whose answer changes, once more per rule that differs (which rule changes it); an outcome is
kept per (rule set, pod shape), so pods differing only in name share it. This bench stores 1,000
pending pods (five shapes of one or two NVIDIA GPUs; one pod in ten has an init container larger
than its main container, so its answer changes between 2.10 and 2.9) and five node groups (2x A10G,
4x A10G, 8x A100, 4x H100 and 8x L4 templates from device profiles) in the database of
``DATABASE_URL`` (default ``postgres://postgres@127.0.0.1:5432/hami_sim_upgrade_bench``, created and
migrated first), then times in CPU seconds (``time.process_time``: wall time on a shared machine
says little), best of 3, in two modes: ten pod shapes (replicas), and every pod a shape of its own
(an annotation per pod):

- ``plain``: judging every pod once under the current release (``decisions.upgrade.judge``: the
  candidates read once, then each pod against every group's template), as one release's answer costs;
- ``upgrade``: ``compare("2.9")`` over the same pods (its pod cap and evaluation budget raised so all
  1,000 are judged), candidates and pod reads included; beside it the same with every pod judged on
  its own (no shape shared), what the comparison cost before.

It prints the ratio ``upgrade / plain`` per mode and its target with the reason (``TARGETS``).

Run: ``make bench`` (or ``PYTHONPATH=. .venv/bin/python bench/upgrade_bench.py [--pods 1000]``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchdb import setup_django  # noqa: E402 (bench/ is the script's own folder)

GROUPS = (  # (name, device type, MiB, cards)
    ("a10g-2", "NVIDIA A10G", 23028, 2),
    ("a10g-4", "NVIDIA A10G", 23028, 4),
    ("a100-8", "NVIDIA A100-SXM4-80GB", 81920, 8),
    ("h100-4", "NVIDIA H100 80GB HBM3", 81559, 4),
    ("l4-8", "NVIDIA L4", 23034, 8),
)
SHAPES = ((1, 4000, 10), (1, 10000, 20), (2, 20000, 50), (1, 2000, 0), (1, 30000, 30))  # gpus, MiB, cores
#: the ratio upgrade / plain each mode should stay under, and why (``distinct``: True)
TARGETS = {
    False: (6.0, "a shape's outcome under a rule set is judged once, so the rule attribution is "
            "paid per shape, not per pod"),
    True: (9.0, "each changed pod is judged once per differing rule, on simulators that never saw it: "
           "2 + 0.1 x 24 = 4.4 judgments per pod, a cold one dearer than plain's warm one; 6 would "
           "need to skip rules by what a pod reads, which no rule declares"),
}  # fmt: skip


def _container(name: str, gpus: int, mem: int, cores: int) -> dict:
    limits = {"nvidia.com/gpu": str(gpus), "nvidia.com/gpumem": str(mem), "nvidia.com/gpucores": str(cores)}
    return {"name": name, "image": "x", "resources": {"limits": limits}}


def _pod(i: int, distinct: bool = False) -> dict:
    gpus, mem, cores = SHAPES[i % len(SHAPES)]
    spec: dict = {"containers": [_container("main", gpus, mem, cores)]}
    if i % 10 == 0:  # an init container larger than the main one: 2.9 adds the two up on one card
        spec["initContainers"] = [_container("init", 1, 22000, 0)]
    annotations = {"bench/pod": str(i)} if distinct else {}  # distinct: no two pods of one shape
    return {
        "metadata": {"name": f"p-{i}", "namespace": "bench", "uid": f"uid-{i}", "annotations": annotations},
        "spec": spec,
    }


def _store(pods: int, distinct: bool = False) -> None:
    from django.utils import timezone

    from profiles.models import DeviceProfile, NodeGroup
    from profiles.services import save_profile
    from usage.models import PendingPod

    PendingPod.objects.all().delete()
    NodeGroup.objects.all().delete()
    for name, gpu_type, devmem, cards in GROUPS:
        group = NodeGroup.objects.create(name=name, match_labels={"pool": name}, max_size=100)
        row = {"type": gpu_type, "devmem": devmem, "devcore": 100, "count": 10, "numa": 0}
        row.update({"mode": "hami-core", "mig_profiles": [], "quantity": cards})
        save_profile(DeviceProfile(node_group=group, vendor="NVIDIA"), rows=[row])
    now = timezone.now()
    PendingPod.objects.bulk_create(
        PendingPod(
            uid=f"uid-{i}",
            namespace="bench",
            name=f"p-{i}",
            pod=_pod(i, distinct),
            created_at=now,
            unschedulable=True,
            observed_at=now,
        )
        for i in range(pods)
    )


def _best(fn, runs: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(runs):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def _run(pods: int, distinct: bool) -> None:
    """Store the pods (``distinct``: each of its own shape), time both, print one mode's lines."""
    from decisions import upgrade
    from hami_sim.runtime.simulator import get_simulator
    from usage.models import PendingPod

    get_simulator.cache_clear()
    _store(pods, distinct)

    def plain() -> int:
        candidates = upgrade._candidates()
        sim = get_simulator()
        rows = PendingPod.objects.order_by("created_at", "pk").values_list("pod", flat=True)
        return sum(upgrade.judge(sim, pod, candidates).fits for pod in rows)

    t_plain, fitting = _best(plain)
    t_upgrade, result = _best(lambda: upgrade.compare("2.9", cap=pods))
    shape = upgrade._shape
    upgrade._shape = lambda pod: None  # every pod judged on its own, as before shapes were shared
    try:
        t_alone, _ = _best(lambda: upgrade.compare("2.9", cap=pods))
    finally:
        upgrade._shape = shape
    ratio, target = t_upgrade / t_plain if t_plain else float("inf"), TARGETS[distinct]
    mode = "each pod its own shape" if distinct else "ten pod shapes"
    print(f"[{mode}] plain judge (2.10 once): {t_plain:.2f} s CPU, {fitting} pods fit")
    print(
        f"[{mode}] upgrade compare (2.10 vs 2.9): {t_upgrade:.2f} s CPU for {result.judged} pods judged, "
        f"{len(result.changes)} changed, {len(result.differences)} differing rules "
        f"(every pod judged alone: {t_alone:.2f} s CPU)"
    )
    print(f"[{mode}] ratio upgrade / plain: {ratio:.2f} (target < {target[0]:.0f}: {target[1]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    args = parser.parse_args()
    setup_django("hami_sim_upgrade_bench")
    from django.test import override_settings

    from decisions import upgrade

    upgrade.EVALUATION_BUDGET = 10**9  # judge every pod: the bench times 1,000, not the cap
    print(f"load average {os.getloadavg()[0]:.2f}; {args.pods} pending pods over {len(GROUPS)} node groups")
    with override_settings(HAMI_VERSION="2.10"):
        for distinct in (False, True):
            _run(args.pods, distinct)


if __name__ == "__main__":
    main()

"""A/B of every store and memo: the ``make bench`` figures with each store switched off alone.

Each store of ``hami_sim.engine.stores.STORES`` is switched off by ``HAMI_SIM_NO_STORE=<name>`` (one
switch, read where the stores are built) while every other store stays on; the benches a store can
touch run in a fresh process per configuration, each run next to one of the baseline (all stores
on), the pair's order alternating, so a busy neighbour slows both sides alike. Figures are the benches' own:
the filter ratios (CPU time of the answering thread over the orjson floor, median of rounds), the
expander's CPU p50 per case (``time.process_time``), the estimator's engine cases of
``bench/estimate_bench.py`` timed here in CPU (``estimate_cpu``) and the DRA filter's CPU time. With ``--repeat N`` each figure is the median of N runs.

``gain %`` is what the store saves of the figure without it: ``(without - with) / without``. A store
that gains under 5 % on every figure it touches does not earn its place (``docs/architecture.md``).

Run: ``PYTHONPATH=. .venv/bin/python bench/cache_ab.py [--repeat N] [--store NAME] [--bench B]``; prints a
Markdown table (store, figure, with, without, gain %). Never run by tests.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

from hami_sim.engine.stores import NO_STORE_ENV, STORES  # noqa: E402

Figures = dict[str, float]


def _filter(out: str) -> Figures:
    return {f"filter {m[1]}": float(m[2]) for m in re.finditer(r"^(ratio_\w+) = ([\d.]+)", out, re.M)}


_EXPANDER_CASES = (
    ("one instance type in 50 groups, fresh", "same-fresh"),
    ("one instance type in 50 groups, repeat", "same-repeat"),
    ("50 distinct templates, fresh", "distinct-fresh"),
    ("50 distinct templates, repeat", "distinct-repeat"),
    ("ca-loop, fresh", "ca-loop"),
)


def _expander(out: str) -> Figures:
    found: Figures = {}
    for head, cpu in re.findall(
        r"^expander BestOptions.*\((.*?)\), \d+ bytes.*\n.*cpu_p50_ms=([\d.]+)", out, re.M
    ):
        for words, case in _EXPANDER_CASES:
            if words in head:
                found[f"expander {case} cpu p50 ms"] = float(cpu)
    return found


def _estimate(out: str) -> Figures:
    return {f"estimate {m[1]} cpu s": float(m[2]) for m in re.finditer(r"^(\w+) cpu ([\d.]+)$", out, re.M)}


def estimate_cpu() -> None:
    """``bench/estimate_bench.py``'s engine cases timed in CPU (``time.process_time``, best of 3, a
    new simulator each time as there): its own figures are wall-clock, noise on a shared machine."""
    import estimate_bench as eb  # noqa: PLC0415 - beside this file

    from hami_sim.engine.estimate import GroupTemplate, PendingPods, estimate  # noqa: PLC0415
    from hami_sim.engine.simulate import Simulator  # noqa: PLC0415

    cases = {
        "t_1000": (eb.pods(1000), [GroupTemplate("gpu-a100", eb.template())]),
        "t_10000": (eb.pods(10000), [GroupTemplate("gpu-a100", eb.template())]),
        "t_10000_realistic": (
            eb.realistic_pods(10000),
            [GroupTemplate(g[0], eb.group_template(*g)) for g in eb.GROUPS],
        ),
        "t_ca_loop": (eb.ca_loop_pods(), [GroupTemplate(n, node) for n, node in eb.ca_loop_groups()]),
    }
    for name, (pods, groups) in cases.items():
        batch = [PendingPods(p) for p in pods]
        best = float("inf")
        for _ in range(3):
            sim = Simulator()
            started = time.process_time()
            estimate(sim, batch, groups)
            best = min(best, time.process_time() - started)
        print(f"{name} cpu {best:.4f}", flush=True)


def _dra(out: str) -> Figures:
    found = re.search(r"^dra_filter_ms: ([\d.]+)", out, re.M)
    return {"dra filter cpu ms": float(found[1])} if found else {}


#: bench -> (its command, quick enough to repeat; its parser)
BENCHES: dict[str, tuple[list[str], Callable[[str], Figures]]] = {
    "filter": (["bench/filter_bench.py", "--skip-small", "--rounds", "5"], _filter),
    "expander": (["bench/expander_bench.py", "6"], _expander),
    "estimate": (["bench/cache_ab.py", "--estimate-cpu"], _estimate),
    "dra": (["bench/dra_bench.py"], _dra),
}

#: the benches a store can touch (what builds it runs there); the rest are not run for it
_ENGINE = ("filter", "expander", "estimate", "dra")
TOUCHES: dict[str, tuple[str, ...]] = {
    "live verdicts": ("filter",),
    "node bytes": ("filter",),
    "group-tagged copies": ("filter", "expander"),
    "expander pods": ("expander",),
    "expander nodes": ("expander",),
    "expander packings": ("expander",),
    "expander pod lists": ("expander",),
}


def run(bench: str, off: str) -> Figures:
    """One run of ``bench`` in a fresh process with the store ``off`` switched off ("": none)."""
    command, parse = BENCHES[bench]
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{NO_STORE_ENV: off})
    done = subprocess.run([sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{bench} with {off or 'every store'} on failed:\n{done.stderr[-2000:]}")
    return parse(done.stdout)


def ab(store: str, repeat: int, benches: tuple[str, ...]) -> list[tuple[str, float, float]]:
    """(figure, with, without) for every figure of the benches ``store`` touches: medians of
    ``repeat`` runs each side, the two sides run in pairs (in turn first), so both see the same load."""
    rows = []
    for bench in (b for b in TOUCHES.get(store, _ENGINE) if b in benches):
        on, off = [], []
        for i in range(repeat):
            pair = [("", on), (store, off)]
            for name, into in pair if i % 2 == 0 else reversed(pair):
                into.append(run(bench, name))
        for figure in on[0]:
            rows.append(
                (
                    figure,
                    statistics.median(r[figure] for r in on if figure in r),
                    statistics.median(r[figure] for r in off if figure in r),
                )
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per side and store (medians)")
    parser.add_argument("--store", action="append", help="only these stores (default: every one)")
    parser.add_argument("--bench", action="append", choices=sorted(BENCHES), help="only these benches")
    parser.add_argument("--estimate-cpu", action="store_true", help=argparse.SUPPRESS)  # (one run, inside)
    opts = parser.parse_args()
    if opts.estimate_cpu:
        return estimate_cpu()
    benches = tuple(opts.bench or BENCHES)
    print("| store | figure | with | without | gain % |\n| --- | --- | ---: | ---: | ---: |")
    for store in opts.store or [s.name for s in STORES]:
        rows = ab(store, opts.repeat, benches)
        for figure, on, off in rows:
            gain = (off - on) / off * 100 if off else 0.0
            print(f"| {store} | {figure} | {on:.3g} | {off:.3g} | {gain:+.0f} |", flush=True)
        best = max(((off - on) / off * 100 if off else 0.0 for _, on, off in rows), default=0.0)
        print(f"| {store} | **best gain** | | | **{best:+.0f}** |", flush=True)


if __name__ == "__main__":
    main()

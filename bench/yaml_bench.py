"""The what-if page's YAML at its 256 KiB limit: the pure-Python safe loader with our limits against
libyaml's (``hami_sim.project.safeyaml.load``). Prints seconds per parse and the ratio.

    PYTHONPATH=. .venv/bin/python bench/yaml_bench.py
"""

from __future__ import annotations

import time

import yaml

from hami_sim.project import safeyaml


def _document(limit: int = 256 * 1024) -> str:
    """A Pod whose many small annotations fill the limit (many small scalars: the slow case)."""
    annotations = {f"example.com/key-{i}": f"value-{i}" for i in range(limit // 40)}
    text = yaml.safe_dump(
        {"kind": "Pod", "metadata": {"annotations": annotations}, "spec": {"containers": []}}
    )
    return text[: text.rfind("\n", 0, limit - 200)] + "\nspec: {containers: []}\n"


def _seconds(parse, text: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    text = _document()

    def python_loader(t: str) -> object:
        loader = safeyaml._Loader(t)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()

    slow, fast = _seconds(python_loader, text), _seconds(safeyaml.load, text)
    print(f"document: {len(text)} bytes")
    print(f"python SafeLoader with limits: {slow:.2f} s")
    print(f"libyaml (CSafeLoader) with limits: {fast:.3f} s")
    print(f"ratio_python_libyaml={slow / fast:.1f}")


if __name__ == "__main__":
    main()

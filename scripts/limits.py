"""Size and complexity limits for the project's code, run by `make lint` and scripts/test.sh.

A module a newcomer can hold in their head is about 400 lines; a function they can follow is under
15 by radon's cyclomatic complexity (which, unlike ruff's C901, also counts ``and``/``or`` and
comprehension branches). Tests, benchmarks, migrations and generated protobuf modules are not held to
them. An exception names its reason here, so it is seen in review.

Exit status 1 with one line per breach; 0 when every module and function is inside the limits.
"""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

MAX_LINES = 400
MAX_COMPLEXITY = 14  # "under 15"
ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".venv", "tests", "bench", "migrations", "node_modules", "var", ".git", "deploy", "scripts"}
# path -> why it may be longer than MAX_LINES
LONG_MODULES: dict[str, str] = {
    "hami_sim/engine/vendors/nvidia.py": (
        "HAMi's NVIDIA backend read top to bottom (registration, requests, the Fit walk); its MIG and "
        "topology rules already live in nvidia_mig.py and nvidia_topology.py"
    ),
}


def project_modules() -> list[Path]:
    """Every Python module of the product, generated protobuf code excluded."""
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not SKIP_DIRS.intersection(path.relative_to(ROOT).parts)
        and not path.name.endswith(("_pb2.py", "_pb2_grpc.py"))
    )


def breaches(path: Path) -> list[str]:
    """What in one module is over a limit, one line each."""
    name = path.relative_to(ROOT).as_posix()
    text = path.read_text()
    found = []
    lines = text.count("\n")
    if lines > MAX_LINES and name not in LONG_MODULES:
        found.append(f"{name}: {lines} lines (limit {MAX_LINES})")
    for block in cc_visit(text):
        if isinstance(block, Function) and block.complexity > MAX_COMPLEXITY:
            found.append(
                f"{name}:{block.lineno} {block.fullname}: complexity {block.complexity} (limit {MAX_COMPLEXITY})"
            )
    return found


def main() -> int:
    problems = [line for path in project_modules() for line in breaches(path)]
    stale = [name for name in LONG_MODULES if not (ROOT / name).exists()]
    problems += [f"{name}: listed as an exception but gone" for name in stale]
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

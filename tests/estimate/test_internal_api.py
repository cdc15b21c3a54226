"""The estimator package's modules talk to each other through designed interfaces only.

``hami_sim/engine/estimate`` is split into modules (inputs, equivalence groups, packing, expanders,
results...). A name one module imports from another is that module's interface: public (no leading
underscore) and listed in its ``__all__``. A leading underscore means "private to this module", so
no module imports one from a sibling; the tests and the rest of the project do not either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hami_sim" / "engine" / "estimate"
DOTTED = "hami_sim.engine.estimate"
SIBLINGS = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _declared(stem: str) -> set[str]:
    """A module's ``__all__`` as written (a literal list)."""
    tree = ast.parse((PACKAGE / f"{stem}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(sibling module, name, line) of every import from a module of the package in ``path``."""
    inside = path.parent == PACKAGE
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if inside and node.level == 1 and node.module in SIBLINGS:
            stem = node.module
        elif node.level == 0 and (node.module or "").startswith(DOTTED + "."):
            stem = node.module.rsplit(".", 1)[1]
        elif node.level == 0 and node.module == DOTTED:
            stem = "__init__"
        else:
            continue
        found += [(stem, alias.name, node.lineno) for alias in node.names]
    return found


def _importers() -> list[Path]:
    """The package's modules and every other module of the project that import from one of them."""
    out = []
    for top in ("hami_sim", "profiles", "simulations", "decisions", "dashboard", "usage", "tests", "bench"):
        out += [p for p in (ROOT / top).rglob("*.py") if "migrations" not in p.parts]
    return sorted(p for p in out if _imports(p))


def test_the_package_is_still_split_into_modules():
    assert {"inputs", "parsed_groups", "fitter", "packing", "entry"} <= set(SIBLINGS)
    assert len(_importers()) > len(SIBLINGS)  # the check below reads the imports it is about


@pytest.mark.parametrize("path", _importers(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_imports_a_private_name_of_an_estimate_module(path):
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {name} from {stem}"
        for stem, name, line in _imports(path)
        if name.startswith("_") or name not in _declared(stem)
    ]
    assert not wrong, "private or undeclared (not in __all__) names imported: " + "; ".join(wrong)


@pytest.mark.parametrize("stem", ["__init__", *SIBLINGS])
def test_each_interface_is_public(stem):
    assert sorted(name for name in _declared(stem) if name.startswith("_")) == []

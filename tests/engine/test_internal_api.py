"""The engine's split packages' modules talk to each other through designed interfaces only.

``hami_sim/engine/estimate``, ``blindspot`` and ``dra`` are each split into modules. A name one
module imports from another is that module's interface: public (no leading underscore) and listed in
its ``__all__``. A leading underscore means "private to this module", so no module imports one from
a sibling; the tests and the rest of the project do not either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "hami_sim" / "engine"
#: package: modules it must still be split into (so the checks below read the imports they are about)
PACKAGES = {
    "estimate": {"inputs", "parsed_groups", "fitter", "packing", "entry"},
    "blindspot": {"aggregate", "inputs", "placement", "views"},
    "dra": {"allocator", "capacity", "explain", "objects", "pools", "selectors"},
}


def _siblings(package: str) -> list[str]:
    return sorted(p.stem for p in (ENGINE / package).glob("*.py") if p.stem != "__init__")


def _declared(package: str, stem: str) -> set[str]:
    """A module's ``__all__`` as written (a literal list)."""
    tree = ast.parse((ENGINE / package / f"{stem}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def _imports(package: str, path: Path) -> list[tuple[str, str, int]]:
    """(sibling module, name, line) of every import from a module of ``package`` in ``path``."""
    inside, dotted, siblings = (
        path.parent == ENGINE / package,
        f"hami_sim.engine.{package}",
        _siblings(package),
    )
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if inside and node.level == 1 and node.module in siblings:
            stem = node.module
        elif node.level == 0 and (node.module or "").startswith(dotted + "."):
            stem = node.module.rsplit(".", 1)[1]
        elif node.level == 0 and node.module == dotted:
            stem = "__init__"
        else:
            continue
        found += [(stem, alias.name, node.lineno) for alias in node.names]
    return found


def _importers(package: str) -> list[Path]:
    """The package's modules and every other module of the project that import from one of them."""
    out = []
    for top in ("hami_sim", "profiles", "simulations", "decisions", "dashboard", "usage", "tests", "bench"):
        out += [p for p in (ROOT / top).rglob("*.py") if "migrations" not in p.parts]
    return sorted(p for p in out if _imports(package, p))


def _a_module(package: str, stem: str, name: str) -> bool:
    """``from hami_sim.engine.<package> import <module>``: a module, not a name of one."""
    return stem == "__init__" and name in _siblings(package)


IMPORTERS = [(package, path) for package in PACKAGES for path in _importers(package)]


@pytest.mark.parametrize("package", PACKAGES)
def test_the_package_is_still_split_into_modules(package):
    assert PACKAGES[package] <= set(_siblings(package))
    assert len(_importers(package)) > len(PACKAGES[package])


@pytest.mark.parametrize(
    ("package", "path"), IMPORTERS, ids=[f"{pk}:{p.relative_to(ROOT).as_posix()}" for pk, p in IMPORTERS]
)
def test_no_module_imports_a_private_name_of_a_sibling(package, path):
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {name} from {stem}"
        for stem, name, line in _imports(package, path)
        if name.startswith("_") or name not in _declared(package, stem) and not _a_module(package, stem, name)
    ]
    assert not wrong, "private or undeclared (not in __all__) names imported: " + "; ".join(wrong)


@pytest.mark.parametrize(
    ("package", "stem"),
    [(package, stem) for package in PACKAGES for stem in ["__init__", *_siblings(package)]],
)
def test_each_interface_is_public(package, stem):
    assert sorted(name for name in _declared(package, stem) if name.startswith("_")) == []

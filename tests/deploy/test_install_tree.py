"""docs/production.md's "What gets installed" tree names every kustomization under deploy/ (overlays,
Components and examples), each where it is, and no directory that is not there."""

from __future__ import annotations

from tests.deploy.conftest import DEPLOY, REPO


def documented_directories() -> set[str]:
    """The directories of the tree, as paths under deploy/ (two spaces of indent per level)."""
    text = (REPO / "docs" / "production.md").read_text()
    tree = text.split("## What gets installed", 1)[1].split("```", 2)[1]
    found, parents = set(), []
    for line in tree.splitlines()[2:]:  # after the opening fence's line and "deploy/"
        name = line.strip().split()[0] if line.strip() else ""
        depth = (len(line) - len(line.lstrip())) // 2 - 1
        if not name.endswith("/"):
            continue
        parents = [*parents[:depth], name.rstrip("/")]
        found.add("/".join(parents))
    return found


def test_every_kustomization_is_in_the_install_tree():
    kustomizations = {str(p.parent.relative_to(DEPLOY)) for p in DEPLOY.rglob("kustomization.yaml")}
    documented = documented_directories()
    assert kustomizations - documented == set()
    assert {"capacity", "capacity/cluster-autoscaler", "ingress-example"} <= documented


def test_the_install_tree_names_only_directories_that_exist():
    assert {d for d in documented_directories() if not (DEPLOY / d).is_dir()} == set()

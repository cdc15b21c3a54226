"""Every Prometheus series a doc names (``hami_sim_...``) is one hami-sim exports, so a renamed metric
cannot leave an alert recipe or a dashboard query in the docs pointing at nothing."""

from __future__ import annotations

import importlib
import re

import pytest

from tests.docs.examples import REPO

#: a series name; one followed by ``*`` names a family prefix (``hami_sim_cache_*``) and is skipped
SERIES = re.compile(r"\bhami_sim_[a-z_]*[a-z](?![a-z_*])")
_SUFFIXES = ("", "_total", "_bucket", "_count", "_sum", "_created")
_MODULES = ("hami_sim.project.urls", "simulations.metrics", "usage.metrics", "decisions.recorder")


def _named() -> dict[str, str]:
    named: dict[str, str] = {}
    for path in sorted((REPO / "docs").glob("*.md")):
        for name in SERIES.findall(path.read_text()):
            named.setdefault(name, path.name)
    return named


@pytest.mark.django_db
def test_every_series_a_doc_names_is_exported():
    from prometheus_client import REGISTRY

    for module in _MODULES:
        importlib.import_module(module)
    exported = set()
    for family in REGISTRY.collect():
        exported |= {family.name + suffix for suffix in _SUFFIXES}
        exported |= {sample.name for sample in family.samples}
    named = _named()
    assert len(named) > 20
    missing = {name: doc for name, doc in named.items() if name not in exported}
    assert not missing, missing

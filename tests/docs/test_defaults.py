"""A setting's default, where a doc states it ("`EXPANDER_MAX_CONCURRENT` (default 2)"), is the one
the code uses (``hami_sim.project.conf.DEFAULTS``), so a changed default cannot leave the docs behind."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from hami_sim.project.conf import DEFAULTS
from tests.docs.examples import REPO

STATED = re.compile(r"`([A-Z][A-Z0-9_]+)`\s*\(default:? ([^)]+)\)")
CHOSEN = re.compile(r"`([A-Z][A-Z0-9_]+)=([\w.-]+)` \(default\)")
_UNITS = {"MiB": 1 << 20, "KiB": 1 << 10, "GiB": 1 << 30, "s": 1}
_KNOWN = {f.name for f in fields(DEFAULTS)}


def _statements() -> list[tuple[str, str, str]]:
    """(doc, SETTING, stated default) for every setting of ``DEFAULTS`` a doc gives a default."""
    found = []
    for path in sorted((REPO / "docs").glob("*.md")):
        text = " ".join(path.read_text().split())
        for pattern in (STATED, CHOSEN):
            for name, value in pattern.findall(text):
                if name.lower() in _KNOWN:
                    found.append((path.name, name, value))
    return found


def _value(stated: str) -> object:
    """'64 MiB' -> 67108864, '4' -> 4.0, '`kube-system`' -> 'kube-system'."""
    text = stated.split(",")[0].strip().strip("`")
    number = re.fullmatch(r"(\d+(?:\.\d+)?)(?: (\w+))?", text)
    if number and (number[2] is None or number[2] in _UNITS):
        return float(number[1]) * _UNITS.get(number[2] or "s", 1)
    return text


def test_the_docs_state_defaults():
    names = {name for _, name, _ in _statements()}
    assert {"EXPANDER_MAX_REQUEST_BYTES", "EXPANDER_RETURN", "PROFILE_CACHE_CHECK_SECONDS"} <= names


@pytest.mark.parametrize(("doc", "name", "stated"), _statements())
def test_a_stated_default_is_the_codes(doc, name, stated):
    code = getattr(DEFAULTS, name.lower())
    want = float(code) if isinstance(code, int | float) and not isinstance(code, bool) else code
    assert _value(stated) == want, f"{doc} says {name} defaults to {stated!r}; the code: {code!r}"

"""The HAMi releases hami-sim follows, and the scheduler rules that differ between them.

A cluster runs one HAMi release; ``HAMI_VERSION`` (a setting, ``EngineConfig.hami_release``) names
it. Between v2.8.3, v2.9.0 and v2.10.0 some device rules changed. Each such rule is one field of
:class:`HamiRules`, and every change of it is one :data:`CHANGES` row naming the release that
brought it and the HAMi pull request, so the engine, the docs and an "upgrade" comparison read one
table. A :class:`HamiRules` is resolved once per simulator, never per node.

To ask "release A, with only rule R as B has it", take ``dataclasses.replace(rules_for(A),
R=getattr(rules_for(B), R))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

__all__ = [
    "SUPPORTED_RELEASES",
    "DEFAULT_RELEASE",
    "PATCHES",
    "INIT_IGNORED",
    "INIT_SUMMED",
    "INIT_APART",
    "HamiReleaseError",
    "HamiRules",
    "RuleChange",
    "CHANGES",
    "parse_release",
    "rules_for",
    "rule_differences",
]

SUPPORTED_RELEASES: tuple[str, ...] = ("2.8", "2.9", "2.10")
DEFAULT_RELEASE = "2.10"
#: the exact tag of each release whose rules (and Go tests) hami-sim follows
PATCHES: dict[str, str] = {"2.8": "v2.8.3", "2.9": "v2.9.0", "2.10": "v2.10.0"}

# init containers' device requests (``HamiRules.init_containers``)
INIT_IGNORED = "ignored"  # not read: only the app containers ask for devices
INIT_SUMMED = "summed"  # fitted one after another with the app containers, usage adding up
INIT_APART = "apart"  # each alone on the node; the node keeps max(app usage, init peak)


class HamiReleaseError(ValueError):
    """A HAMi release hami-sim does not follow; ``str()`` lists the ones it does."""


@dataclass(frozen=True, slots=True)
class HamiRules:
    """The rules of one HAMi release, where they differ between releases (:data:`CHANGES`).

    Every field but ``release`` is a rule; its value is what the engine does under that release.
    """

    release: str = DEFAULT_RELEASE
    init_containers: str = INIT_APART


@dataclass(frozen=True, slots=True)
class RuleChange:
    """A rule that differs between two releases: its :class:`HamiRules` field, what changed and the
    HAMi pull request that changed it (the newest one, when it changed twice)."""

    name: str
    description: str
    pr: int


@dataclass(frozen=True, slots=True)
class _Change:
    since: str  # the release that brought it (and every later one keeps it)
    rule: str
    value: Any
    pr: int
    description: str


#: The value of every rule in v2.8.3, the oldest release followed.
_BASELINE: dict[str, Any] = {
    "init_containers": INIT_IGNORED,
}

CHANGES: tuple[_Change, ...] = (
    _Change(
        "2.9",
        "init_containers",
        INIT_SUMMED,
        1650,
        "init containers' devices are counted, fitted before the app containers on the same cards "
        "and added to their usage",
    ),
    _Change(
        "2.10",
        "init_containers",
        INIT_APART,
        1773,
        "each init container is fitted alone (they run one after another); the node keeps the larger "
        "of the app containers' usage and the init containers' peak",
    ),
)

_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def _order(release: str) -> int:
    return SUPPORTED_RELEASES.index(release)


def parse_release(text: str) -> str:
    """``"2.9"``, ``"2.9.0"``, ``"v2.9.0"`` or ``"v2.8.3"`` -> ``"2.9"`` / ``"2.8"``.

    A patch names its minor's release (hami-sim follows one patch per minor, :data:`PATCHES`).
    Raises :class:`HamiReleaseError` (a ``ValueError``) naming the supported releases otherwise."""
    match = _RELEASE.fullmatch(text.strip()) if isinstance(text, str) else None
    release = f"{match[1]}.{match[2]}" if match else ""
    if release not in SUPPORTED_RELEASES:
        supported = ", ".join(f"{r} ({PATCHES[r]})" for r in SUPPORTED_RELEASES)
        raise HamiReleaseError(f"HAMi release {text!r} is not supported: hami-sim follows {supported}")
    return release


def rules_for(release: str) -> HamiRules:
    """The rules of ``release`` (any form :func:`parse_release` reads): v2.8.3's with every change
    up to that release applied."""
    name = parse_release(release)
    values = dict(_BASELINE)
    for change in CHANGES:
        if _order(change.since) <= _order(name):
            values[change.rule] = change.value
    return HamiRules(release=name, **values)


def _rules(value: HamiRules | str) -> HamiRules:
    return value if isinstance(value, HamiRules) else rules_for(value)


def rule_differences(a: HamiRules | str, b: HamiRules | str) -> tuple[RuleChange, ...]:
    """The rules whose value differs between ``a`` and ``b`` (releases or rule sets), in
    :class:`HamiRules` field order, each with the changes between the two releases that made it."""
    first, second = _rules(a), _rules(b)
    low, high = sorted((_order(first.release), _order(second.release)))
    out: list[RuleChange] = []
    for f in fields(HamiRules):
        if f.name == "release" or getattr(first, f.name) == getattr(second, f.name):
            continue
        steps = [c for c in CHANGES if c.rule == f.name and low < _order(c.since) <= high]
        steps = steps or [c for c in CHANGES if c.rule == f.name]  # a mixed rule set
        text = "; ".join(f"v{c.since}: {c.description} (#{c.pr})" for c in steps)
        out.append(RuleChange(f.name, text, steps[-1].pr))
    return tuple(out)

"""CA's expanders: the ``--expander`` chain as a caller names it (checked as CA's expander factory does),
the priority expander's RE2 table, and each expander's filter over the options.

The chain itself (``choose``) is in ``chain``; this module only says which options one expander keeps."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import re2

from ..hami_expander import RETURN_MODES, keep_options
from .inputs import EstimateError
from .results import GroupOption

__all__ = ["EXPANDERS", "Expander", "WASTE_SCORES", "expander_filter", "parse_expander", "pick_option"]

# CA's names and meaning; ``least-waste-gpu`` is ours (least-waste plus device memory and cores)
EXPANDERS = ("least-waste", "least-waste-gpu", "most-pods", "least-nodes", "priority", "random", "grpc")
# CA's price expander ranks by the cloud provider's node prices; node groups here carry no price
_NEEDS_PRICES = (
    "expander price ranks node groups by the cloud provider's node prices, which hami-sim's node groups "
    "do not carry; simulate with one of: "
)


@dataclass(slots=True, frozen=True)
class Expander:
    """An expander chain (CA's ``--expander=a,b``) and the priority expander's regex table."""

    names: tuple[str, ...] = ("least-waste",)
    priorities: tuple[tuple[int, re2._Regexp], ...] = ()
    seed: int | None = None  # random: a seeded pick among the candidates, else the first
    grpc_mode: str = "most-placed"  # grpc: what hami-sim's expander answers (EXPANDER_RETURN)


def parse_expander(
    value: object, priorities: object = None, seed: object = None, grpc_mode: str = "most-placed"
) -> Expander:
    """``"least-waste"``, ``"priority,least-waste"``, ``["priority", "least-waste"]`` or
    ``{"name": ..., "priorities": ...}``, checked as CA's expander factory does: every name known,
    none twice, nothing after ``random`` (it always answers one option, so a later one never runs).
    ``grpc`` is hami-sim's own gRPC expander step (``hami_expander.keep_options``, answering as
    ``grpc_mode``), the one CA runs with ``--expander=grpc,...`` pointed at hami-sim.

    Priorities use CA's priority-expander ConfigMap shape, ``{"<int>": ["<regex>", ...]}``; the
    inverse ``{"<regex>": <int>}`` is accepted too.
    """
    if isinstance(value, Mapping):
        priorities = value.get("priorities", priorities)
        value = value.get("name")
    names = _expander_names("least-waste" if value is None else value)
    table = _priority_table(priorities) if priorities is not None else []
    if "priority" in names and not table:
        raise EstimateError("the priority expander needs a priorities map")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise EstimateError("randomSeed must be an integer")
    if grpc_mode not in RETURN_MODES:
        raise EstimateError(f"grpc expander mode {grpc_mode!r}: one of {', '.join(RETURN_MODES)}")
    return Expander(names, tuple(table), seed, grpc_mode)


def _expander_names(value: object) -> tuple[str, ...]:
    """The chain's names from ``"a,b"`` or ``["a", "b"]`` (blanks dropped), each checked."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = [part.strip() for part in value]
    else:
        parts = []
    names = tuple(part for part in parts if part)
    if not names:
        raise EstimateError(
            "expander must be a name such as 'least-waste' or a chain 'priority,least-waste' "
            '(or ["priority", "least-waste"])'
        )
    for i in range(len(names)):
        _check_step(names, i)
    return names


def _check_step(names: tuple[str, ...], i: int) -> None:
    """CA's expander factory's checks on the ``i``-th name of a chain: known (``price`` needs node
    prices we do not have), not named before, and not after ``random`` (which never passes on a tie)."""
    name = names[i]
    if name == "price":
        raise EstimateError(_NEEDS_PRICES + ", ".join(EXPANDERS))
    if name not in EXPANDERS:
        raise EstimateError(f"unknown expander {name!r}; supported: {', '.join(EXPANDERS)}")
    if name in names[:i]:
        raise EstimateError(
            f"expander {name} was specified multiple times; each expander may appear only once"
        )
    if i and names[i - 1] == "random":
        raise EstimateError(
            f"expander {name} comes after random, which always answers one option, so {name} "
            "would never be used"
        )


# Priority regexes come from the caller and are matched against group names it also chooses. Python's
# backtracking ``re`` froze a worker on ``(a+)+$`` against 28-character names; RE2
# matches in time linear in the name, and is the regexp dialect CA's priority expander (Go) uses.
MAX_PRIORITY_PATTERNS = 1000
MAX_PATTERN_CHARS = 1024
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the caller's 400, not a line in our logs
_RE2_OPTIONS.max_mem = 1 << 20  # a pattern whose automaton needs more is refused, not built


def _compile_priority(pattern: str) -> re2._Regexp:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise EstimateError(f"priority regex of {len(pattern)} characters; at most {MAX_PATTERN_CHARS}")
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise EstimateError(
            f"invalid priority regex {pattern[:100]!r} (RE2 syntax, as CA's): {exc}"
        ) from None


def _priority_table(priorities: object) -> list[tuple[int, re2._Regexp]]:
    """``{"<int>": ["<regex>", ...]}`` (or the inverse ``{"<regex>": <int>}``) as (priority, regex)."""
    if not isinstance(priorities, Mapping):
        raise EstimateError('priorities must be an object {"<priority>": ["<regex>", ...]}')
    table: list[tuple[int, re2._Regexp]] = []
    for key, val in priorities.items():
        if isinstance(val, list):
            prio_raw, patterns = key, val
        elif isinstance(val, int) and not isinstance(val, bool):
            prio_raw, patterns = val, [key]
        else:
            raise EstimateError(f"priorities[{key!r}] must be a list of regular expressions")
        try:
            prio = int(prio_raw)
        except (TypeError, ValueError):
            raise EstimateError(f"priority {prio_raw!r} is not an integer") from None
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise EstimateError(f"priorities[{key!r}] must hold strings")
            if len(table) >= MAX_PRIORITY_PATTERNS:
                raise EstimateError(f"more than {MAX_PRIORITY_PATTERNS} priority regexes")
            table.append((prio, _compile_priority(pattern)))
    return table


def _best(options: list[GroupOption], key: Callable[[GroupOption], float]) -> list[GroupOption]:
    values = [key(o) for o in options]
    top = max(values)
    return [o for o, v in zip(options, values, strict=True) if v == top]


def ca_waste(option: GroupOption) -> float:
    """CA's least-waste score: unused cpu share + unused memory share (app containers' requests)."""
    return option.waste.cpu + option.waste.memory


def gpu_waste(option: GroupOption) -> float:
    """least-waste-gpu's score: CA's two shares plus the unused device memory and cores shares."""
    return option.waste.score


#: the waste expanders, each with its score (lower wins) and what the score sums, for the explanation
WASTE_SCORES: dict[str, tuple[Callable[[GroupOption], float], str]] = {
    "least-waste": (ca_waste, "cpu + memory, of 2"),
    "least-waste-gpu": (gpu_waste, "cpu + memory + gpuMemory + gpuCores, of 4"),
}


def _priority(option: GroupOption, expander: Expander) -> int | None:
    """The highest priority matching the group, counting only priorities >= -1 (CA's priority
    expander starts from -1, so a group matched only below -1 is treated as not matched)."""
    matched = [p for p, rx in expander.priorities if p >= -1 and rx.search(option.node_group)]
    return max(matched) if matched else None


def _by_priority(options: list[GroupOption], expander: Expander) -> list[GroupOption]:
    ranked = [(o, _priority(o, expander)) for o in options]
    found = [prio for _, prio in ranked if isinstance(prio, int)]
    if not found:
        return options  # CA: no priorities info for any option, nothing filtered
    top = max(found)
    return [o for o, prio in ranked if prio == top]


def expander_filter(
    name: str, options: list[GroupOption], expander: Expander, rng: random.Random | None = None
) -> list[GroupOption]:
    """One of CA's expander filters: the options it keeps (ties included)."""
    if name == "least-waste":
        return _best(options, lambda o: -ca_waste(o))
    if name == "least-waste-gpu":
        return _best(options, lambda o: -gpu_waste(o))
    if name == "most-pods":
        return _best(options, lambda o: len(o.scheduled))
    if name == "least-nodes":
        return _best(options, lambda o: -o.node_count)
    if name == "random":
        return [pick_option(options, rng)]
    if name == "grpc":
        return keep_options(options, expander.grpc_mode)
    return _by_priority(options, expander)


def pick_option(options: list[GroupOption], rng: random.Random | None) -> GroupOption:
    """CA picks at random; we answer the first (request order) unless a seed is given."""
    return options[rng.randrange(len(options))] if rng is not None else options[0]

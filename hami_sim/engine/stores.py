"""Every store and memo that outlives a request, declared in one table (``STORES``): its name (its
``cache`` label in ``/metrics``), its share of the one byte budget (``EngineConfig.cache_bytes``),
what keys it and what makes an entry stale, and the one switch that turns a store off alone
(``HAMI_SIM_NO_STORE``: ``bench/cache_ab.py`` measures what each store buys with it).

Keys are content, never names: a changed registration, pod, template or rule is a new key, so no
store is ever invalidated by hand; what is not content (a live node's usage, the profile catalog)
is held by identity (a weak reference to the usage object, the catalog snapshot) and leaves with it.

The usage store and the profile catalog (``usage.store``, ``profiles.inventory``) are not in the
table: they are the database's state held in the process so that answers never wait on the
database (``docs/reliability.md``), not memos of work; nothing can switch them off.

A few memos are the process's, not a simulator's (``PROCESS_MEMOS``): each holds pure functions of
its key (a CEL expression's compiled program, a MIG config's rules, a constant), is reached by code
that has no simulator (the DRA judge is called from ``usage``), and is bounded by a count, not by the
budget. Nothing switches them off: an entry never goes stale and never changes an answer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .lru import ENTRY_OVERHEAD, ByteLRU

__all__ = [
    "MAX_CEL_PROGRAMS",
    "NO_STORE_ENV",
    "PROCESS_MEMOS",
    "STORES",
    "ProcessMemo",
    "Store",
    "budgets",
    "new_store",
    "off_from_env",
]

#: the environment variable naming stores to switch off, comma-separated (the A/B; never in production)
NO_STORE_ENV = "HAMI_SIM_NO_STORE"


@dataclass(frozen=True, slots=True)
class Store:
    """One store: its name, its share of the budget (a fraction; None: charged to its registration's
    entry in ``registrations``, no share of its own), what keys it and what makes an entry stale."""

    name: str
    share: float | None
    key: str
    stale: str


#: pods up to this many bytes of JSON are remembered parsed (``Simulator.pod_context``)
POD_KEY_MAX = 16384

STORES: tuple[Store, ...] = (
    Store("registrations", None, "what a node's vendors read of it (text, or its digest)", "LRU only"),
    Store("zero-usage verdicts", None, "pod key (PodView.FIT_READS, node policy)", "with its registration"),
    Store("live verdicts", None, "pod key, beside the usage object", "a new usage object"),
    Store("group-tagged copies", None, "(node group, source)", "with its registration"),
    Store("shape fits", None, "UUID-free shape, usage per device, pod key", "LRU only"),
    Store("node bytes", 1 / 4, "a node's JSON bytes", "its inventory gone, or a new catalog"),
    Store("pods", 1 / 64, "a pod's JSON bytes", "LRU only"),
    Store("node kinds", 1 / 64, "annotation keys and capacity names", "LRU only"),
    Store("registration templates", 1 / 64, "a registration's text but its UUIDs", "LRU only"),
    Store("expander pods", 1 / 16, "digest of a Pod's bytes", "LRU only"),
    Store("expander nodes", 1 / 32, "digest of a Node's bytes", "LRU only"),
    Store("expander packings", 1 / 32, "expander.caches.PackingKey's fields", "LRU only"),
    Store("expander pod lists", None, "digest of an option's pods' bytes", "the end of the call"),
)
_NAMES = frozenset(s.name for s in STORES)


@dataclass(frozen=True, slots=True)
class ProcessMemo:
    """A memo of the process (no share of the budget): where it is, how many entries it keeps at
    most, what keys it, and why it is not a simulator's."""

    name: str
    where: str
    bound: int
    key: str
    why: str


#: compiled CEL selectors kept at most (``dra.selectors.compile_selector``); past it, all are dropped
MAX_CEL_PROGRAMS = 1024

PROCESS_MEMOS: tuple[ProcessMemo, ...] = (
    ProcessMemo(
        "cel programs",
        "dra/selectors.py compile_selector",
        MAX_CEL_PROGRAMS,
        "a selector's CEL expression text",
        "a program is a pure function of its text; the DRA judge is reached without a simulator",
    ),
    ProcessMemo(
        "mig rules",
        "vendors/nvidia_mig_defaults.py template_mig",
        16,
        "the configured MIG geometries and the chart's default tag",
        "pure function of the config; a handful of configs per process",
    ),
    ProcessMemo(
        "hami-dra class", "dra/hamidra.py hami_dra_class", 1, "none: a constant", "one constant parse"
    ),
)


def off_from_env(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The stores ``HAMI_SIM_NO_STORE`` switches off (names of ``STORES``, comma-separated)."""
    raw = (os.environ if environ is None else environ).get(NO_STORE_ENV, "")
    names = frozenset(n.strip() for n in raw.split(",") if n.strip())
    unknown = names - _NAMES
    if unknown:
        raise ValueError(f"{NO_STORE_ENV} names no store {sorted(unknown)}; stores: {sorted(_NAMES)}")
    return names


def budgets(total: int, off: frozenset[str] = frozenset()) -> dict[str, int]:
    """Each budgeted store's bytes out of ``total``: its share, 0 when switched off; the rest to
    ``registrations`` (the same whatever else is off, so an A/B changes one store only)."""
    total = max(0, total)
    shares = {s.name: int(total * s.share) for s in STORES if s.share is not None}
    found = {name: 0 if name in off else size for name, size in shares.items()}
    found["registrations"] = 0 if "registrations" in off else total - sum(shares.values())
    return found


#: the largest entry a store ever puts, where the budget's 1/64 default would refuse common ones
#: (a parsed pod is charged twice its JSON and 1 KB: at a 4 MiB budget, 1/64 of the pods' share
#: was 1 KB and refused nearly every real pod)
_MAX_ENTRY = {"pods": 2 * POD_KEY_MAX + 1024 + ENTRY_OVERHEAD}


def new_store(name: str, sizes: Mapping[str, int]) -> ByteLRU:
    """The named store of ``sizes`` (``budgets``), reported in ``/metrics`` under its name."""
    size = sizes[name]
    largest = _MAX_ENTRY.get(name)
    return ByteLRU(size, None if largest is None else min(size, largest), name=name)

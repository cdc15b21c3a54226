"""Which nodes are live, and the usage the extender evaluates them with (docs/usage.md).

A node is live when the usage store has it by name: the cluster sync put it there. CA's template and
upcoming nodes (``template-node-for-<group>-<suffix>``) are never live, whatever the store holds.
A live node whose usage is older than ``USAGE_STALE_SECONDS`` answers per ``USAGE_STALE_POLICY``:
``fail`` (default; docs/usage.md says why it is the safe choice for CA) or ``last-known``.

The database need not answer: the store serves the last state it read, and its age keeps growing
while the database is unreachable, so the same policy decides when that state is too old (the stale
reason then says the store is unreachable). A store that never read anything cannot tell a live node
from an unknown one: under ``fail`` every node that is not a template fails, under ``last-known`` it
is evaluated as empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from hami_sim.engine.allocations import apply_usage
from hami_sim.engine.model import NodeState
from hami_sim.engine.names import TEMPLATE_PREFIX
from hami_sim.engine.simulate import Inventory
from hami_sim.project.conf import conf

from .store import LiveUsage, StoreView, get_store

__all__ = ["TEMPLATE_PREFIX", "LiveNode", "live_node", "live_state", "live_usage", "live_usage_reader"]

STALE_REASON = "live usage is stale"


@dataclass(slots=True, frozen=True)
class LiveNode:
    """A live node's usage, or the reason it cannot be trusted (``error``: the node fails)."""

    name: str
    usage: LiveUsage  # the store's own object, the same one until the node's usage changes
    age_seconds: float
    error: str = ""


def live_node(name: str, now: datetime | None = None) -> LiveNode | None:
    """``None`` for a node that is not live (a template, an upcoming node, a node never synced)."""
    if name.startswith(TEMPLATE_PREFIX):
        return None
    found = _read(name, get_store().view(), now)
    return None if found is None else LiveNode(name, *found)


def _read(name: str, view: StoreView, now: datetime | None) -> tuple[LiveUsage, float, str] | None:
    """``(usage, age, error)`` of a live node in ``view`` (the store's state after one freshness
    check), None for any other: ``live_node`` without building one (``live_usage`` runs for each
    live node of every CA call)."""
    usage = view.nodes.get(name)
    if usage is None:
        store = view.store
        if not store.loaded and store.unavailable is not None and conf().usage_stale_policy == "fail":
            return _NEVER_READ, float("inf"), f"{STALE_REASON}: {_outage(store)}, never read"
        return None
    age = usage.age_seconds(view.confirmed_at, now)
    settings = conf()
    stale = age > settings.usage_stale_seconds and not view.from_snapshot
    if stale and settings.usage_stale_policy == "fail":
        outage = f" ({_outage(view.store)})" if view.store.unavailable is not None else ""
        return usage, age, f"{STALE_REASON}: last confirmed {int(age)}s ago{outage}"
    return usage, age, ""


def _outage(store) -> str:
    """How long the usage store has been unreadable (the text CA logs with a stale node)."""
    return f"usage store unreadable for {int(store.unavailable.seconds())}s"


#: what a ``LiveNode`` carries for a node whose usage was never read (it fails: nothing reads it)
_NEVER_READ = LiveUsage("", {}, datetime.min.replace(tzinfo=UTC), -1, {})


def live_usage(
    name: str, now: datetime | None = None, view: StoreView | None = None
) -> LiveUsage | str | None:
    """The usage a node is evaluated with, the reason it fails (stale usage), or ``None`` when it is
    not a live node (evaluate it at zero usage, as a template). The one home of that decision, for
    the extender (the engine's ``Simulator.filter_nodes(live=...)`` hook), sessions and the
    estimate's live nodes (``live_state``). The usage is the store's own object, the same one until
    the node's usage changes: the engine remembers a verdict with it. Templates return before any
    clock is read; ``now``: the instant ages are measured at (default: the clock, when needed);
    ``view``: the store's state to read (default: after a freshness check)."""
    if name.startswith(TEMPLATE_PREFIX):
        return None
    found = _read(name, view or get_store().view(), now)
    if found is None:
        return None
    return found[2] or found[0]


def live_usage_reader(
    now: datetime | None = None, view: StoreView | None = None
) -> Callable[[str], LiveUsage | str | None]:
    """``live_usage`` for one answer: the clock is read and the store checked for freshness once, so
    every node of a CA call is aged from the same instant against the same state (and a thousand
    live nodes do not read either a thousand times). A node observed (or confirmed) since the
    staleness cutoff is fresh whatever the policy: its usage is handed out at once; any other node
    is judged by ``live_usage``. ``now`` and ``view``: the instant and the state (default: the clock,
    and the store after a freshness check)."""
    now = now or timezone.now()
    view = view or get_store().view()
    nodes = view.nodes
    # (a microsecond after the cutoff: ``timedelta`` rounds the setting, the judgement does not)
    cutoff = now - timedelta(seconds=conf().usage_stale_seconds) + timedelta(microseconds=1)
    confirmed = view.confirmed_at
    every_fresh = view.from_snapshot or (confirmed is not None and confirmed >= cutoff)

    def read(name: str) -> LiveUsage | str | None:
        usage = nodes.get(name)
        if (
            usage is not None
            and (every_fresh or usage.observed_at >= cutoff)
            and not name.startswith(TEMPLATE_PREFIX)
        ):
            return usage
        return live_usage(name, now, view)

    return read


def live_state(name: str, inventory: Inventory) -> NodeState | str | None:
    """``live_usage`` as a state: built for this call from ``inventory`` (only for a live node), with
    the usage in place, so the caller owns it (sessions and the estimate place pods on it)."""
    found = live_usage(name)
    if found is None or isinstance(found, str):
        return found
    return apply_usage(inventory.state(name), found.devices, in_place=True)

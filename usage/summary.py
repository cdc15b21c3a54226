"""Usage as the dashboard shows it: per card used/free memory, cores and slots with the pods holding
them, and allocated-vs-registered totals for a set of nodes (a node group, the whole cluster)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .store import get_store

__all__ = ["cards", "is_healthy", "Totals", "totals", "node_age"]


def cards(devices: Iterable[Mapping], node: str) -> list[dict]:
    """The node's registered devices (inventory JSON) with their live usage merged in.

    Keys: the registration's (``id``, ``index``, ``type``, ``devmem``, ``devcore``, ``count``...) plus
    ``used``, ``usedmem``, ``usedcores``, ``freemem``, ``freecores``, ``freeslots``, ``pods`` (a list
    of ``(namespace, name)``), ``healthy`` and ``live`` (False: the node has no usage; everything shows
    free). An unhealthy card (``health: false``) has nothing free: HAMi places no pod on it.
    """
    live = get_store().get(node)
    out = []
    for i, dev in enumerate(devices):
        if not isinstance(dev, Mapping):
            continue
        use = live.devices.get(str(dev.get("id"))) if live else None
        used, usedmem, usedcores = (use.used, use.usedmem, use.usedcores) if use else (0, 0, 0)
        pods = [tuple(p.split("/", 1)) for p in use.pods] if use else []
        healthy = is_healthy(dev)
        out.append(
            {
                **dev,
                "index": dev.get("index", i),
                "used": used,
                "usedmem": usedmem,
                "usedcores": usedcores,
                "freemem": max(0, int(dev.get("devmem", 0) or 0) - usedmem) if healthy else 0,
                "freecores": max(0, int(dev.get("devcore", 0) or 0) - usedcores) if healthy else 0,
                "freeslots": max(0, int(dev.get("count", 0) or 0) - used) if healthy else 0,
                "healthy": healthy,
                "pods": pods,
                "live": live is not None,
            }
        )
    return out


def is_healthy(device: Mapping) -> bool:
    """A registered card HAMi may place pods on. The inventory stores a device without its defaults,
    and the engine's default is ``health: false``: a card is healthy only when it says so."""
    return device.get("health") is True


@dataclass
class Totals:
    """Allocated vs registered over a set of nodes (only live nodes have allocations).

    Registered and allocated add up the healthy cards only: an unhealthy card's capacity is not there
    to allocate, so it is counted apart (``unhealthy`` cards, ``unhealthymem`` MiB, ``unhealthycores``),
    never as free.
    """

    nodes: int = 0
    live_nodes: int = 0
    devices: int = 0
    devmem: int = 0
    usedmem: int = 0
    devcore: int = 0
    usedcores: int = 0
    count: int = 0
    used: int = 0
    unhealthy: int = 0
    unhealthymem: int = 0
    unhealthycores: int = 0
    pods: set = field(default_factory=set)

    @property
    def mem_percent(self) -> float:
        return round(100.0 * self.usedmem / self.devmem, 1) if self.devmem else 0.0

    @property
    def pod_count(self) -> int:
        return len(self.pods)


def totals(nodes: Iterable[tuple[str, list]]) -> Totals:
    """``nodes``: ``(name, inventory devices)`` pairs."""
    out = Totals()
    for name, devices in nodes:
        out.nodes += 1
        merged = cards(devices or [], name)
        out.live_nodes += bool(merged and merged[0]["live"])
        for card in merged:
            out.devices += 1
            out.pods.update(card["pods"])
            if not card["healthy"]:
                out.unhealthy += 1
                out.unhealthymem += int(card.get("devmem", 0) or 0)
                out.unhealthycores += int(card.get("devcore", 0) or 0)
                continue
            out.usedmem += card["usedmem"]
            out.usedcores += card["usedcores"]
            out.used += card["used"]
            out.devmem += int(card.get("devmem", 0) or 0)
            out.devcore += int(card.get("devcore", 0) or 0)
            out.count += int(card.get("count", 0) or 0)
    return out


def node_age(node: str) -> float | None:
    """Seconds since the node's usage was last confirmed; ``None`` when it has none."""
    store = get_store()
    live = store.get(node)
    return None if live is None else round(live.age_seconds(store.confirmed_at), 1)

"""Nodes by their bytes: a node CA sent before, byte for byte, is neither decoded nor resolved again.

CA sends the same Node objects call after call (its template nodes never change; a real node changes
when its status is posted). Decoding a node's JSON costs more than everything else the filter does
with a warm node, so the extender keeps each node it has answered for by its exact bytes: its name
(it passed the wire checks) and a weak reference to the inventory it resolved to. A hit is valid only
while that inventory lives (its registration is still cached) and, with an ``InventoryResolver``
whose answers depend on more than the node (a catalog of node groups), while the resolver's
``state()`` is the same object. Anything else decodes the node again, as on first sight.

Keys are the nodes' own bytes (no digest can collide): charged in full to a share of the budget, so
a fleet of large nodes keeps the most recent ones and the rest are decoded as before.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .lru import ByteLRU
from .model import Inventory, positional

__all__ = ["ResolverState", "SightedNodes", "Sighting", "Sightings", "names_of", "sighted_inventories"]

#: ``state()`` of an ``InventoryResolver`` (see ``Sightings``): None when its answers depend on the
#: node alone; else an object whose identity changes whenever its answers may change
ResolverState = Callable[[], object]

#: a ``Sighting`` and the two weak references it holds, besides its key's bytes
_SIGHTING_BYTES = 240


@dataclass(slots=True, frozen=True)
class Sighting:
    """What a node's exact bytes resolved to: its name and (weakly) its inventory, in ``state``."""

    name: str
    inventory: weakref.ReferenceType[Inventory]
    state: weakref.ReferenceType[Any] | None


#: ``Sighting`` from its fields in order (one per node new to a CA call)
_SIGHTING = positional(Sighting)


class Sightings:
    """The nodes answered for, by their JSON bytes (``node bytes`` in ``/metrics``): one LRU."""

    def __init__(self, budget: int) -> None:
        self.lru: ByteLRU[bytes, Sighting] = ByteLRU(budget, name="node bytes")

    def get(self, raw: bytes) -> Sighting | None:
        """The sighting of these bytes (its name is a node that passed the wire checks), if any."""
        return self.lru.get(raw)

    def remember(self, raw: bytes, name: str, inventory: Inventory, state: object) -> None:
        """Keep ``raw``'s name and inventory (resolved in ``state``), charged its bytes."""
        try:
            sighting = _SIGHTING(name, weakref.ref(inventory), None if state is None else weakref.ref(state))
        except TypeError:  # a state that takes no weak reference: not remembered
            return
        self.lru.put(raw, sighting, len(raw) + len(name) + _SIGHTING_BYTES)

    def clear(self) -> None:
        self.lru.clear()


def sighted_inventory(sighting: Sighting, state: object) -> Inventory | None:
    """The inventory ``sighting`` resolved to, if it still holds: alive, and resolved in ``state``."""
    ref = sighting.state
    if (ref() if ref is not None else None) is not state:
        return None
    return sighting.inventory()


class SightedNodes(Sequence[Any]):
    """A request's nodes as the wire sent them: each one's bytes, its sighting (or None), and its
    decoded object, decoded on first access (a sighted node is never read by the filter)."""

    __slots__ = ("raw", "sightings", "_decoded")

    def __init__(self, raw: list[bytes], sightings: list[Sighting | None], decoded: list[Any]) -> None:
        self.raw = raw
        self.sightings = sightings
        self._decoded = decoded  # None where not decoded yet

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.raw)))]
        node = self._decoded[index]
        if node is None:
            node = self._decoded[index] = orjson.loads(self.raw[index])
        return node

    @classmethod
    def unseen(cls, raw: list[bytes]) -> SightedNodes:
        """Nodes as their bytes alone, none sighted nor decoded yet (each decoded when read)."""
        return cls(raw, [None] * len(raw), [None] * len(raw))

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self.raw)):
            yield self[i]


def sighted_inventories(
    nodes: SightedNodes,
    inventory_of: Callable[[Any], Inventory],
    sightings: Sightings,
    touch: Callable[[Inventory], bool],
    state: object,
) -> Iterator[tuple[str, Inventory]]:
    """Each node's name and inventory: a sighted node's from its sighting while it holds and its
    registration is still cached (``touch``, which marks it used), any other decoded, resolved by
    ``inventory_of`` and remembered."""
    raw, decoded = nodes.raw, nodes._decoded
    for i, sighting in enumerate(nodes.sightings):
        if sighting is not None:
            inventory = sighted_inventory(sighting, state)
            if inventory is not None and touch(inventory):
                yield sighting.name, inventory
                continue
        node = decoded[i] if decoded[i] is not None else nodes[i]  # (decoded by the wire checks)
        name = node["metadata"]["name"]
        inventory = inventory_of(node)
        sightings.remember(raw[i], name, inventory, state)
        yield name, inventory


def names_of(nodes: Sequence[Any]) -> list[str]:
    """Every node's name, without decoding a sighted one."""
    if isinstance(nodes, SightedNodes):
        return [
            s.name if s is not None else nodes[i]["metadata"]["name"] for i, s in enumerate(nodes.sightings)
        ]
    return [node["metadata"]["name"] for node in nodes]

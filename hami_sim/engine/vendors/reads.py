"""What a vendor reads from a node: one declaration per backend, and every cache view derived from it.

A backend declares, once (``Vendor.node_reads``), which node sources make it find devices (its
registration annotations or ``status.capacity`` names) and which other node sources feed its
devices, naming the model field each one fills (``custom_info``, ``id``, ``pair_scores``). The
simulator's three views of that declaration follow from it here and nowhere else:

- ``sources``: which annotation keys and capacity names call the vendor in (None: every node);
- ``annotation_keys``: the annotation keys whose values alone key the node's inventory, when that
  is all the vendor reads (the simulator then never calls ``key`` per node);
- ``key``: the inventory key, the values of every source whose field a fit reads.

"Whose field a fit reads" is the model's own declaration (``DeviceInfo.FIT_READS`` and
``Inventory.FIT_READS``): a source that fills only fields no fit reads cannot change an answer, so
it stays out of the key, and a source that fills a read field is always in it. Capacity vendors
name their devices after the node (``id``), so the node name is in their key exactly while ``id``
is read. ``tests/vendors/test_node_reads.py`` checks that equal keys decode to devices equal in
every field a fit reads, for every registered backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..model import DeviceInfo, Inventory
from ..registration_templates import RebuiltDevices, known_registration

__all__ = ["NodeReads", "fit_reads_field", "node_name", "node_labels", "capacity_raw"]


def fit_reads_field(name: str) -> bool:
    """Whether some fit reads the model field ``name`` (of a device or of the node's inventory)."""
    return name in DeviceInfo.FIT_READS or name in Inventory.FIT_READS


def node_name(node: Mapping) -> str:
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def node_labels(node: Mapping) -> Mapping[str, str]:
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _capacity(node: Mapping) -> Mapping:
    status = node.get("status") if isinstance(node, Mapping) else None
    capacity = status.get("capacity") if isinstance(status, Mapping) else None
    return capacity if isinstance(capacity, Mapping) else {}


def capacity_raw(node: Mapping, name: str) -> object:
    """``status.capacity[name]`` as the API sent it (None when absent)."""
    return _capacity(node).get(name)


@dataclass(frozen=True, slots=True)
class NodeReads:
    """The node sources one backend reads.

    ``registers``: annotation keys whose presence registers devices (the whole device list comes
    from them); ``capacity``: ``status.capacity`` names that do (devices synthesised from numbers).
    ``annotations`` / ``labels``: further annotation keys / node labels read once registered, each
    -> the model field it fills; ``name``: the field the node name fills ("" = not read).
    ``every_node``: the vendor is asked on every node, registered or not (NVIDIA, the default
    backend: a lookup per node would cost more than the empty read). ``json_devices``: the one
    registration is a JSON ``[]DeviceInfo`` that ``node_devices`` returns as decoded
    (``node_codecs.json_devices``) when none of ``annotations`` is present, and nothing when it is
    absent: such a node's devices may then be a remembered template's (``rebuilt``).
    """

    registers: tuple[str, ...] = ()
    capacity: tuple[str, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    every_node: bool = False
    json_devices: bool = False

    def __post_init__(self) -> None:
        if self.json_devices and (len(self.registers) != 1 or self.capacity or self.labels or self.name):
            raise ValueError("json_devices: one registration annotation, and nothing read but annotations")

    def sources(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """(annotation keys, capacity names) whose presence calls the vendor in; None = every node."""
        return None if self.every_node else (self.registers, self.capacity)

    def read_annotations(self) -> tuple[str, ...]:
        """The annotation keys in the key: the registrations and every one that fills a read field."""
        return self.registers + tuple(k for k, f in self.annotations.items() if fit_reads_field(f))

    def _read_labels(self) -> tuple[str, ...]:
        return tuple(k for k, f in self.labels.items() if fit_reads_field(f))

    def reads_name(self) -> bool:
        return bool(self.name) and fit_reads_field(self.name)

    def annotation_keys(self) -> tuple[str, ...] | None:
        """The annotation keys that are all the vendor's key reads; None when it reads more."""
        if self.capacity or self._read_labels() or self.reads_name():
            return None
        return self.read_annotations()

    def key(self, word: str, annotations: Mapping[str, str], node: Mapping) -> tuple:
        """The inventory key: ``word`` and, once a registration source is present, the value of every
        source whose field a fit reads (annotations, capacity, labels, the node name)."""
        keys = self.read_annotations()
        if self.annotation_keys() is not None:
            return (word, *map(annotations.get, keys))
        capacity = tuple(capacity_raw(node, n) for n in self.capacity)
        registered = any(v is not None for v in capacity) or any(k in annotations for k in self.registers)
        if not registered:
            return (word,)
        labels = node_labels(node)
        return (
            word,
            *map(annotations.get, keys),
            *capacity,
            *(labels.get(k) for k in self._read_labels()),
            node_name(node) if self.reads_name() else None,
        )

    def rebuilt(self, word: str, annotations: Mapping[str, str]) -> RebuiltDevices | None:
        """The devices ``node_devices`` finds, when they are a remembered registration template's
        but for their UUIDs (``registration_templates.known_registration``): only for a ``json_devices``
        backend, with none of its other annotations present; None otherwise (decode the node)."""
        if not self.json_devices or any(key in annotations for key in self.annotations):
            return None
        raw = annotations.get(self.registers[0])
        return known_registration(raw, word) if type(raw) is str else None

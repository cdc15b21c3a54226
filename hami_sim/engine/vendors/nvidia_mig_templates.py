"""NVIDIA MIG before HAMi v2.10.0 (v2.8.3 and v2.9.0 ``pkg/device/nvidia``): MIG templates.

Under those releases a MIG-mode GPU does not register what it can give. The scheduler's device
config lists, per GPU model, the *geometries* a GPU may be split into (``knownMigGeometries``: each
geometry a list of templates ``name, memory, core, count``); a MIG GPU takes the geometries of the
first entry one of whose model names its type contains. The GPU follows one geometry at a time: its
slot list is that geometry flattened (a template of count 3 gives three slots, in order).

- The first instance on a GPU with no slot taken picks the first (geometry, template) whose memory
  covers it, in config order, and takes that template's first slot; every later instance takes the
  first free slot of the GPU's geometry that covers it (``take``).
- Fit's last check (HAMi's ``CustomFilterRule``) asks whether, after the instances this container
  already collected *on any GPU* took a slot each, a slot still covers the request's memory as
  written (0 for a percentage request) (``fits``); a refusal reads ``CardNotFoundCustomFilterRule``.
- The allocation names an instance by a suffix on the GPU's UUID, ``GPU-x[g-n]``: ``g`` is the
  geometry and ``n`` the template's index in it for a GPU's first instance, the slot's position for
  the later ones. Live usage strips the suffix to find the GPU, builds the slot list from the first
  suffix's geometry and marks position ``n`` taken, whichever way it was written
  (``TemplateReservations``).

The engine keeps what a GPU holds in ``DeviceUsage.mig_in_use``, one *mark* per instance: the
suffix its allocation carries and the slot position it holds (``MigPlacement(position, 1)``).
Where v2.9.0 would index past a slot list or a geometry list (a stale suffix: its scheduler
crashes on it), the mark is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import ContainerDevice, DeviceUsage, MigPlacement
from .nvidia_mig import HAMI_CORE_MODE, MIG_MODE

if TYPE_CHECKING:
    from ..allocations import NodeUsage, PodAllocation
    from .nvidia_mig import MigAllocation

__all__ = [
    "MigTemplate",
    "MigGeometries",
    "Slot",
    "TemplateMig",
    "TemplateReservations",
    "TEMPLATE_RESERVATIONS",
    "allocated_uuid",
    "base_uuid",
    "parse_suffix",
    "flatten",
    "geometries_from_settings",
]

ALLOCATE_FAILED = "mig template allocate resource fail"


@dataclass(slots=True, frozen=True)
class MigTemplate:
    """One template of a geometry (HAMi ``MigTemplate``): ``count`` instances of ``memory`` MiB."""

    name: str
    memory: int
    core: int
    count: int


@dataclass(slots=True, frozen=True)
class MigGeometries:
    """One ``knownMigGeometries`` entry: the models it is for and the geometries they may take."""

    models: tuple[str, ...]
    geometries: tuple[tuple[MigTemplate, ...], ...]


@dataclass(slots=True)
class Slot:
    """One slot of a GPU's slot list (HAMi ``MigTemplateUsage``)."""

    name: str
    memory: int
    core: int
    in_use: bool = False


_SUFFIX = re.compile(r"[+-]?[0-9]+")


def _atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi`` on 64-bit: optional sign, ASCII digits, nothing else."""
    if not _SUFFIX.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def parse_suffix(uuid: str) -> tuple[int, int] | None:
    """``ExtractMigTemplatesFromUUID``: ``GPU-x[g-n]`` -> ``(g, n)``; None where HAMi errs."""
    parts = uuid.split("[")
    if len(parts) < 2:
        return None
    parts = parts[1].split("]")
    if len(parts) < 2:
        return None
    parts = parts[0].split("-")
    if len(parts) < 2:
        return None
    geometry, position = _atoi(parts[0]), _atoi(parts[1])
    if geometry is None or position is None:
        return None
    return geometry, position


def base_uuid(uuid: str) -> str:
    """The GPU an allocated UUID names: the text before a MIG suffix's ``[``."""
    return uuid.split("[", 1)[0] if "[" in uuid else uuid


def allocated_uuid(device: ContainerDevice) -> str:
    """The UUID HAMi writes for a placed container device: with its ``[g-n]`` suffix on a MIG GPU."""
    suffix = device.mig_profile
    return device.uuid + suffix if suffix.startswith("[") else device.uuid


def flatten(geometry: tuple[MigTemplate, ...]) -> list[Slot]:
    """``PlatternMIG``: each template repeated ``count`` times, in order."""
    return [Slot(t.name, t.memory, t.core) for t in geometry for _ in range(max(t.count, 0))]


def _mark(suffix: str, position: int) -> tuple[str, MigPlacement]:
    return suffix, MigPlacement(position, 1)


class TemplateMig:
    """The MIG rules of v2.8.3/v2.9.0 for one ``knownMigGeometries`` config (the release-chosen
    counterpart of ``nvidia_mig``'s profiles: ``NvidiaVendor.mig``)."""

    __slots__ = ("known", "_by_type")
    refusal = R.CARD_NOT_FOUND_CUSTOM_FILTER_RULE

    def __init__(self, known: tuple[MigGeometries, ...]) -> None:
        self.known = known
        self._by_type: dict[str, tuple[tuple[MigTemplate, ...], ...]] = {}  # device type -> geometries

    @property
    def reservations(self) -> TemplateReservations:
        """What live usage counts under this model: the allocated UUIDs' suffixes."""
        return TEMPLATE_RESERVATIONS

    def geometries(self, device_type: str) -> tuple[tuple[MigTemplate, ...], ...]:
        """``GetNodeDevices``: a MIG GPU's geometries, from the first config entry naming its model."""
        found = self._by_type.get(device_type)
        if found is None:
            entry = next((e for e in self.known if any(m in device_type for m in e.models)), None)
            found = self._by_type[device_type] = entry.geometries if entry is not None else ()
        return found

    def slots(self, dev: DeviceUsage) -> tuple[int, list[Slot]]:
        """The GPU's geometry index and slot list, built from its marks (none: ``(0, [])``)."""
        geometries = self.geometries(dev.type)
        index = 0
        slots: list[Slot] = []
        for suffix, placement in dev.mig_in_use:
            parsed = parse_suffix(suffix)
            if parsed is None:
                continue
            if not slots:  # the first mark naming a slot of a known geometry sets the geometry
                if not 0 <= parsed[0] < len(geometries):
                    continue
                flat = flatten(geometries[parsed[0]])
                if not 0 <= placement.start < len(flat):
                    continue
                index, slots = parsed[0], flat
            if 0 <= placement.start < len(slots):
                slots[placement.start].in_use = True
        return index, slots

    def needs_reset(self, dev: DeviceUsage) -> bool:
        """``migNeedsReset``: no slot is taken (the slot list is empty), so the next instance may
        choose the geometry."""
        return not self.slots(dev)[1]

    def custom_filter_rule(self, dev: DeviceUsage, memreq: int, to_allocate: list[ContainerDevice]) -> bool:
        """``CustomFilterRule``: after ``to_allocate`` took a slot each, one still covers ``memreq``."""
        slots = self.slots(dev)[1]
        if not slots:
            slots = self._first_fitting(dev, memreq)
        for prior in to_allocate:
            free = next((s for s in slots if not s.in_use and s.memory >= prior.usedmem), None)
            if free is None:
                return False
            free.in_use = True
        return any(not s.in_use and s.memory >= memreq for s in slots)

    def _first_fitting(self, dev: DeviceUsage, memreq: int) -> list[Slot]:
        for geometry in self.geometries(dev.type):
            if any(t.memory >= memreq for t in geometry):
                return flatten(geometry)
        return []

    def fits(self, dev: DeviceUsage, memreq: int, written: int, collected: list[ContainerDevice]) -> bool:
        """Fit's MIG check: ``CustomFilterRule`` with the memory as the request wrote it (``written``;
        v2.9.0 passed the request, not the memory it resolved), after every device collected."""
        return self.custom_filter_rule(dev, written, collected)

    def take(self, dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
        """``AddResourceUsage`` on a MIG GPU: mark the slot the instance takes and count it (the
        slot's memory and cores; the instance's own when no template covers a first instance)."""
        dev.used += 1  # counted before the slot is sought, even when none is found
        index, slots = self.slots(dev)
        if not slots:
            taken = self._first_slot(dev, chosen.usedmem)
            if taken is None:  # no template covers it: counted as asked, no slot marked
                dev.usedmem += chosen.usedmem
                dev.usedcores += chosen.usedcores
                return None
        else:
            position = next(
                (i for i, s in enumerate(slots) if not s.in_use and s.memory >= chosen.usedmem), None
            )
            if position is None:
                return ALLOCATE_FAILED
            taken = (f"[{index}-{position}]", position, slots[position])
        suffix, position, slot = taken
        dev.mig_in_use.append(_mark(suffix, position))
        dev.usedmem += slot.memory
        dev.usedcores += slot.core
        return None

    def _first_slot(self, dev: DeviceUsage, memory: int) -> tuple[str, int, Slot] | None:
        """A GPU's first instance: the first template (in config order) covering ``memory``; its
        suffix names the template's index in its geometry, its slot is the template's first."""
        for g, geometry in enumerate(self.geometries(dev.type)):
            flat = flatten(geometry)
            position = 0
            for t_index, template in enumerate(geometry):
                if template.memory >= memory and position < len(flat):
                    return f"[{g}-{t_index}]", position, flat[position]
                position += max(template.count, 0)
        return None

    def placed(self, dev: DeviceUsage, chosen: ContainerDevice) -> ContainerDevice:
        """The instance ``take`` marked last: the slot's memory and cores, and its UUID suffix (in
        ``mig_profile``; ``allocated_uuid``). A GPU with no slot taken: the instance as asked."""
        slots = self.slots(dev)[1]
        if not slots:
            return chosen
        suffix, placement = dev.mig_in_use[-1]
        slot = slots[placement.start]
        return ContainerDevice(
            chosen.idx, chosen.uuid, chosen.type, slot.memory, slot.core, suffix, placement
        )


class TemplateReservations:
    """Live usage under the template model (``Vendor.reservations``): every allocated UUID with a
    ``[g-n]`` suffix marks slot ``n`` of its GPU (the UUID before the suffix); a hami-core GPU with
    such a UUID goes unhealthy. The ``hami.io/vgpu-mig-allocations`` annotation is not read."""

    __slots__ = ()

    annotation = ""  # nothing beside the allocated annotation

    def decode(self, text: str) -> tuple[MigAllocation, ...]:
        """Nothing: the reservations are the allocated UUIDs' suffixes."""
        return ()

    def count(self, usage: NodeUsage, pod: PodAllocation, registered: Mapping[str, str]) -> None:
        """Mark the slots the pod's suffixed UUIDs name (``registered``: UUID -> mode)."""
        for _vendor, dev in pod.devices:
            if "[" not in dev.uuid:
                continue
            uuid = base_uuid(dev.uuid)
            mode = registered.get(uuid)
            if mode is None:
                continue  # listed as unknown already
            if mode == HAMI_CORE_MODE:
                usage.devices[uuid].unhealthy = True
                usage.problems.append((pod.key, f"a MIG task runs on hami-core GPU {uuid}"))
                continue
            parsed = parse_suffix(dev.uuid)
            if parsed is None or mode != MIG_MODE:
                usage.problems.append((pod.key, f"MIG suffix of {dev.uuid} names no slot of its GPU"))
                continue
            usage.devices[uuid].mig.append(_mark(f"[{parsed[0]}-{parsed[1]}]", parsed[1]))


#: the one instance the template model declares (stateless)
TEMPLATE_RESERVATIONS = TemplateReservations()


def _template(raw: object) -> MigTemplate:
    """One template of a configured geometry; ``ValueError`` unless a mapping of integer fields."""
    if not isinstance(raw, Mapping):
        raise ValueError("a knownMigGeometries template must be a mapping of name, memory, core, count")
    values = [raw.get(key, 0) for key in ("memory", "core", "count")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(
            f"knownMigGeometries template {raw.get('name', '')!r}: memory, core, count must be integers"
        )
    return MigTemplate(str(raw.get("name", "")), *values)


def geometries_from_settings(entries: object) -> tuple[MigGeometries, ...] | None:
    """``knownMigGeometries`` as Helm writes it: ``[{models: [...], allowedGeometries: [[{name,
    memory, core, count}]]}]``; None when not given (the release's default applies);
    ``ValueError`` on another shape."""
    if entries is None:
        return None
    if not isinstance(entries, list):
        raise ValueError("knownMigGeometries must be a list")
    out = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise ValueError("a knownMigGeometries entry must be a mapping")
        geometries = entry.get("allowedGeometries") or []
        if not isinstance(geometries, list) or not all(isinstance(g, list) for g in geometries):
            raise ValueError("knownMigGeometries allowedGeometries must be a list of template lists")
        models = tuple(str(m) for m in entry.get("models") or ())
        out.append(MigGeometries(models, tuple(tuple(_template(t) for t in g) for g in geometries)))
    return tuple(out)

"""Vendor descriptors: everything hami-sim needs to know about one HAMi vendor family, in one value.

Each ``vendors/<v>.py`` module exports one ``VendorDescriptor``: the block of HAMi's Helm device
config it reads (name, config class and Helm defaults), its backend class(es) (Ascend and Iluvatar:
one backend per configured chip), and per backend the ``ProfileFields`` the profiles app needs (row
fields, validation hooks and the registration renderer). ``vendors/__init__.py`` lists the
descriptors in HAMi's vendor order; the engine's ``default_vendors``, the configured vendor build
(``hami_sim.runtime.simulator``), the profile choices, validation and rendering, and the vendor
table of ``docs/vendors.md`` (checked by a test) all derive from that list, so adding a vendor is
adding one module and one line to the list.

Pure Python: registrations are rendered with the engine's own codecs, never with Django.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..annotations import encode_device_json, encode_legacy
from ..model import DeviceInfo
from .base import Vendor

__all__ = [
    "CODECS",
    "CUSTOMINFO_HELP",
    "CapacityPanel",
    "DEFAULT_PANELS",
    "MEMORY_PANEL",
    "CORES_PANEL",
    "SLOTS_PANEL",
    "Registration",
    "RenderInput",
    "Renderer",
    "ProfileFields",
    "Backend",
    "VendorDescriptor",
    "render_json",
    "render_legacy",
    "capacity_renderer",
    "row_extra",
    "first_extra",
    "count_resource",
]

#: how a backend's devices are registered on a node (docs/vendors.md): a JSON ``[]DeviceInfo`` or a
#: legacy colon-format annotation, a vendor's own JSON annotation, or numbers in ``status.capacity``
CODECS = ("json", "legacy", "metax-sgpu", "enflame-drs", "capacity")

CUSTOMINFO_HELP = (
    'object copied into the device\'s custominfo (e.g. Ascend {"NetworkID": 0}, AMD {"pciBDF": "..."})'
)


@dataclass(frozen=True, slots=True)
class CapacityPanel:
    """One panel of a backend's capacity chart: its title (with the unit) and the device fields
    (registered total, used) it stacks; the dashboard draws a backend's ``ProfileFields.panels``."""

    title: str
    total_key: str
    used_key: str


MEMORY_PANEL = CapacityPanel("memory (MiB)", "devmem", "usedmem")
CORES_PANEL = CapacityPanel("cores (%)", "devcore", "usedcores")
SLOTS_PANEL = CapacityPanel("slots", "count", "used")
#: where HAMi's device fields mean what NVIDIA's mean: memory MiB, a cores percentage, split slots
DEFAULT_PANELS = (MEMORY_PANEL, CORES_PANEL, SLOTS_PANEL)

#: a profile row as the profiles app stores it (``type``, ``devmem``, ..., ``extra``, ``quantity``)
Row = Mapping[str, Any]


@dataclass(slots=True)
class Registration:
    """What a fresh node carries for one vendor's devices."""

    annotations: dict[str, str] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=dict)  # status.capacity and allocatable
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RenderInput:
    """A profile's devices (placeholder IDs, one per ``quantity``) and what else a renderer reads."""

    devices: Sequence[DeviceInfo]
    rows: Sequence[Row]  # the rows the devices came from (row extras such as qosPolicy)
    pair_scores: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # by device ID
    instance_type: str = ""  # the node group's machine type

    @property
    def slots(self) -> int:
        """Devices x split count: what the device plugin advertises as the count resource."""
        return sum(d.count for d in self.devices)


#: ``(configured backend, input, count resource name) -> registration``; the backend names the
#: register key and the resources
Renderer = Callable[[Any, RenderInput, str], Registration]


@dataclass(frozen=True, slots=True)
class ProfileFields:
    """How device-profile rows describe one backend (by CommonWord) and how they are rendered.

    ``fixed``: row fields HAMi fixes for this backend (capacity backends synthesise identical
    devices); ``devmem_unit``: devmem must be a multiple of it (capacity units), 0 = any;
    ``extras``: keys a row's ``extra`` may carry -> help text. ``check_row(row, extra)`` and
    ``check_rows(rows)`` add the backend's own rules to the generic ones; ``row_extra`` recovers a
    row's ``extra`` from a registered device ("profile from node"); ``count_field`` is the config
    field naming the pod resource that counts devices.
    """

    label: str
    codec: str
    help: str
    render: Renderer
    extras: Mapping[str, str] = field(default_factory=dict)
    fixed: Mapping[str, object] = field(default_factory=dict)
    devmem_unit: int = 0
    pair_scores: bool = False  # rows may carry operator topology scores (NVIDIA)
    modes: tuple[str, ...] = ("hami-core",)  # device modes a row may name (NVIDIA: mig, mps too)
    check_row: Callable[[Row, Mapping[str, Any]], dict[str, str]] | None = None
    check_rows: Callable[[Sequence[Row]], str] | None = None
    row_extra: Callable[[DeviceInfo], dict[str, Any]] | None = None
    count_field: str = "resource_count_name"
    #: what one device is called (chart axes) and the panels of its capacity chart
    device_noun: str = "GPU"
    panels: tuple[CapacityPanel, ...] = DEFAULT_PANELS

    def __post_init__(self) -> None:
        if self.codec not in CODECS:
            raise ValueError(f"codec {self.codec!r} is not one of {CODECS}")


@dataclass(frozen=True, slots=True)
class Backend:
    """One HAMi backend of a family: its class, built with the family's config (or a chip's)."""

    vendor_class: Callable[[Any], Vendor]
    #: the profile fields, given the backend's CommonWord (chip families build one per chip)
    profile: Callable[[str], ProfileFields]


@dataclass(frozen=True, slots=True)
class VendorDescriptor:
    """One HAMi vendor family: its Helm config block, its backends, its place in HAMi's order.

    ``block`` is the key of ``HAMI["VENDORS"]`` (HAMi's Helm device-config block); ``order`` sorts
    the registry in HAMi v2.10.0's registration order (``InitDevicesWithConfig``). hami-sim merges a
    node's devices and splits a container's requests in this order; HAMi walks its ``DevicesMap``
    there, a Go map, so its order is random and this one is the reproducible stand-in.
    Per-chip families (``chips`` non-empty) are configured per chip by CommonWord and contribute
    every backend once per chip; the others build each backend from one ``config_class`` value.
    ``settings_block``: the ``HAMI`` key that configures the block instead of ``HAMI["VENDORS"]``,
    read by ``from_settings`` (NVIDIA: ``HAMI["NVIDIA"]``, with its own field spelling).
    """

    block: str
    order: int
    config_class: type
    backends: tuple[Backend, ...]
    chips: tuple[Any, ...] = ()
    settings_block: str = ""
    from_settings: Callable[[Mapping[str, Any]], Any] | None = None

    @property
    def per_chip(self) -> bool:
        return bool(self.chips)

    def default_configs(self) -> tuple[Any, ...]:
        """The Helm defaults: one config per chip, or the family's one config."""
        return self.chips if self.per_chip else (self.config_class(),)

    def build(self, configs: Iterable[Any] | None = None) -> list[Vendor]:
        """The configured backends, each backend class once per config (Helm defaults if none)."""
        chosen = tuple(configs) if configs is not None else self.default_configs()
        return [backend.vendor_class(c) for c in chosen for backend in self.backends]

    def profiles(self) -> dict[str, ProfileFields]:
        """CommonWord -> profile fields of every default backend, in registration order."""
        out: dict[str, ProfileFields] = {}
        for config in self.default_configs():
            for backend in self.backends:
                word = backend.vendor_class(config).common_word
                out[word] = backend.profile(word)
        return out


# -- renderers shared by several backends -------------------------------------------------------


def first_extra(rows: Sequence[Row], key: str) -> object:
    """``extra[key]`` of the first row that has it (values that are per node, not per row)."""
    for row in rows:
        extra = row.get("extra") or {}
        if isinstance(extra, Mapping) and key in extra:
            return extra[key]
    return None


def row_extra(rows: Sequence[Row], device_index: int, key: str) -> object:
    """``extra[key]`` of the row that produced device ``device_index``."""
    seen = 0
    for row in rows:
        seen += int(row.get("quantity", 1))
        if device_index < seen:
            extra = row.get("extra") or {}
            return extra.get(key) if isinstance(extra, Mapping) else None
    return None


def count_resource(vendor: Any, profile: ProfileFields) -> str:
    """The pod resource that counts a backend's devices (what its device plugin advertises); for
    another release's backend of the profile, configured without that field (Enflame's shared GCUs
    before v2.10), its own count resource."""
    name: str = getattr(vendor.config, profile.count_field, None) or vendor.config.resource_count_name
    return name


def render_json(vendor: Any, data: RenderInput, count_name: str) -> Registration:
    """A JSON ``[]DeviceInfo`` under the backend's register key, and the count in capacity."""
    out = Registration()
    out.annotations[vendor.register_key] = encode_device_json(list(data.devices))
    out.capacity[count_name] = str(data.slots)
    return out


def render_legacy(vendor: Any, data: RenderInput, count_name: str) -> Registration:
    """The legacy colon-format annotation under the backend's register key (Hygon, Iluvatar)."""
    out = Registration()
    out.annotations[vendor.register_key] = encode_legacy(list(data.devices))
    out.capacity[count_name] = str(data.slots)
    return out


def capacity_renderer(values: Callable[[Any, Sequence[DeviceInfo]], dict[str, str]]) -> Renderer:
    """A capacity backend's renderer: ``values(config, devices)`` numbers, plus the device count
    under the count resource unless ``values`` already set it."""

    def render(vendor: Any, data: RenderInput, count_name: str) -> Registration:
        out = Registration()
        out.capacity.update(values(vendor.config, data.devices))
        out.capacity.setdefault(count_name, str(data.slots))
        return out

    return render

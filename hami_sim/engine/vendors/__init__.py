"""Device vendors: the registry of vendor descriptors, in HAMi's registration order.

One module per HAMi vendor family (``pkg/device/<vendor>``); each backend class implements
``base.Vendor`` and each module exports one ``DESCRIPTOR`` (``registry.VendorDescriptor``). Ascend and
Iluvatar are configured per chip, so they contribute one backend per chip. Everything that lists
vendors derives from ``descriptors()``: ``default_vendors`` here, the configured build in
``hami_sim.runtime.simulator``, the profiles app's choices, validation and rendering, and the vendor
table of docs/vendors.md (checked by ``tests/vendors/test_registry.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..hami_releases import HamiRules
from . import (
    amd,
    ascend,
    awsneuron,
    biren,
    cambricon,
    enflame,
    hygon,
    iluvatar,
    kunlun,
    metax,
    mthreads,
    nvidia,
    vastai,
)
from .amd import AmdConfig, AmdVendor
from .ascend import DEFAULT_ASCEND_CONFIGS, AscendConfig, AscendVendor, VnpuTemplate, ascend_vendors
from .awsneuron import AwsNeuronConfig, AwsNeuronVendor
from .base import FitOutcome, PriorDevices, Reservations, ResourceGetter, Vendor
from .biren import BirenConfig, BirenVendor
from .cambricon import CambriconConfig, CambriconVendor
from .enflame import EnflameConfig, EnflameDrsVendor, EnflameGcuVendor
from .hygon import HygonConfig, HygonVendor
from .iluvatar import DEFAULT_ILUVATAR_CHIPS, IluvatarConfig, IluvatarVendor, iluvatar_vendors
from .kunlun import KunlunConfig, KunlunVendor, KunlunVxpuVendor
from .metax import MetaxConfig, MetaxGpuVendor, MetaxSgpuVendor
from .mthreads import MthreadsConfig, MthreadsVendor
from .nvidia import NvidiaConfig, NvidiaVendor
from .registry import Backend, ProfileFields, Registration, RenderInput, VendorDescriptor
from .vastai import VastaiConfig, VastaiVendor

__all__ = [
    "FitOutcome",
    "ResourceGetter",
    "Vendor",
    "NvidiaConfig",
    "NvidiaVendor",
    "AmdConfig",
    "AmdVendor",
    "AscendConfig",
    "AscendVendor",
    "VnpuTemplate",
    "DEFAULT_ASCEND_CONFIGS",
    "AwsNeuronConfig",
    "AwsNeuronVendor",
    "BirenConfig",
    "BirenVendor",
    "CambriconConfig",
    "CambriconVendor",
    "EnflameConfig",
    "EnflameDrsVendor",
    "EnflameGcuVendor",
    "HygonConfig",
    "HygonVendor",
    "IluvatarConfig",
    "IluvatarVendor",
    "DEFAULT_ILUVATAR_CHIPS",
    "KunlunConfig",
    "KunlunVendor",
    "KunlunVxpuVendor",
    "MetaxConfig",
    "MetaxGpuVendor",
    "MetaxSgpuVendor",
    "MthreadsConfig",
    "MthreadsVendor",
    "VastaiConfig",
    "VastaiVendor",
    "PriorDevices",
    "Backend",
    "ProfileFields",
    "Registration",
    "RenderInput",
    "VendorDescriptor",
    "descriptors",
    "descriptor",
    "register",
    "unregister",
    "profile_fields",
    "default_word",
    "default_vendors",
    "allocated_annotations",
    "pod_info_annotations",
    "reservation_rules",
    "ascend_vendors",
    "iluvatar_vendors",
]


_REGISTRY: dict[str, VendorDescriptor] = {}
_ORDERED: list[VendorDescriptor] = []
_PROFILES: dict[str, ProfileFields] = {}
_RESERVATIONS: list[Reservations] = []
_RESERVING: list[Vendor] = []  # the backends declaring one (``reservation_rules`` under a release)


def register(desc: VendorDescriptor) -> None:
    """Add (or replace) a vendor family; the registry stays sorted by HAMi's order."""
    _REGISTRY[desc.block] = desc
    _reindex()


def unregister(block: str) -> None:
    """Remove a vendor family (tests that register a toy vendor undo it so)."""
    _REGISTRY.pop(block, None)
    _reindex()


def _reindex() -> None:
    _ORDERED[:] = sorted(_REGISTRY.values(), key=lambda d: d.order)
    _PROFILES.clear()
    rules: dict[int, Reservations] = {}
    _RESERVING.clear()
    for desc in _ORDERED:
        _PROFILES.update(desc.profiles())
        for vendor in desc.build():
            if vendor.reservations is not None:
                rules.setdefault(id(vendor.reservations), vendor.reservations)
                _RESERVING.append(vendor)
    _RESERVATIONS[:] = rules.values()


def descriptors() -> tuple[VendorDescriptor, ...]:
    """Every registered vendor family in HAMi's registration order."""
    return tuple(_ORDERED)


def descriptor(block: str) -> VendorDescriptor:
    """The family configured by ``HAMI["VENDORS"][block]``; KeyError when unknown."""
    return _REGISTRY[block]


def default_word() -> str:
    """The CommonWord of the registry's first backend (HAMi's order: NVIDIA): what a device without a
    ``devicevendor`` and a profile without a vendor belong to."""
    return next(iter(_PROFILES))


def profile_fields() -> dict[str, ProfileFields]:
    """CommonWord -> profile fields of every default backend, in registration order (a copy)."""
    return dict(_PROFILES)


def default_vendors(
    nvidia: NvidiaConfig | None = None,
    *,
    nvidia_only: bool = False,
    ascend: tuple[AscendConfig, ...] | None = None,
    iluvatar_chips: tuple[str, ...] | None = None,
) -> list[Vendor]:
    """Every registered backend with Helm-default resource names (``nvidia_only`` for NVIDIA alone).

    ``nvidia``, ``ascend`` and ``iluvatar_chips`` replace those families' defaults. A vendor whose
    registration (annotation or capacity) is absent from a node contributes no devices and costs
    one dictionary lookup, so enabling all of them is cheap.
    """
    overrides: dict[str, tuple[object, ...]] = {}
    if nvidia is not None:
        overrides["nvidia"] = (nvidia,)
    if ascend is not None:
        overrides["ascend"] = ascend
    if iluvatar_chips is not None:
        overrides["iluvatar"] = tuple(IluvatarConfig.for_chip(chip) for chip in iluvatar_chips)
    vendors: list[Vendor] = []
    for desc in descriptors():
        if nvidia_only and desc.block != "nvidia":
            continue
        vendors += desc.build(overrides.get(desc.block))
    return vendors


def allocated_annotations(vendors: Iterable[Vendor] | None = None) -> dict[str, str]:
    """CommonWord -> the pod annotation carrying that vendor's allocation (HAMi's ``SupportDevices``)."""
    return {v.common_word: v.allocated_key() for v in (default_vendors() if vendors is None else vendors)}


def pod_info_annotations(vendors: Iterable[Vendor] | None = None) -> frozenset[str]:
    """The pod annotations some vendor rule reads from the pods already on a device (HAMi
    ``PodInfos``): what live usage keeps of each pod for ``DeviceUsage.pod_infos``."""
    chosen = default_vendors() if vendors is None else vendors
    return frozenset(key for v in chosen for key in v.pod_info_annotations)


def reservation_rules(rules: HamiRules | None = None) -> tuple[Reservations, ...]:
    """Every registered backend's ``Vendor.reservations`` rule, once each, in registration order:
    what live usage decodes and counts beside the allocated annotations (NVIDIA's MIG placements);
    under ``rules``' release when given (before v2.10.0, NVIDIA's MIG UUID suffixes)."""
    if rules is None:
        return tuple(_RESERVATIONS)
    chosen: dict[int, Reservations] = {}
    for vendor in _RESERVING:
        twin = vendor.under(rules)
        rule = twin.release_reservations() if twin is not None else None
        if rule is not None:
            chosen.setdefault(id(rule), rule)
    return tuple(chosen.values())


# HAMi's registration order is each descriptor's ``order`` (v2.10.0 ``InitDevicesWithConfig`` in
# ``pkg/scheduler/config/config.go``: the fixed backends, then the Ascend chips, then the Iluvatar
# chips); listing them here only registers them, in the same order for the reader
for _module in (
    nvidia,
    cambricon,
    hygon,
    enflame,
    mthreads,
    metax,
    kunlun,
    awsneuron,
    amd,
    vastai,
    biren,
    ascend,
    iluvatar,
):
    register(_module.DESCRIPTOR)

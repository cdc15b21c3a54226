"""The process-wide ``Simulator``, built once from settings (the engine itself knows no Django).

Every vendor family of the registry (``hami_sim.engine.vendors.descriptors()``) is configured from
``settings.HAMI``: a family with a ``settings_block`` from that key (NVIDIA: ``HAMI["NVIDIA"]``, as
before), every other one from ``HAMI["VENDORS"][<block>]``, keyed like the blocks of HAMi's Helm
device config (``cambricon``, ``hygon``, ``mthreads``, ``metax``, ...; ``ascend`` and ``iluvatar``
per chip by CommonWord). Field names may be Helm's camelCase (``resourceCountName``,
``resourceVMemoryName``) or the config's snake_case. A vendor without overrides keeps the Helm
defaults; an unknown vendor or field is a configuration error at start-up rather than a silently
ignored typo.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import Vendor, VendorDescriptor, VnpuTemplate, descriptors

__all__ = ["get_simulator", "engine_config", "build_vendors", "vendor_blocks"]


def vendor_blocks() -> dict[str, VendorDescriptor]:
    """``HAMI["VENDORS"]`` keys -> their vendor family (every family not configured elsewhere)."""
    return {d.block: d for d in descriptors() if not d.settings_block}


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _templates(value: Any, where: str) -> tuple[VnpuTemplate, ...]:
    try:
        return tuple(
            VnpuTemplate(str(t["name"]), int(t["memory"]), int(t.get("aiCore", t.get("ai_core", 0))))
            for t in value
        )
    except (TypeError, KeyError, ValueError) as exc:
        raise ImproperlyConfigured(f"{where}.templates: a list of {{name, memory, aiCore}}: {exc}") from None


def _checked(where: str, key: object, kind: str, value: Any) -> None:
    """Refuse a value of the wrong kind for a ``str`` or ``int`` config field."""
    if kind == "str" and (not isinstance(value, str) or not value.strip()):
        raise ImproperlyConfigured(f"{where}.{key} must be a non-empty string, got {value!r}")
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ImproperlyConfigured(f"{where}.{key} must be a non-negative integer, got {value!r}")


def _apply(base: Any, overrides: object, where: str) -> Any:
    """``base`` (a frozen config dataclass) with Helm-style overrides; unknown keys are errors."""
    if overrides is None:
        return base
    if not isinstance(overrides, Mapping):
        raise ImproperlyConfigured(f"{where} must be a mapping of config fields")
    all_fields = {f.name: f for f in dataclasses.fields(base)}
    fields = {_norm(f.name): f.name for f in all_fields.values() if f.init and f.name != "common_word"}
    changes: dict[str, object] = {}
    for key, value in overrides.items():
        name = fields.get(_norm(str(key)))
        if name is None:
            raise ImproperlyConfigured(
                f"{where}.{key} is not a field of {type(base).__name__} ({', '.join(sorted(fields.values()))})"
            )
        _checked(where, key, str(all_fields[name].type), value)
        changes[name] = _templates(value, where) if name == "templates" else value
    return dataclasses.replace(base, **changes)


def _chip_configs(desc: VendorDescriptor, chips: object) -> list[Any]:
    """A per-chip family's configs: each default chip with its overrides (by CommonWord)."""
    where = f'HAMI["VENDORS"]["{desc.block}"]'
    chips = chips or {}
    if not isinstance(chips, Mapping):
        raise ImproperlyConfigured(f"{where} must map a chip CommonWord to its overrides")
    words = [d.common_word for d in desc.chips]
    stray = set(chips) - set(words)
    if stray:
        raise ImproperlyConfigured(f"{where} has unknown chips {sorted(stray)}; known: {words}")
    return [_apply(d, chips.get(d.common_word), f'{where}["{d.common_word}"]') for d in desc.chips]


def _configs(desc: VendorDescriptor, hami: Mapping, overrides: Mapping) -> list[Any]:
    if desc.settings_block and desc.from_settings is not None:
        try:
            return [desc.from_settings(hami[desc.settings_block])]
        except (ValueError, TypeError) as exc:  # a value of the wrong shape (NVIDIA's knownMigGeometries)
            raise ImproperlyConfigured(f'HAMI["{desc.settings_block}"]: {exc}') from None
    if desc.per_chip:
        return _chip_configs(desc, overrides.get(desc.block))
    where = f'HAMI["VENDORS"]["{desc.block}"]'
    return [_apply(desc.config_class(), overrides.get(desc.block), where)]


def build_vendors(hami: Mapping) -> list[Vendor]:
    """Every registered backend in HAMi's registration order, configured from ``hami``."""
    overrides = hami.get("VENDORS") or {}
    if not isinstance(overrides, Mapping):
        raise ImproperlyConfigured('HAMI["VENDORS"] must be a mapping of vendor blocks')
    blocks = vendor_blocks()
    unknown = set(overrides) - set(blocks)
    if unknown:
        raise ImproperlyConfigured(
            f'HAMI["VENDORS"] has unknown vendors {sorted(unknown)}; known: {sorted(blocks)}'
        )
    vendors: list[Vendor] = []
    for desc in descriptors():
        vendors += desc.build(_configs(desc, hami, overrides))
    return vendors


def engine_config() -> EngineConfig:
    hami = settings.HAMI
    return EngineConfig(
        node_policy=hami["NODE_SCHEDULER_POLICY"],
        gpu_policy=hami["GPU_SCHEDULER_POLICY"],
        vendors=tuple(build_vendors(hami)),
        hami_release=settings.HAMI_VERSION,
    )


@lru_cache(maxsize=1)
def get_simulator() -> Simulator:
    resolver_path = getattr(settings, "HAMI_INVENTORY_RESOLVER", "")
    resolver = import_string(resolver_path) if resolver_path else None
    return Simulator(engine_config(), resolver)


def _rebuild(*, setting: str, **kwargs: Any) -> None:
    """A changed ``HAMI_VERSION`` (tests, ``override_settings``) takes effect at the next answer:
    the simulator follows one release, chosen when it is built."""
    if setting == "HAMI_VERSION":
        get_simulator.cache_clear()


setting_changed.connect(_rebuild, dispatch_uid="hami_sim.runtime.simulator")

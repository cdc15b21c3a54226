"""The process-wide ``Simulator``, built once from settings (the engine itself knows no Django).

Every vendor's config class is built from ``settings.HAMI``: ``HAMI["NVIDIA"]`` as before, and
``HAMI["VENDORS"]`` for the others, keyed like the blocks of HAMi's Helm device config
(``cambricon``, ``hygon``, ``mthreads``, ``metax``, ``enflame``, ``kunlun``, ``awsneuron``, ``amd``,
``vastai``, ``biren``; ``ascend`` and ``iluvatar`` per chip by CommonWord). Field names may be Helm's
camelCase (``resourceCountName``, ``resourceVMemoryName``) or the config's snake_case. A vendor
without overrides keeps the Helm defaults; an unknown vendor or field is a configuration error at
start-up rather than a silently ignored typo.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import (
    DEFAULT_ASCEND_CONFIGS,
    DEFAULT_ILUVATAR_CHIPS,
    AmdConfig,
    AmdVendor,
    AscendConfig,
    AscendVendor,
    AwsNeuronConfig,
    AwsNeuronVendor,
    BirenConfig,
    BirenVendor,
    CambriconConfig,
    CambriconVendor,
    EnflameConfig,
    EnflameDrsVendor,
    EnflameGcuVendor,
    HygonConfig,
    HygonVendor,
    IluvatarConfig,
    IluvatarVendor,
    KunlunConfig,
    KunlunVendor,
    KunlunVxpuVendor,
    MetaxConfig,
    MetaxGpuVendor,
    MetaxSgpuVendor,
    MthreadsConfig,
    MthreadsVendor,
    NvidiaConfig,
    NvidiaVendor,
    VastaiConfig,
    VastaiVendor,
    Vendor,
    VnpuTemplate,
)

__all__ = ["get_simulator", "engine_config", "build_vendors", "VENDOR_BLOCKS"]

#: ``HAMI["VENDORS"]`` keys with one config for the whole vendor family -> config class
VENDOR_BLOCKS: dict[str, type] = {
    "cambricon": CambriconConfig,
    "hygon": HygonConfig,
    "mthreads": MthreadsConfig,
    "metax": MetaxConfig,
    "enflame": EnflameConfig,
    "kunlun": KunlunConfig,
    "awsneuron": AwsNeuronConfig,
    "amd": AmdConfig,
    "vastai": VastaiConfig,
    "biren": BirenConfig,
}
_PER_CHIP = ("ascend", "iluvatar")


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _apply(base: object, overrides: object, where: str) -> object:
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
        kind = str(all_fields[name].type)
        if kind == "str" and (not isinstance(value, str) or not value.strip()):
            raise ImproperlyConfigured(f"{where}.{key} must be a non-empty string, got {value!r}")
        if kind == "int" and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ImproperlyConfigured(f"{where}.{key} must be a non-negative integer, got {value!r}")
        if name == "templates":
            try:
                value = tuple(
                    VnpuTemplate(str(t["name"]), int(t["memory"]), int(t.get("aiCore", t.get("ai_core", 0))))
                    for t in value
                )
            except (TypeError, KeyError, ValueError) as exc:
                raise ImproperlyConfigured(
                    f"{where}.templates: a list of {{name, memory, aiCore}}: {exc}"
                ) from None
        changes[name] = value
    return dataclasses.replace(base, **changes)


def build_vendors(hami: Mapping) -> list[Vendor]:
    """Every backend in HAMi's registration order (as ``default_vendors``), configured from ``hami``."""
    nv = hami["NVIDIA"]
    nvidia = NvidiaConfig(
        resource_count_name=nv["resourceCountName"],
        resource_memory_name=nv["resourceMemoryName"],
        resource_memory_percentage_name=nv["resourceMemoryPercentageName"],
        resource_core_name=nv["resourceCoreName"],
        default_memory=nv["defaultMemory"],
        default_cores=nv["defaultCores"],
        memory_factor=nv["memoryFactor"],
    )
    overrides = hami.get("VENDORS") or {}
    if not isinstance(overrides, Mapping):
        raise ImproperlyConfigured('HAMI["VENDORS"] must be a mapping of vendor blocks')
    unknown = set(overrides) - set(VENDOR_BLOCKS) - set(_PER_CHIP)
    if unknown:
        raise ImproperlyConfigured(
            f'HAMI["VENDORS"] has unknown vendors {sorted(unknown)}; known: {sorted([*VENDOR_BLOCKS, *_PER_CHIP])}'
        )

    def cfg(block: str) -> object:
        return _apply(VENDOR_BLOCKS[block](), overrides.get(block), f'HAMI["VENDORS"]["{block}"]')

    def per_chip(block: str, defaults: tuple) -> list:
        chips = overrides.get(block) or {}
        if not isinstance(chips, Mapping):
            raise ImproperlyConfigured(
                f'HAMI["VENDORS"]["{block}"] must map a chip CommonWord to its overrides'
            )
        words = [d.common_word for d in defaults]
        stray = set(chips) - set(words)
        if stray:
            raise ImproperlyConfigured(
                f'HAMI["VENDORS"]["{block}"] has unknown chips {sorted(stray)}; known: {words}'
            )
        return [
            _apply(d, chips.get(d.common_word), f'HAMI["VENDORS"]["{block}"]["{d.common_word}"]')
            for d in defaults
        ]

    metax, enflame, kunlun = cfg("metax"), cfg("enflame"), cfg("kunlun")
    vendors: list[Vendor] = [
        NvidiaVendor(nvidia),
        CambriconVendor(cfg("cambricon")),
        HygonVendor(cfg("hygon")),
    ]
    iluvatar_defaults = tuple(IluvatarConfig.for_chip(chip) for chip in DEFAULT_ILUVATAR_CHIPS)
    vendors += [IluvatarVendor(c) for c in per_chip("iluvatar", iluvatar_defaults)]
    vendors += [
        MthreadsVendor(cfg("mthreads")),
        MetaxGpuVendor(metax),
        MetaxSgpuVendor(metax),
        EnflameGcuVendor(enflame),
        EnflameDrsVendor(enflame),
        KunlunVendor(kunlun),
        KunlunVxpuVendor(kunlun),
        AwsNeuronVendor(cfg("awsneuron")),
        AmdVendor(cfg("amd")),
    ]
    ascend: list[AscendConfig] = per_chip("ascend", DEFAULT_ASCEND_CONFIGS)
    vendors += [AscendVendor(c) for c in ascend]
    vendors += [VastaiVendor(cfg("vastai")), BirenVendor(cfg("biren"))]
    return vendors


def engine_config() -> EngineConfig:
    hami = settings.HAMI
    return EngineConfig(
        node_policy=hami["NODE_SCHEDULER_POLICY"],
        gpu_policy=hami["GPU_SCHEDULER_POLICY"],
        vendors=tuple(build_vendors(hami)),
    )


@lru_cache(maxsize=1)
def get_simulator() -> Simulator:
    resolver_path = getattr(settings, "HAMI_INVENTORY_RESOLVER", "")
    resolver = import_string(resolver_path) if resolver_path else None
    return Simulator(engine_config(), resolver)

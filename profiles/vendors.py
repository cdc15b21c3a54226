"""Per-vendor rules of a device profile: which fields a row carries, how it is validated and how a
fresh node of the group registers it (annotation or ``status.capacity``).

Every rule a vendor adds comes from its descriptor in the engine's vendor registry
(``hami_sim.engine.vendors``: ``ProfileFields`` per backend CommonWord), so this module names no
vendor. HAMi reads devices in five shapes (the ``codec``, docs/vendors.md):

- ``json``: ``encode_device_json`` under the vendor's register key (NVIDIA, Ascend, Kunlun vXPU,
  AMD, Vastai, Biren); ``extra.custominfo`` becomes the device's ``custominfo``.
- ``legacy``: ``encode_legacy`` (9-field colon format) under the register key (Hygon, Iluvatar).
- ``metax-sgpu``: MetaX's own JSON list on ``metax-tech.com/node-gpu-devices``.
- ``enflame-drs``: ``{"devices": [...], "profiles": {...}}`` on ``enflame.com/gcu-drs-capacity``.
- ``capacity``: numbers in ``status.capacity`` (Cambricon, Moore Threads, MetaX GPU, Enflame GCU,
  Kunlun XPU, AWS Neuron + the instance-type label). HAMi synthesises identical devices from them,
  so most row fields are fixed by the vendor; validation names the value HAMi would produce.

Register keys and resource names come from the configured engine vendor (``settings.HAMI``), so a
renamed resource is rendered under its new name. Kept free of models so the API, the YAML importer,
the admin and the resolver share it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hami_sim.engine.vendors import ProfileFields, Vendor, profile_fields
from hami_sim.engine.vendors.registry import count_resource as _count_resource
from hami_sim.runtime.simulator import get_simulator

__all__ = [
    "SPECS",
    "spec_for",
    "engine_vendor",
    "row_defaults",
    "vendor_row_errors",
    "profile_errors",
    "count_resource",
    "registration_source",
]

_INT32_MAX = 2**31 - 1
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


class _Specs(Mapping[str, ProfileFields]):
    """CommonWord -> ``ProfileFields`` of every registered backend, read live from the registry."""

    def __getitem__(self, word: str) -> ProfileFields:
        return profile_fields()[word]

    def __iter__(self) -> Iterator[str]:
        return iter(profile_fields())

    def __len__(self) -> int:
        return len(profile_fields())


SPECS: Mapping[str, ProfileFields] = _Specs()


def spec_for(vendor: str) -> ProfileFields:
    spec = profile_fields().get(vendor)
    if spec is None:
        raise KeyError(f"unknown vendor {vendor!r}")
    return spec


def engine_vendor(vendor: str) -> Any:
    """The configured engine vendor (resource names and register keys as settings say), as the HAMi
    release hami-sim follows has it: a release may give the profile's backend another CommonWord
    (AMD's whole cards before v2.10, ``AMDGPU``), and a backend the release lacks (Biren before
    v2.10) is the configured one, whose registration no backend of that release reads."""
    sim = get_simulator()
    found = sim.vendors.get(vendor)
    if found is not None:
        return found
    configured = next((v for v in sim.config.vendors if v.common_word == vendor), None)
    if configured is None:
        raise KeyError(vendor)
    return configured.under(sim.rules) or configured


_BASE_DEFAULTS = {
    "devcore": 100,
    "count": 10,
    "numa": 0,
    "mode": "hami-core",
    "mig_profiles": [],
    "health": True,
    "extra": {},
    "quantity": 1,
}


def row_defaults(vendor: str) -> dict:
    """Values a row gets when it omits them: the base defaults, then what the vendor fixes."""
    spec = profile_fields().get(vendor)
    out = dict(_BASE_DEFAULTS)
    if spec is not None:
        out.update(spec.fixed)
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def vendor_row_errors(vendor: str, row: Mapping) -> dict[str, str]:
    """What ``vendor`` adds to (or relaxes in) the generic row checks; field -> message."""
    spec = spec_for(vendor)
    extra = row.get("extra") or {}
    if not isinstance(extra, Mapping):
        return {"extra": f"extra must be an object with {', '.join(spec.extras) or 'no keys'} for {vendor}"}
    errors: dict[str, str] = {}
    for check in (_extras_errors, _fixed_errors, _type_errors, _mode_errors, _codec_errors, _devmem_errors):
        errors.update(check(vendor, spec, row, extra, errors))
    if "custominfo" in extra and not isinstance(extra["custominfo"], Mapping):
        errors["extra"] = "extra.custominfo must be an object"
    if spec.check_row is not None:
        errors.update(spec.check_row(row, extra))
    return errors


_Errors = dict[str, str]


def _extras_errors(word: str, spec: ProfileFields, row: Mapping, extra: Mapping, seen: _Errors) -> _Errors:
    """Only the vendor's own extra keys."""
    unknown = sorted(set(extra) - set(spec.extras))
    if not unknown:
        return {}
    allowed = ", ".join(spec.extras) or "none"
    return {"extra": f"extra.{unknown[0]} is not a {word} field (allowed: {allowed})"}


def _fixed_errors(word: str, spec: ProfileFields, row: Mapping, extra: Mapping, seen: _Errors) -> _Errors:
    """The fields HAMi fixes for the vendor must have HAMi's value."""
    return {
        name: f"{name} must be {value!r} for {word}: HAMi's {word} backend registers every device so, got {row.get(name)!r}"
        for name, value in spec.fixed.items()
        if row.get(name) != value
    }


def _type_errors(word: str, spec: ProfileFields, row: Mapping, extra: Mapping, seen: _Errors) -> _Errors:
    """HAMi hands a request only devices whose type contains the CommonWord."""
    typ = row.get("type")
    if isinstance(typ, str) and typ.strip() and word.lower() not in typ.lower() and "type" not in seen:
        return {
            "type": f"type must contain {word!r}: HAMi offers a {word} request only devices whose type contains it, got {typ!r}"
        }
    return {}


def _mode_errors(word: str, spec: ProfileFields, row: Mapping, extra: Mapping, seen: _Errors) -> _Errors:
    """Device modes (and MIG profiles) only where the vendor has them (NVIDIA's mig and mps)."""
    if spec.modes != ("hami-core",):
        return {}
    errors: _Errors = {}
    if (row.get("mode") or "hami-core") != "hami-core":
        errors["mode"] = (
            f"mode must be hami-core for {word} (mig and mps are NVIDIA modes), got {row.get('mode')!r}"
        )
    if row.get("mig_profiles"):
        errors["mig_profiles"] = f"mig_profiles are NVIDIA only; {word} has none"
    return errors


def _codec_errors(word: str, spec: ProfileFields, row: Mapping, extra: Mapping, seen: _Errors) -> _Errors:
    """What the registration format cannot carry."""
    typ = row.get("type")
    errors: _Errors = {}
    if spec.codec == "legacy" and isinstance(typ, str) and ("," in typ or ":" in typ):
        errors["type"] = (
            f"type must not contain ',' or ':' (the {word} legacy annotation format separates fields with them)"
        )
    if spec.codec == "capacity" and row.get("health") is False:
        errors["health"] = (
            f"health is always true for {word}: HAMi synthesises healthy devices from node capacity"
        )
    return errors


def _devmem_errors(word: str, spec: ProfileFields, row: Mapping, extra: Mapping, seen: _Errors) -> _Errors:
    """Capacity vendors count memory in units."""
    devmem = row.get("devmem")
    unit = spec.devmem_unit
    if unit and _is_int(devmem) and devmem > 0 and devmem % unit:
        return {
            "devmem": f"devmem must be a multiple of {unit} MiB for {word} (capacity counts {unit} MiB units), got {devmem}"
        }
    return {}


def profile_errors(vendor: str, rows: list[Mapping]) -> str:
    """Rules across a profile's rows (identical synthesised devices, per-node values); '' when fine."""
    spec = spec_for(vendor)
    if spec.check_rows is not None:
        return spec.check_rows(rows)
    if spec.codec == "capacity":
        keys = ("type", "devmem", "devcore", "count", "numa", "extra")
        first = {k: rows[0].get(k) for k in keys} if rows else {}
        for i, r in enumerate(rows[1:], start=1):
            if {k: r.get(k) for k in keys} != first:
                return f"rows[{i}] differs from rows[0]: HAMi synthesises identical {vendor} devices from node capacity, use one row"
    return ""


def count_resource(vendor_obj: Vendor, spec: ProfileFields | None = None) -> str:
    """The pod resource that counts a vendor's devices (what a device plugin advertises); ``spec``:
    the profile's fields when the vendor is another release's backend of that profile."""
    return _count_resource(vendor_obj, spec or spec_for(vendor_obj.common_word))


def registration_source(vendor: str) -> str:
    """Where ``vendor``'s devices are registered, for messages ("hami.io/node-dcu-register", ...)."""
    engine = engine_vendor(vendor)
    sources = engine.registration_sources()
    if sources is not None and sources[0]:
        return str(sources[0][0])
    if sources is not None and sources[1]:
        return f"status.capacity[{sources[1][0]}]"
    return str(engine.register_key)

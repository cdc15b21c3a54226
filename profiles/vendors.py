"""Per-vendor rules of a device profile: which fields a row carries, how it is validated and how a
fresh node of the group registers it (annotation or ``status.capacity``).

HAMi reads devices in five shapes (docs/vendors.md); every engine vendor belongs to one ``kind``:

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

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from hami_sim.engine.vendors.enflame import DRS_CAPACITY, parse_profile
from hami_sim.engine.vendors.metax import METAX_SGPU_REGISTER

__all__ = [
    "VendorSpec",
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


@dataclass(frozen=True, slots=True)
class VendorSpec:
    """How one engine vendor (by CommonWord) is described by profile rows."""

    word: str
    kind: str  # json | legacy | metax-sgpu | enflame-drs | capacity
    #: extra keys a row may carry -> help text (admin, docs, error messages)
    extras: Mapping[str, str] = field(default_factory=dict)
    #: row fields HAMi fixes for this vendor (capacity vendors synthesise identical devices)
    fixed: Mapping[str, object] = field(default_factory=dict)
    #: devmem must be a multiple of this (capacity units), 0 = any positive value
    devmem_unit: int = 0
    #: one-line description of what the rows mean for this vendor (admin/YAML help)
    help: str = ""


_CUSTOMINFO = {
    "custominfo": 'object copied into the device\'s custominfo (e.g. Ascend {"NetworkID": 0}, AMD {"pciBDF": "..."})'
}


def _json(word: str, help: str, **fixed: object) -> VendorSpec:
    return VendorSpec(word, "json", _CUSTOMINFO, fixed, help=help)


def _build() -> dict[str, VendorSpec]:
    specs = [
        _json("NVIDIA", "hami.io/node-nvidia-register JSON; mode hami-core/mig/mps, MIG profiles"),
        VendorSpec(
            "MLU",
            "capacity",
            {},
            {"type": "MLU", "count": 100, "devcore": 100, "numa": 0},
            256,
            "status.capacity mlu.smlu.vcore = 100 x cards, mlu.smlu.vmemory = cards x devmem / 256",
        ),
        VendorSpec(
            "DCU", "legacy", {}, {}, help="hami.io/node-dcu-register (legacy colon format); type contains DCU"
        ),
    ]
    for chip in ("MR-V100", "MR-V50", "BI-V150", "BI-V100"):
        specs.append(
            VendorSpec(chip, "legacy", {}, {}, help=f"hami.io/node-{chip}-register (legacy colon format)")
        )
    specs += [
        VendorSpec(
            "Mthreads",
            "capacity",
            {},
            {"type": "Mthreads", "count": 100, "devcore": 16, "numa": 0},
            512,
            "status.capacity sgpu-core = 16 x GPUs, sgpu-memory = GPUs x devmem / 512",
        ),
        VendorSpec(
            "Metax-GPU",
            "capacity",
            {},
            {"type": "Metax-GPU", "count": 1, "devmem": 65536, "devcore": 100, "numa": 0},
            help="status.capacity metax-tech.com/gpu = cards (HAMi: 65536 MiB, exclusive)",
        ),
        VendorSpec(
            "Metax-SGPU",
            "metax-sgpu",
            {"qosPolicy": "the card's sGPU QoS policy (e.g. best-effort, fixed-share, burst-share)"},
            {"type": "Metax-SGPU", "mode": "hami-core"},
            help="metax-tech.com/node-gpu-devices: count = totalDevCount, devcore = totalCompute, devmem = totalVRam",
        ),
        VendorSpec(
            "GCU",
            "capacity",
            {},
            {"type": "GCU", "count": 1, "devmem": 100, "devcore": 100, "numa": 0},
            help="status.capacity enflame.com/gcu = cards (exclusive)",
        ),
        VendorSpec(
            "Enflame",
            "enflame-drs",
            {
                "profiles": 'the node\'s DRS profiles, name -> id, e.g. {"1g.6gb": "0", "3g.24gb": "1"} (the same on every row)'
            },
            {"type": "Enflame", "devcore": 100, "numa": 0},
            help="enflame.com/gcu-drs-capacity: count = the device's DRS slices; devmem = the largest profile's memory",
        ),
        VendorSpec(
            "kunlun",
            "capacity",
            {},
            {"type": "kunlun", "count": 100, "devmem": 98304, "devcore": 100},
            help="status.capacity kunlunxin.com/xpu = cards; the upper half of the cards is NUMA 1",
        ),
        _json("XPU", "hami.io/node-register-xpu JSON (Kunlunxin vXPU)"),
        VendorSpec(
            "AWSNeuron",
            "capacity",
            {"instance_type": "node.kubernetes.io/instance-type (defaults to the group's instance_type)"},
            {"type": "AWSNeuron", "devmem": 0, "numa": 0},
            help="status.capacity aws.amazon.com/neuron = devices, neuroncore = devices x count (count = cores per device)",
        ),
        _json("AMD", "hami.io/node-amd-register JSON; devcore = compute units"),
    ]
    for word in (
        "Ascend910A",
        "Ascend910B2",
        "Ascend910B3",
        "Ascend910B4-1",
        "Ascend910B4",
        "Ascend910C",
        "Ascend310P",
    ):
        specs.append(_json(word, f"hami.io/node-register-{word} JSON; custominfo NetworkID for topology"))
    specs += [
        _json("Vastai", "hami.io/node-va-register JSON; HAMi forces devcore 100", devcore=100),
        _json("Biren", "hami.io/node-biren-register JSON; HAMi forces devcore 100", devcore=100),
    ]
    return {s.word: s for s in specs}


SPECS: dict[str, VendorSpec] = _build()


def spec_for(vendor: str) -> VendorSpec:
    spec = SPECS.get(vendor)
    if spec is None:
        raise KeyError(f"unknown vendor {vendor!r}")
    return spec


def engine_vendor(vendor: str):
    """The configured engine vendor (resource names and register keys as settings say)."""
    from simulations.engine import get_simulator

    return get_simulator().vendors[vendor]


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
    spec = SPECS.get(vendor)
    out = dict(_BASE_DEFAULTS)
    if spec is not None:
        out.update(spec.fixed)
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def vendor_row_errors(vendor: str, row: Mapping) -> dict[str, str]:
    """What ``vendor`` adds to (or relaxes in) the generic row checks; field -> message."""
    spec = spec_for(vendor)
    errors: dict[str, str] = {}
    word = spec.word
    typ = row.get("type")
    extra = row.get("extra") or {}
    if not isinstance(extra, Mapping):
        return {"extra": f"extra must be an object with {', '.join(spec.extras) or 'no keys'} for {word}"}
    unknown = sorted(set(extra) - set(spec.extras))
    if unknown:
        allowed = ", ".join(spec.extras) or "none"
        errors["extra"] = f"extra.{unknown[0]} is not a {word} field (allowed: {allowed})"
    for name, value in spec.fixed.items():
        if row.get(name) != value:
            errors[name] = (
                f"{name} must be {value!r} for {word}: HAMi's {word} backend registers every device so, got {row.get(name)!r}"
            )
    if isinstance(typ, str) and typ.strip() and word.lower() not in typ.lower() and "type" not in errors:
        errors["type"] = (
            f"type must contain {word!r}: HAMi offers a {word} request only devices whose type contains it, got {typ!r}"
        )
    if word != "NVIDIA":
        if (row.get("mode") or "hami-core") != "hami-core":
            errors["mode"] = (
                f"mode must be hami-core for {word} (mig and mps are NVIDIA modes), got {row.get('mode')!r}"
            )
        if row.get("mig_profiles"):
            errors["mig_profiles"] = f"mig_profiles are NVIDIA only; {word} has none"
    if spec.kind == "legacy" and isinstance(typ, str) and ("," in typ or ":" in typ):
        errors["type"] = (
            f"type must not contain ',' or ':' (the {word} legacy annotation format separates fields with them)"
        )
    if spec.kind == "capacity" and row.get("health") is False:
        errors["health"] = (
            f"health is always true for {word}: HAMi synthesises healthy devices from node capacity"
        )
    devmem = row.get("devmem")
    if spec.devmem_unit and _is_int(devmem) and devmem > 0 and devmem % spec.devmem_unit:
        errors["devmem"] = (
            f"devmem must be a multiple of {spec.devmem_unit} MiB for {word} (capacity counts {spec.devmem_unit} MiB units), got {devmem}"
        )
    if "custominfo" in extra and not isinstance(extra["custominfo"], Mapping):
        errors["extra"] = "extra.custominfo must be an object"
    elif isinstance(extra.get("custominfo"), Mapping) and word.startswith("Ascend"):
        nid = extra["custominfo"].get("NetworkID")
        if "NetworkID" in extra["custominfo"] and (isinstance(nid, bool) or not isinstance(nid, int | float)):
            errors["extra"] = (
                f"extra.custominfo.NetworkID must be a number (the Ascend topology network id), got {nid!r}"
            )
    if "qosPolicy" in extra and not isinstance(extra["qosPolicy"], str):
        errors["extra"] = f"extra.qosPolicy must be a string, got {extra['qosPolicy']!r}"
    if "instance_type" in extra and (
        not isinstance(extra["instance_type"], str) or not extra["instance_type"].strip()
    ):
        errors["extra"] = "extra.instance_type must be a non-empty string (node.kubernetes.io/instance-type)"
    if word == "AWSNeuron":
        count = row.get("count")
        if not _is_int(count) or not 1 <= count <= 30:
            errors["count"] = f"count (Neuron cores per device) must be between 1 and 30, got {count!r}"
        elif row.get("devcore") != (1 << count) - 1:
            errors["devcore"] = (
                f"devcore must be {(1 << count) - 1} (the core mask of {count} cores) for AWSNeuron, got {row.get('devcore')!r}"
            )
    if spec.kind == "enflame-drs":
        profiles = extra.get("profiles")
        if not isinstance(profiles, Mapping) or not profiles:
            errors["extra"] = (
                'extra.profiles (the node\'s DRS profiles, e.g. {"1g.6gb": "0"}) is required for Enflame'
            )
        elif not all(isinstance(v, str) for v in profiles.values()):
            errors["extra"] = "extra.profiles must map profile names to string ids"
        else:
            sizes = [parse_profile(str(name)) for name in profiles]
            bad = [name for name, (size, _mem) in zip(profiles, sizes, strict=True) if size <= 0]
            if bad:
                errors["extra"] = f"extra.profiles: {bad[0]!r} is not a DRS profile name like '3g.24gb'"
            else:
                max_slice = max(s for s, _ in sizes)
                max_mem = max(m for _, m in sizes) or max_slice
                if row.get("devmem") != max_mem * 1024:
                    errors["devmem"] = (
                        f"devmem must be {max_mem * 1024} MiB for Enflame: HAMi takes the largest DRS profile's memory ({max_mem} GB)"
                    )
    return errors


def profile_errors(vendor: str, rows: list[Mapping]) -> str:
    """Rules across a profile's rows (identical synthesised devices, per-node values); '' when fine."""
    spec = spec_for(vendor)
    if spec.kind == "capacity":
        if vendor == "kunlun":
            total = sum(int(r.get("quantity", 1)) for r in rows)
            index = 0
            for i, r in enumerate(rows):
                for _ in range(int(r.get("quantity", 1))):
                    want = 1 if index >= total // 2 else 0
                    if r.get("numa") != want:
                        return (
                            f"rows[{i}].numa must be {want}: HAMi puts the upper half of a node's kunlun cards "
                            f"on NUMA 1 (use one row per half)"
                        )
                    index += 1
            return ""
        keys = ("type", "devmem", "devcore", "count", "numa", "extra")
        first = {k: rows[0].get(k) for k in keys} if rows else {}
        for i, r in enumerate(rows[1:], start=1):
            if {k: r.get(k) for k in keys} != first:
                return f"rows[{i}] differs from rows[0]: HAMi synthesises identical {vendor} devices from node capacity, use one row"
    if (
        spec.kind == "enflame-drs"
        and len(
            {orjson.dumps((r.get("extra") or {}).get("profiles"), option=orjson.OPT_SORT_KEYS) for r in rows}
        )
        > 1
    ):
        return (
            "extra.profiles differ between rows: Enflame DRS profiles are per node, give every row the same"
        )
    return ""


def count_resource(vendor_obj) -> str:
    """The pod resource that counts a vendor's devices (what a device plugin advertises)."""
    config = getattr(vendor_obj, "config", None)
    word = vendor_obj.common_word
    if word in ("Metax-SGPU", "XPU"):
        return config.resource_vcount_name
    if word == "Enflame":
        return config.resource_drs_name
    if word.startswith("Ascend"):
        return config.resource_name
    return config.resource_count_name


def registration_source(vendor: str) -> str:
    """Where ``vendor``'s devices are registered, for messages ("hami.io/node-dcu-register", ...)."""
    spec = spec_for(vendor)
    if spec.kind == "metax-sgpu":
        return METAX_SGPU_REGISTER
    if spec.kind == "enflame-drs":
        return DRS_CAPACITY
    engine = engine_vendor(vendor)
    if spec.kind == "capacity":
        return f"status.capacity[{engine.capacity_names[0]}]"
    return getattr(engine, "register_key", "hami.io/node-nvidia-register")

"""Render a device profile into what a fresh node would register, and build template nodes.

Works on plain row dicts (``DeviceRow.as_dict()`` or a YAML entry) so the admin, the API, the YAML
importer and the resolver all share one renderer. Registration values are produced and parsed only
with the engine's codecs (``encode_device_json`` / ``decode_device_json`` / ``encode_pair_scores``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

import orjson

from hami_sim.engine.annotations import AnnotationError, decode_device_json, encode_device_json
from hami_sim.engine.model import DeviceInfo
from hami_sim.engine.names import template_node_name
from hami_sim.engine.vendors import Registration, RenderInput, default_word, profile_fields

from .constants import DEFAULT_CAPACITY, KWOK_ANNOTATION, UUID_NAMESPACE
from .vendors import count_resource, engine_vendor, spec_for, vendor_row_errors

__all__ = [
    "MODES",
    "row_errors",
    "placeholder_uuid",
    "render_devices",
    "render_pair_scores",
    "render_annotations",
    "Registration",  # the engine's (``hami_sim.engine.vendors.registry``), re-exported
    "render_registration",
    "device_total",
    "template_node",
    "kwok_node",
    "rows_from_devices",
]

MODES = ("hami-core", "mig", "mps")
_INT32_MAX = 2**31 - 1


def row_errors(row: Mapping, vendor: str = "") -> dict[str, str]:
    """Field -> message for one device row of ``vendor`` (none: the registry's default backend);
    empty when valid. Messages name the field."""
    errors = _generic_row_errors(row)
    spec = profile_fields().get(vendor or default_word())
    if spec is None:
        return errors
    vendor_errors = vendor_row_errors(vendor, row)
    if spec.fixed.get("devmem", None) == 0:
        errors.pop("devmem", None)  # a vendor that registers no memory (AWS Neuron)
    if "mode" in vendor_errors:  # the vendor's own message (it has no such modes) replaces the generic one
        errors.pop("mode", None)
    errors.update(vendor_errors)
    return errors


def _generic_row_errors(row: Mapping) -> dict[str, str]:
    """The checks every vendor's rows share: the numbers, the mode and the MIG profiles."""
    errors: dict[str, str] = {}
    if not isinstance(row.get("type"), str) or not row.get("type", "").strip():
        errors["type"] = "type (device model, e.g. 'NVIDIA A10') is required"
    devmem = _number_errors(row, errors)
    mode = row.get("mode") or "hami-core"
    if mode not in MODES:
        errors["mode"] = f"mode must be one of {', '.join(MODES)}, got {mode!r}"
    mig = row.get("mig_profiles") or []
    if not isinstance(mig, list):
        errors["mig_profiles"] = "mig_profiles must be a list of MIG profiles"
    elif mig:
        problem = _mig_problem(mig, devmem)
        if problem:
            errors["mig_profiles"] = problem
    if mig and mode != "mig" and "mode" not in errors and "mig_profiles" not in errors:
        errors["mode"] = f"mig_profiles are set but mode is {mode!r}; MIG profiles need mode 'mig'"
    return errors


#: integer row field -> (lowest valid value, highest valid value, message naming the rule)
_NUMBER_RULES: dict[str, tuple[int, int, str]] = {
    "devmem": (1, _INT32_MAX, "devmem must be a positive number of MiB, got {}"),
    "devcore": (1, _INT32_MAX, "devcore must be positive (100 = a whole card), got {}"),
    "count": (1, _INT32_MAX, "count (split count) must be at least 1, got {}"),
    "numa": (0, _INT32_MAX, "numa must not be negative, got {}"),
    "quantity": (1, 64, "quantity (devices per node) must be between 1 and 64, got {}"),
}


def _number_errors(row: Mapping, errors: dict[str, str]) -> int | None:
    """Check the integer fields into ``errors``; returns devmem when it is an int32."""
    devmem: int | None = None
    for name, (low, high, message) in _NUMBER_RULES.items():
        value = row.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            errors[name] = f"{name} must be an integer, got {value!r}"
            continue
        if value > _INT32_MAX:
            errors[name] = f"{name} {value} does not fit HAMi's int32"
            continue
        if name == "devmem":
            devmem = value
        if not low <= value <= high:
            errors[name] = message.format(value)
    return devmem


def _mig_problem(mig: list, devmem: int | None) -> str:
    """The first problem of a row's MIG profiles ('' when they parse and fit the card)."""
    try:
        parsed = decode_device_json(orjson.dumps([{"id": "x", "migProfiles": mig}]).decode())[0].mig_profiles
    except (AnnotationError, TypeError) as exc:
        return f"mig_profiles do not parse: {exc}"
    for profile in parsed:
        if not profile.name:
            return "every MIG profile needs a name"
        if devmem is not None and devmem > 0 and profile.memory_mb > devmem:
            return f"MIG profile {profile.name} has memoryMB {profile.memory_mb}, larger than the card's devmem {devmem}"
        if profile.memory_mb <= 0 or profile.slice_count <= 0:
            return f"MIG profile {profile.name} needs positive memoryMB and sliceCount"
    return ""


def placeholder_uuid(group: str, vendor: str, index: int) -> str:
    """A deterministic UUID in NVML's ``GPU-<uuid>`` form for device ``index`` of a group's profile."""
    return f"GPU-{uuid.uuid5(UUID_NAMESPACE, f'{group}/{vendor}/{index}')}"


def render_devices(group: str, vendor: str, rows: Iterable[Mapping]) -> list[DeviceInfo]:
    """The devices the profile promises: rows in order, ``quantity`` devices each (placeholder IDs)."""
    devices: list[DeviceInfo] = []
    for row in rows:
        mig_json = row.get("mig_profiles") or []
        mig = decode_device_json(orjson.dumps([{"id": "x", "migProfiles": mig_json}]).decode())[
            0
        ].mig_profiles
        extra = row.get("extra") or {}
        custom = extra.get("custominfo") if isinstance(extra, Mapping) else None
        for _ in range(int(row.get("quantity", 1))):
            index = len(devices)
            devices.append(
                DeviceInfo(
                    id=placeholder_uuid(group, vendor, index),
                    index=index,
                    count=int(row["count"]),
                    devmem=int(row["devmem"]),
                    devcore=int(row.get("devcore", 100)),
                    type=str(row["type"]),
                    numa=int(row.get("numa", 0)),
                    mode=str(row.get("mode") or "hami-core"),
                    health=bool(row.get("health", True)),
                    mig_profiles=mig,
                    device_vendor=vendor,
                    custom_info=dict(custom) if isinstance(custom, Mapping) and custom else None,
                )
            )
    return devices


def render_registration(
    group: str,
    vendor: str,
    rows: Iterable[Mapping],
    scores: Mapping | None = None,
    *,
    instance_type: str = "",
) -> Registration:
    """The registration of ``vendor``'s devices, in the shape that vendor's HAMi backend reads.

    The vendor's descriptor renders it (``ProfileFields.render``) from the placeholder devices;
    ``scores`` (index-keyed operator topology scores) only for vendors whose rows carry them.
    """
    rows = list(rows)
    spec = spec_for(vendor)
    engine = engine_vendor(vendor)
    devices = render_devices(group, vendor, rows)
    pair = render_pair_scores(group, vendor, scores or {}, len(devices)) if spec.pair_scores else {}
    data = RenderInput(devices, rows, pair, instance_type)
    return spec.render(engine, data, count_resource(engine, spec))


def render_pair_scores(
    group: str, vendor: str, scores: Mapping, device_count: int
) -> dict[str, dict[str, int]]:
    """Index-keyed operator scores -> the UUID-keyed map HAMi reads (unknown indexes dropped)."""
    out: dict[str, dict[str, int]] = {}
    for a, row in (scores or {}).items():
        ia = int(a)
        if ia >= device_count:
            continue
        out[placeholder_uuid(group, vendor, ia)] = {
            placeholder_uuid(group, vendor, int(b)): int(s) for b, s in row.items() if int(b) < device_count
        }
    return out


def render_annotations(
    group: str, vendor: str, rows: Iterable[Mapping], scores: Mapping | None = None
) -> dict[str, str]:
    """The registration annotations of a fresh node ({} for capacity-based vendors)."""
    return render_registration(group, vendor, rows, scores).annotations


def device_total(rows: Iterable[Mapping]) -> tuple[int, int]:
    """(devices, devices x split count): the latter is what the device plugin advertises as nvidia.com/gpu."""
    devices = slots = 0
    for row in rows:
        q = int(row.get("quantity", 1))
        devices += q
        slots += q * int(row.get("count", 0))
    return devices, slots


def template_node(
    group: str,
    *,
    match_labels: Mapping[str, str],
    labels: Mapping[str, str] | None = None,
    taints: list | None = None,
    capacity: Mapping[str, str] | None = None,
    instance_type: str = "",
    profiles: Iterable[tuple[str, list[Mapping], Mapping]] = (),
    resource_name: str = "",
) -> dict:
    """A complete template Node (what CA's ``TemplateNodeInfo`` or a kwok cluster would use).

    Each profile adds its vendor's registration (annotations, ``status.capacity``/``allocatable``
    numbers, labels). ``resource_name`` is kept for callers and ignored: every vendor's count
    resource comes from the configured engine vendor (``settings.HAMI``).
    """
    name = template_node_name(group)
    node_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    if instance_type:
        node_labels["node.kubernetes.io/instance-type"] = instance_type
    node_labels.update(labels or {})
    node_labels.update(match_labels)
    resources = dict(DEFAULT_CAPACITY)
    resources.update(capacity or {})
    annotations: dict[str, str] = {}
    for vendor, rows, scores in profiles:
        reg = render_registration(group, vendor, rows, scores, instance_type=instance_type)
        annotations.update(reg.annotations)
        resources.update(reg.capacity)
        node_labels.update(reg.labels)  # AWS Neuron: its instance-type label, as the resolver sees it
    node_labels.update(match_labels)
    spec: dict = {}
    if taints:
        spec["taints"] = list(taints)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels, "annotations": annotations},
        "spec": spec,
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def kwok_node(node: Mapping) -> dict:
    """The template as a kwok fake node: kwok's ownership annotation and its conventional taint."""
    out = orjson.loads(orjson.dumps(node))
    out["metadata"]["annotations"][KWOK_ANNOTATION] = "fake"
    out["metadata"]["labels"]["type"] = "kwok"
    taints = out["spec"].setdefault("taints", [])
    if not any(t.get("key") == KWOK_ANNOTATION for t in taints):
        taints.append({"key": KWOK_ANNOTATION, "value": "fake", "effect": "NoSchedule"})
    return out


def _extra_of(dev: DeviceInfo, vendor: str) -> dict:
    """The row ``extra`` a registered device implies (inverse of ``render_registration``)."""
    spec = profile_fields().get(vendor)
    if spec is not None and spec.row_extra is not None:
        return spec.row_extra(dev)
    if spec is None or spec.codec == "json":
        info = dev.custom_info if isinstance(dev.custom_info, dict) else {}
        return {"custominfo": dict(info)} if info else {}
    return {}


def rows_from_devices(devices: Iterable[DeviceInfo], vendor: str = "") -> list[dict]:
    """Collapse consecutive identical registered devices into profile rows (for "profile from node").

    ``vendor`` (a CommonWord) keeps only that vendor's devices and recovers its row extras.
    """
    rows: list[dict] = []
    chosen = [d for d in devices if not vendor or (d.device_vendor or default_word()) == vendor]
    for dev in sorted(chosen, key=lambda d: d.index):
        mig = orjson.loads(encode_device_json([DeviceInfo(id="x", mig_profiles=dev.mig_profiles)]))[0].get(
            "migProfiles", []
        )
        row = {
            "type": dev.type,
            "devmem": dev.devmem,
            "devcore": dev.devcore,
            "count": dev.count,
            "numa": dev.numa,
            "mode": dev.mode or "hami-core",
            "mig_profiles": mig,
        }
        if vendor:
            row["health"] = dev.health
            row["extra"] = _extra_of(dev, vendor)
        if rows and {k: v for k, v in rows[-1].items() if k != "quantity"} == row:
            rows[-1]["quantity"] += 1
        else:
            rows.append({**row, "quantity": 1})
    return rows

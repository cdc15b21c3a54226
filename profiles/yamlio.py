"""YAML import/export of node groups and profiles, in the REST API's schema (GitOps friendly).

```yaml
apiVersion: hami-sim/v1
kind: NodeGroupList
node_groups:
- name: gpu-a10
  match_labels: {eks.amazonaws.com/nodegroup: gpu-a10}
  inventory_source: annotation-first
  profiles:
  - vendor: NVIDIA
    devices:
    - {type: NVIDIA A10, devmem: 23028, devcore: 100, count: 10, numa: 0, mode: hami-core, quantity: 1}
```

Every vendor of ``profiles.vendors.SPECS`` may be listed (``vendor: Ascend910B4``, ``vendor: MLU``, ...);
rows carry ``health`` and a per-vendor ``extra`` object where the vendor registers more (see
docs/profiles.md), and fields a vendor fixes may be omitted. Import is all-or-nothing: every entry is validated with the API's serializers first; the first bad
entry is named (``node_groups[1] (gpu-x): profiles[0].devices[0].devmem: ...``) and nothing changes.
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml
from django.db import transaction

from hami_sim.project import safeyaml
from hami_sim.runtime.progress import counted

from .api.serializers import NestedDeviceProfileSerializer, NodeGroupSerializer, complete_rows
from .choices import Vendor
from .models import DeviceProfile, NodeGroup
from .services import profile_edit, save_profile

__all__ = ["ProfileImportError", "export_profiles", "import_profiles", "dump_yaml", "flatten_errors"]

API_VERSION = "hami-sim/v1"
GROUP_FIELDS = (
    "name",
    "match_labels",
    "provider",
    "instance_type",
    "min_size",
    "max_size",
    "inventory_source",
    "labels",
    "taints",
    "capacity",
    "description",
)
ROW_FIELDS = ("type", "devmem", "devcore", "count", "numa", "mode", "mig_profiles", "quantity")
# written only when they differ from the default, so NVIDIA files stay as they were
OPTIONAL_ROW_FIELDS = (("health", True), ("extra", {}))


def _row_entry(row) -> dict:
    entry = {f: getattr(row, f) for f in ROW_FIELDS}
    for name, default in OPTIONAL_ROW_FIELDS:
        value = getattr(row, name)
        if value != default and value is not None:
            entry[name] = value
    return entry


class ProfileImportError(ValueError):
    """An invalid file; the message names the bad entry and field."""


def flatten_errors(errors: object, prefix: str = "") -> list[str]:
    """DRF's nested error structure -> ``path: message`` lines."""
    if isinstance(errors, Mapping):
        out: list[str] = []
        for key, value in errors.items():
            if key == "non_field_errors":
                path = prefix
            elif isinstance(key, int):  # DRF reports list items by index
                path = f"{prefix}[{key}]"
            else:
                path = f"{prefix}.{key}" if prefix else str(key)
            out.extend(flatten_errors(value, path))
        return out
    if isinstance(errors, list):
        if all(isinstance(e, str) for e in errors):
            return [f"{prefix}: {e}" if prefix else str(e) for e in errors]
        out = []
        for i, value in enumerate(errors):
            if value:
                out.extend(flatten_errors(value, f"{prefix}[{i}]"))
        return out
    return [f"{prefix}: {errors}" if prefix else str(errors)]


def export_profiles(queryset=None) -> dict:
    groups = []
    for group in (
        (NodeGroup.objects.all() if queryset is None else queryset)
        .order_by("name")
        .prefetch_related("profiles__devices")
    ):
        entry = {f: getattr(group, "machine_type" if f == "instance_type" else f) for f in GROUP_FIELDS}
        entry["profiles"] = [
            {
                "vendor": p.vendor,
                "pair_scores": p.pair_scores or {},
                "notes": p.notes,
                "devices": [_row_entry(r) for r in p.devices.order_by("position", "id")],
            }
            for p in group.profiles.order_by("vendor")
        ]
        groups.append(entry)
    return {"apiVersion": API_VERSION, "kind": "NodeGroupList", "node_groups": groups}


def dump_yaml(data: dict) -> str:
    return safeyaml.dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _load(text: str) -> list:
    try:
        data = safeyaml.load(text)  # no aliases, bounded depth: no expansion bomb
    except yaml.YAMLError as exc:
        raise ProfileImportError(f"not valid YAML: {exc}") from None
    if isinstance(data, Mapping):
        if data.get("apiVersion", API_VERSION) != API_VERSION:
            raise ProfileImportError(f"apiVersion must be {API_VERSION}, got {data.get('apiVersion')!r}")
        data = data.get("node_groups")
    if not isinstance(data, list):
        raise ProfileImportError("expected a list of node groups under node_groups")
    return data


def _check_group_entry(where: str, entry: Mapping, names: set, labels_seen: dict[str, str]) -> None:
    """File-level checks of one node group: known fields, listed once, match_labels unique."""
    name = entry.get("name")
    unknown = set(entry) - set(GROUP_FIELDS) - {"profiles"}
    if unknown:
        raise ProfileImportError(f"{where}: unknown fields {', '.join(sorted(map(str, unknown)))}")
    if name in names:
        raise ProfileImportError(f"{where}: node group listed twice")
    names.add(name)
    if entry.get("match_labels"):
        key = repr(sorted(dict(entry["match_labels"]).items()))
        if key in labels_seen:
            raise ProfileImportError(
                f"{where}: match_labels: the same as node group {labels_seen[key]!r}'s in this file"
            )
        labels_seen[key] = str(name)


def _plan_profiles(where: str, profiles: object) -> list[dict]:
    """The validated profiles of one node group (each vendor at most once)."""
    if not isinstance(profiles, list):
        raise ProfileImportError(f"{where}: profiles must be a list")
    plans = []
    vendors: set[str] = set()
    for j, profile in enumerate(profiles):
        ps = NestedDeviceProfileSerializer(data=profile)
        if not isinstance(profile, Mapping) or not ps.is_valid():
            errors = ps.errors if isinstance(profile, Mapping) else {"": ["expected a mapping"]}
            raise ProfileImportError(f"{where}: " + "; ".join(flatten_errors(errors, f"profiles[{j}]")))
        vendor = ps.validated_data.get("vendor", Vendor.default)
        if vendor in vendors:
            raise ProfileImportError(f"{where}: profiles[{j}].vendor: {vendor} listed twice")
        vendors.add(vendor)
        plans.append(ps.validated_data)
    return plans


def import_profiles(text: str) -> dict[str, int]:
    """Validate everything, then upsert groups by name and replace the profiles listed for each."""
    names: set[str] = set()
    labels_seen: dict[str, str] = {}
    entries = _load(text)
    plans = [
        _plan_group(i, entry, names, labels_seen)
        for i, entry in counted(enumerate(entries), "check node groups", total=len(entries), every=10)
    ]
    counts = {"created": 0, "updated": 0, "profiles": 0}
    with transaction.atomic(), profile_edit():  # one version per changed profile, none for an identical file
        for serializer, profile_plans in counted(plans, "import node groups", every=10):
            counts["updated" if serializer.instance is not None else "created"] += 1
            group = serializer.save()
            if profile_plans is not None:
                counts["profiles"] += _replace_profiles(group, profile_plans)
    return counts


def _plan_group(i: int, entry: object, names: set, labels_seen: dict[str, str]) -> tuple:
    """One node group of the file validated (nothing written): its serializer, bound to the stored
    group of that name if any, and its validated profiles (None when the entry lists none)."""
    where = f"node_groups[{i}]"
    if not isinstance(entry, Mapping):
        raise ProfileImportError(f"{where}: expected a mapping, got {type(entry).__name__}")
    name = entry.get("name")
    where = f"{where} ({name})" if name else where
    _check_group_entry(where, entry, names, labels_seen)
    existing = NodeGroup.objects.filter(name=name).first() if isinstance(name, str) else None
    group_data = {k: v for k, v in entry.items() if k != "profiles"}
    serializer = NodeGroupSerializer(instance=existing, data=group_data, partial=existing is not None)
    if not serializer.is_valid():
        raise ProfileImportError(f"{where}: " + "; ".join(flatten_errors(serializer.errors)))
    profiles = entry.get("profiles")
    return serializer, _plan_profiles(where, profiles) if profiles is not None else None


def _replace_profiles(group: NodeGroup, profile_plans: list[dict]) -> int:
    """Save the group's listed profiles (only what differs, so an identical file writes no version)
    and delete the ones the file no longer lists; returns the profiles saved."""
    keep = []
    for data in profile_plans:
        data = dict(data)
        rows = data.pop("devices")
        vendor = data.pop("vendor", Vendor.default)
        profile = DeviceProfile.objects.filter(node_group=group, vendor=vendor).first()
        if profile is None:
            profile, changed = DeviceProfile(node_group=group, vendor=vendor), data
        else:  # only what differs: an identical file saves no header
            changed = {key: value for key, value in data.items() if getattr(profile, key) != value}
        save_profile(profile, rows=complete_rows(vendor, rows), **changed)
        keep.append(profile.pk)
    group.profiles.exclude(pk__in=keep).delete()
    return len(keep)

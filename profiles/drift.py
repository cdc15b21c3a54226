"""Drift: a registered node's devices against its node group's profile (docs/profiles.md, "Drift taxonomy").

Static fields (device count, type, devmem beyond a tolerance, devcore, split count, mode, MIG
profiles, NUMA layout) are *mismatches*: the profile promises something the node does not have,
so cold-zero simulations would be wrong. Health is dynamic: an unhealthy device is a *degradation*.
UUIDs and indexes differ by nature and are ignored. A group node without a registration after the
grace period is *unregistered*; one whose annotation does not parse is *malformed*.

Every vendor is compared on its own: the node's devices of vendor V (``device_vendor``) against the
group's V profile. A vendor the node registers but the group has no profile for (while it has
others) is a *mismatch* on ``vendor``. Findings about non-NVIDIA devices name the vendor in their
``device`` column, so NVIDIA findings keep their identity.

``compare`` is pure; ``check_inventories`` applies it to the database: a finding per problem, kept
open while the problem lasts, resolved when it goes away.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial

import orjson
from django.db import transaction
from django.utils import timezone

from hami_sim.engine.annotations import decode_device_json, encode_device_json
from hami_sim.engine.model import DeviceInfo
from hami_sim.engine.vendors import default_word
from hami_sim.project.conf import conf

from .choices import DriftKind, Severity
from .models import DeviceProfile, DriftFinding, NodeInventory

log = logging.getLogger("hami_sim.drift")

__all__ = [
    "Problem",
    "compare",
    "check_inventories",
    "check_group",
    "check_group_on_commit",
    "devices_from_json",
]


@dataclass(slots=True, frozen=True)
class Problem:
    """One drift problem; (kind, field, device) identifies it across checks."""

    kind: str
    field: str
    device: str
    expected: str
    actual: str
    severity: str


def _mig_text(dev: DeviceInfo) -> str:
    return ", ".join(sorted(f"{p.name}({p.memory_mb}MiB)" for p in dev.mig_profiles)) or "none"


def compare(
    expected: list[DeviceInfo], actual: list[DeviceInfo], tolerance_pct: float = 2.0
) -> list[Problem]:
    """Problems of ``actual`` (a node's registration) against ``expected`` (its profile), by device index."""
    problems: list[Problem] = []
    if len(expected) != len(actual):
        problems.append(
            Problem(
                DriftKind.MISMATCH,
                "device count",
                "",
                str(len(expected)),
                str(len(actual)),
                Severity.CRITICAL,
            )
        )
    actual_sorted = sorted(actual, key=lambda d: d.index)
    for pos, (exp, act) in enumerate(zip(expected, actual_sorted, strict=False)):
        device = f"{act.index} {act.id}".strip() if act.id else str(pos)
        problems.extend(_device_problems(exp, act, device, tolerance_pct))
    for act in actual_sorted:
        if not act.health:
            problems.append(
                Problem(
                    DriftKind.DEGRADATION,
                    "health",
                    f"{act.index} {act.id}".strip(),
                    "healthy",
                    "unhealthy",
                    Severity.WARNING,
                )
            )
    return problems


def _device_problems(exp: DeviceInfo, act: DeviceInfo, device: str, tolerance_pct: float) -> list[Problem]:
    """Where one registered device differs from the profile's device at its position: the fields a
    fit reads are critical (memory within ``tolerance_pct``), the NUMA node a warning."""
    crit, mismatch = Severity.CRITICAL, DriftKind.MISMATCH
    out: list[Problem] = []
    if exp.type != act.type:
        out.append(Problem(mismatch, "type", device, exp.type, act.type, crit))
    if abs(exp.devmem - act.devmem) > exp.devmem * tolerance_pct / 100.0:
        out.append(Problem(mismatch, "devmem", device, f"{exp.devmem} MiB", f"{act.devmem} MiB", crit))
    if exp.devcore != act.devcore:
        out.append(Problem(mismatch, "devcore", device, str(exp.devcore), str(act.devcore), crit))
    if exp.count != act.count:
        out.append(Problem(mismatch, "count", device, str(exp.count), str(act.count), crit))
    if (exp.mode or "hami-core") != (act.mode or "hami-core"):
        out.append(Problem(mismatch, "mode", device, exp.mode, act.mode, crit))
    if _mig_text(exp) != _mig_text(act):
        out.append(Problem(mismatch, "mig_profiles", device, _mig_text(exp), _mig_text(act), crit))
    if exp.numa != act.numa:
        out.append(Problem(mismatch, "numa", device, str(exp.numa), str(act.numa), Severity.WARNING))
    return out


def devices_from_json(devices: list) -> list[DeviceInfo]:
    return decode_device_json(orjson.dumps(devices).decode()) if devices else []


def devices_to_json(devices: Iterable[DeviceInfo]) -> list:
    """Annotation JSON form with each device's vendor (``devicevendor``), so drift can split them."""
    return orjson.loads(encode_device_json(list(devices), include_vendor=True))


def _registration_name(vendors: Iterable[str]) -> str:
    """What an unregistered node lacks, in the words of its profiles' vendors."""
    from .vendors import SPECS, registration_source

    names = [registration_source(v) if v in SPECS else "hami.io/node-nvidia-register" for v in vendors]
    return ", ".join(dict.fromkeys(names)) or "hami.io/node-nvidia-register"


def _problems_for(
    inv, expected_by_group: dict[int, dict[str, list[DeviceInfo]] | None], now
) -> list[Problem]:
    """What is wrong with one live inventory of a group: an unparsable registration, none past the
    grace period, or devices that differ from the group's profile."""
    if inv.gone_at is not None or inv.node_group_id is None:
        return []
    if inv.parse_error:
        return [
            Problem(
                DriftKind.MALFORMED,
                "annotation",
                "",
                "a registration that parses",
                inv.parse_error,
                Severity.CRITICAL,
            )
        ]
    expected = expected_by_group.get(inv.node_group_id)
    if not inv.devices:
        grace = timedelta(seconds=conf().drift_unregistered_grace_seconds)
        if now - inv.first_seen >= grace:
            what = _registration_name(expected or [default_word()])
            return [Problem(DriftKind.UNREGISTERED, "annotation", "", what, "none", Severity.WARNING)]
        return []
    if not expected:
        return []  # no profile: nothing promised, nothing to compare
    return _vendor_problems(inv, expected)


def _vendor_problems(inv, expected: dict[str, list[DeviceInfo]]) -> list[Problem]:
    """A registered inventory against its profiles, vendor by vendor (a device's vendor named unless
    it is the default backend's), and any vendor the node registers that no profile promises."""
    tolerance = conf().drift_devmem_tolerance_percent
    actual: dict[str, list[DeviceInfo]] = {}
    for dev in devices_from_json(inv.devices):
        actual.setdefault(dev.device_vendor or default_word(), []).append(dev)
    problems: list[Problem] = []
    for vendor, devices in expected.items():
        found = compare(devices, actual.get(vendor, []), tolerance)
        if vendor != default_word():
            found = [replace(p, device=f"{vendor} {p.device}".strip()) for p in found]
        problems.extend(found)
    for vendor, devices in actual.items():
        if vendor not in expected:
            problems.append(
                Problem(
                    DriftKind.MISMATCH,
                    "vendor",
                    vendor,
                    f"no {vendor} devices",
                    f"{len(devices)} devices",
                    Severity.WARNING,
                )
            )
    return problems


def expected_devices(group_ids: Iterable[int]) -> dict[int, dict[str, list[DeviceInfo]] | None]:
    """Rendered profile devices per group id and vendor (None when the group has no profile)."""
    from .render import render_devices

    out: dict[int, dict[str, list[DeviceInfo]] | None] = {gid: None for gid in group_ids}
    profiles = DeviceProfile.objects.filter(node_group_id__in=list(out)).select_related("node_group")
    for profile in profiles.prefetch_related("devices"):
        rows = [row.as_dict() for row in profile.devices.all()]
        if rows:
            by_vendor = out[profile.node_group_id] or {}
            by_vendor[profile.vendor] = render_devices(profile.node_group.name, profile.vendor, rows)
            out[profile.node_group_id] = by_vendor
    return out


def check_inventories(inventory_ids: Iterable[int] | None = None) -> dict[str, int]:
    """Open/refresh/resolve findings for the given inventories (all when None). Idempotent."""
    now = timezone.now()
    qs = NodeInventory.objects.all()
    if inventory_ids is not None:
        qs = qs.filter(pk__in=list(inventory_ids))
    inventories = list(qs)
    expected = expected_devices({inv.node_group_id for inv in inventories if inv.node_group_id})
    counts = {"checked": 0, "opened": 0, "resolved": 0, "open": 0}
    # one query for which inventories have open findings: a node with no problem and none open needs
    # no row lock and no write but its drift_checked_at, done for all of them at once (a cold sync of
    # thousands of healthy nodes was three round trips per node)
    with_open = set(
        DriftFinding.objects.filter(inventory__in=inventories, resolved_at__isnull=True).values_list(
            "inventory_id", flat=True
        )
    )
    untouched: list[int] = []
    for inv in inventories:
        problems = {(p.kind, p.field, p.device): p for p in _problems_for(inv, expected, now)}
        if not problems and inv.pk not in with_open:
            untouched.append(inv.pk)
            counts["checked"] += 1
            continue
        _reconcile(inv, problems, now, counts)
        counts["checked"] += 1
        counts["open"] += len(problems)
    for i in range(0, len(untouched), 2000):
        NodeInventory.objects.filter(pk__in=untouched[i : i + 2000]).update(drift_checked_at=now)
    return counts


def _reconcile(inv, problems: dict[tuple, Problem], now, counts: dict[str, int]) -> None:
    """Make one inventory's open findings the problems it has now, under a row lock: resolve those
    gone (or filed under another group), refresh those whose values moved, open the new ones."""
    with transaction.atomic():
        open_findings = {
            (f.kind, f.field, f.device): f
            for f in DriftFinding.objects.select_for_update().filter(inventory=inv, resolved_at__isnull=True)
        }
        for key, finding in open_findings.items():
            problem = problems.get(key)
            if problem is None or finding.node_group_id != inv.node_group_id:
                finding.resolved_at = now
                finding.save(update_fields=["resolved_at"])
                counts["resolved"] += 1
                open_findings[key] = None  # type: ignore[assignment]
            elif (finding.expected, finding.actual, finding.severity) != (
                problem.expected,
                problem.actual,
                problem.severity,
            ):
                finding.expected, finding.actual, finding.severity = (
                    problem.expected,
                    problem.actual,
                    problem.severity,
                )
                finding.save(update_fields=["expected", "actual", "severity"])
        for key, problem in problems.items():
            if open_findings.get(key) is None:
                DriftFinding.objects.create(
                    inventory=inv,
                    node_group_id=inv.node_group_id,
                    kind=problem.kind,
                    field=problem.field,
                    device=problem.device,
                    expected=problem.expected,
                    actual=problem.actual,
                    severity=problem.severity,
                    opened_at=now,
                )
                counts["opened"] += 1
        NodeInventory.objects.filter(pk=inv.pk).update(drift_checked_at=now)


def check_group(node_group_id: int) -> dict[str, int]:
    """``check_inventories`` for the nodes of one group only: what a profile save calls (once its
    transaction commits) so findings follow an edit at once instead of at the next periodic check."""
    ids = list(NodeInventory.objects.filter(node_group_id=node_group_id).values_list("pk", flat=True))
    if not ids:
        return {"checked": 0, "opened": 0, "resolved": 0, "open": 0}
    return check_inventories(ids)


def _check_group_logged(node_group_id: int) -> None:
    try:
        counts = check_group(node_group_id)
    except Exception:  # the save has committed; the periodic check_drift catches up
        log.exception("drift check after a profile edit failed for node group %s", node_group_id)
        return
    if counts["checked"]:
        log.info("drift re-checked after a profile edit", extra={"node_group_id": node_group_id, **counts})


def check_group_on_commit(node_group_id: int) -> None:
    """Run ``check_group`` when the current transaction commits (at once outside one); never raises
    into the committed save."""
    transaction.on_commit(partial(_check_group_logged, node_group_id))

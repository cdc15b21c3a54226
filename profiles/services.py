"""Profile edits and their versions: the one home of both.

``save_profile`` is the service every writer calls (the REST API, the YAML import, the admin's
"create profile from inventory" and revert): header fields and/or the full list of device rows,
as ONE version and one history entry that holds the rows, the group's drift re-checked once after
commit. ``profile_edit`` is its scope, for callers that change several things as one user-visible
edit (an admin form with inline rows, a whole YAML file). ``stamp_version`` is the only code that
sets ``DeviceProfile.version``; ``profiles.signals`` forwards raw model writes (an admin inline
row, a shell ``row.save()``) here, so they are versioned by the same rules.

The rules: a new profile is version 1; a save that changes nothing versioned keeps the version;
one edit moves each profile's version by at most one, however many writes it makes (rows are
replaced by delete + create; header, rows and snapshot are saved separately).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from .drift import check_group_on_commit
from .models import DeviceProfile, DeviceRow

__all__ = [
    "save_profile",
    "profile_edit",
    "set_rows",
    "sync_snapshot",
    "rows_changed",
    "profile_saved",
    "stamp_version",
    "history_written",
]


@dataclass(slots=True)
class _Edit:
    """Profiles touched by the current edit: version each had before it, rows changed under it, and
    the node groups whose profiles were saved (their drift is re-checked once, after commit)."""

    base: dict[int, int] = field(default_factory=dict)
    rows_changed: set[int] = field(default_factory=set)
    groups: set[int] = field(default_factory=set)
    history: dict[int, list[tuple[int, str]]] = field(default_factory=dict)


_EDIT: ContextVar[_Edit | None] = ContextVar("hami_sim_profile_edit", default=None)


@contextmanager
def profile_edit() -> Iterator[None]:
    """One user-visible edit of profiles, atomically: each profile touched is versioned and its rows
    snapshotted once when the edit ends; drift is re-checked per group after commit. Nested uses
    join the outer edit."""
    if _EDIT.get() is not None:
        yield
        return
    edit = _Edit()
    with transaction.atomic():
        token = _EDIT.set(edit)
        try:
            yield
            for profile in DeviceProfile.objects.filter(pk__in=edit.rows_changed):
                sync_snapshot(profile)
            _collapse_history(edit)
        finally:
            _EDIT.reset(token)  # before the commit: on-commit work is not part of the edit
        for group_id in sorted(edit.groups):
            check_group_on_commit(group_id)


def history_written(profile_id: int, history_id: int, history_type: str) -> None:
    """A history entry of ``profile_id`` was written; inside an edit, remember it for the collapse."""
    edit = _EDIT.get()
    if edit is not None:
        edit.history.setdefault(profile_id, []).append((history_id, history_type))


def _collapse_history(edit: _Edit) -> None:
    """One edit, one history entry per profile: the header save and the rows snapshot are separate
    writes, but the admin's history (and its revert) must show one entry holding both. The last entry
    is kept (final header and rows), typed as the first ("Created" for a profile this edit made)."""
    model = DeviceProfile.history.model
    for entries in edit.history.values():
        if len(entries) < 2:
            continue
        (_, first_type), (last_id, last_type) = entries[0], entries[-1]
        model.objects.filter(history_id__in=[hid for hid, _ in entries[:-1]]).delete()
        if first_type != last_type:
            model.objects.filter(history_id=last_id).update(history_type=first_type)


def save_profile(profile: DeviceProfile, *, rows: list[dict] | None = None, **fields: Any) -> DeviceProfile:
    """Change ``profile`` (new or stored): set ``fields`` and, when given, replace its device rows
    with ``rows`` (complete row dicts, in order). One version, one history entry with the rows.

    The header is saved when the profile is new or ``fields`` are given, so an import that found
    nothing to change in the header makes no history entry for it."""
    with profile_edit():
        for name, value in fields.items():
            setattr(profile, name, value)
        if profile._state.adding or fields:
            profile.save()
        if rows is not None:
            set_rows(profile, rows)
    return profile


def set_rows(profile: DeviceProfile, rows: list[dict]) -> None:
    """Replace the device rows (in order) and record them in a new history entry (one version)."""
    with profile_edit():
        profile.devices.all().delete()
        for position, row in enumerate(rows):
            DeviceRow.objects.create(profile=profile, position=position, **row)
        sync_snapshot(profile)


def sync_snapshot(profile: DeviceProfile) -> None:
    """Save the current rows into ``devices_snapshot`` (one history entry) when they changed; the
    history entry is what a revert in the admin restores the rows from."""
    rows = profile.rows_data()
    if rows != profile.devices_snapshot:
        profile.devices_snapshot = rows
        profile.save()


def rows_changed(profile_id: int) -> None:
    """A row of ``profile_id`` was written: snapshot (and version) now, or when the open edit ends."""
    edit = _EDIT.get()
    if edit is not None:
        edit.rows_changed.add(profile_id)
        return
    profile = DeviceProfile.objects.filter(pk=profile_id).first()
    if profile is not None:
        sync_snapshot(profile)


def profile_saved(node_group_id: int) -> None:
    """A profile of the group was saved or deleted: re-check the group's drift once, after commit
    (when the open edit ends, or now outside one)."""
    edit = _EDIT.get()
    if edit is not None:
        edit.groups.add(node_group_id)
    else:
        check_group_on_commit(node_group_id)


def stamp_version(profile: DeviceProfile) -> None:
    """Set ``profile.version`` before it is saved: 1 for a new profile, the stored one when nothing
    versioned changed, else one more than before the current edit or, outside one, than stored."""
    if profile._state.adding or profile.pk is None:
        return
    stored = (
        DeviceProfile.objects.filter(pk=profile.pk).values("version", *DeviceProfile.VERSIONED_FIELDS).first()
    )
    if stored is None:
        return
    # a profile whose rows were never set yet (created, rows to follow) is not a version
    before = 0 if stored["version"] <= 1 and not stored["devices_snapshot"] else stored["version"]
    edit = _EDIT.get()
    if edit is not None:
        before = edit.base.setdefault(profile.pk, before)
    changed = any(getattr(profile, f) != stored[f] for f in DeviceProfile.VERSIONED_FIELDS)
    profile.version = max(before + 1, 1) if changed else max(stored["version"], 1)

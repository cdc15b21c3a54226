"""Two versions of a device profile side by side: which header fields and which device rows changed.

Rows are compared by position (the order HAMi registers devices in), so "row 2: devmem 23028 -> 24576"
reads like the edit that made it; a row only one side has is "added" or "removed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["HEADER_FIELDS", "RowDiff", "ProfileDiff", "diff_versions"]

#: the versioned header fields, as the page names them
HEADER_FIELDS = (("vendor", "vendor"), ("notes", "notes"), ("pair_scores", "pair scores"))


@dataclass(frozen=True, slots=True)
class RowDiff:
    position: int
    status: str  # "same", "changed", "added" or "removed"
    old: Mapping | None
    new: Mapping | None
    #: (field, old value, new value) for a changed row
    changes: tuple[tuple[str, object, object], ...] = ()


@dataclass(slots=True)
class ProfileDiff:
    header: list[tuple[str, object, object]] = field(default_factory=list)
    rows: list[RowDiff] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.header) or any(r.status != "same" for r in self.rows)


def _rows(version: object) -> Sequence[Mapping]:
    rows = getattr(version, "devices_snapshot", None)
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


def diff_versions(old: object, new: object) -> ProfileDiff:
    """``old`` and ``new``: history entries (or profiles) with the versioned fields."""
    out = ProfileDiff()
    for attr, label in HEADER_FIELDS:
        before, after = getattr(old, attr, None), getattr(new, attr, None)
        if before != after:
            out.header.append((label, before, after))
    old_rows, new_rows = _rows(old), _rows(new)
    for i in range(max(len(old_rows), len(new_rows))):
        a = old_rows[i] if i < len(old_rows) else None
        b = new_rows[i] if i < len(new_rows) else None
        if a is None:
            out.rows.append(RowDiff(i, "added", None, b))
        elif b is None:
            out.rows.append(RowDiff(i, "removed", a, None))
        else:
            keys = list(dict.fromkeys([*a, *b]))
            changes = tuple((k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k))
            out.rows.append(RowDiff(i, "changed" if changes else "same", a, b, changes))
    return out

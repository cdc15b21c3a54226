"""Rows the database would refuse, made storable: trimmed, NUL characters replaced, or a marker.

A pod name longer than its column, a NUL character in an annotation or a lone surrogate would make
PostgreSQL refuse the whole row; the question still happened, so it is stored as close to what was
summarised as the database allows, or as a marker that says why the detail is missing.
"""

from __future__ import annotations

from hami_sim.runtime.storable import clean_text, storable_fields

from .models import Decision

__all__ = ["storable", "marker", "clean_text"]


#: what a string column may hold (``Decision`` field -> max_length), read once from the model
_CHAR_LIMITS = {
    f.name: f.max_length for f in Decision._meta.get_fields() if getattr(f, "max_length", None) and f.concrete
}


def storable(row: dict) -> dict:
    """The row with every string the database would refuse repaired: strings in columns trimmed to
    the column and NUL characters (text and JSON) replaced by U+FFFD."""
    return storable_fields(row, _CHAR_LIMITS)


def marker(row: dict, error: BaseException) -> dict:
    """The row that still records the question when the summary itself cannot be stored: who asked,
    the verdict and counts, and why the detail is missing (in ``top_reason``)."""
    why = clean_text(f"unstorable record: {error.__class__.__name__}: {str(error).strip()}", 300)
    keep = ("digest", "caller", "verdict", "latency_ms", "count", "first_seen", "last_seen")
    out = {key: row[key] for key in keep if key in row}
    for key in ("node_count", "fit_count"):  # what a PostgreSQL integer holds
        out[key] = min(max(int(row.get(key) or 0), 0), 2**31 - 1)
    for key in ("pod_uid", "pod_namespace", "pod_name", "pod_owner", "session"):
        text = row.get(key)
        ascii_text = text.encode("ascii", "replace").decode() if isinstance(text, str) else ""
        out[key] = clean_text(ascii_text, _CHAR_LIMITS.get(key))
    out.update(top_reason=why, node_groups=[], fit_groups=[], request=[], nodes=[], policies={})
    return out

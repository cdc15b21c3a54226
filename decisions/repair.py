"""Rows the database would refuse, made storable: trimmed, NUL characters replaced, or a marker.

A pod name longer than its column, a NUL character in an annotation or a lone surrogate would make
PostgreSQL refuse the whole row; the question still happened, so it is stored as close to what was
summarised as the database allows, or as a marker that says why the detail is missing.
"""

from __future__ import annotations

from typing import Any

from .models import Decision

__all__ = ["storable", "marker", "clean_text"]


#: what a string column may hold (``Decision`` field -> max_length), read once from the model
_CHAR_LIMITS = {
    f.name: f.max_length for f in Decision._meta.get_fields() if getattr(f, "max_length", None) and f.concrete
}
_TRIMMED = "…"


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` as PostgreSQL stores it: NUL characters and lone surrogates replaced, at most
    ``limit`` characters (the last one then says it was trimmed)."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + _TRIMMED
    return text


def _clean_json(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): _clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_json(v) for v in value]
    return value


def storable(row: dict) -> dict:
    """The row with every string the database would refuse repaired: strings in columns trimmed to
    the column and NUL characters (text and JSON) replaced by U+FFFD."""
    out = dict(row)
    for key, value in row.items():
        if isinstance(value, str):
            out[key] = clean_text(value, _CHAR_LIMITS.get(key))
        elif isinstance(value, dict | list):
            out[key] = _clean_json(value)
    return out


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

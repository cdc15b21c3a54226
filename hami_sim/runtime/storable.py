"""Text and JSON the database would refuse, made storable: NUL characters and lone surrogates
replaced by U+FFFD, text trimmed to its column.

PostgreSQL's ``text`` and ``jsonb`` cannot hold NUL (psycopg refuses the query, or the server the
``\\u0000`` escape) and no UTF-8 column can hold a lone surrogate. Such strings reach us from the
cluster (anyone who may create a pod chooses its annotations) and from callers; one of them must
never fail a whole write. The decision recorder and the cluster syncs both repair with these.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = [
    "clean_text",
    "clean_json",
    "encode_checked",
    "storable_fields",
    "json_needs_cleaning",
    "text_needs_cleaning",
    "TRIMMED",
]

TRIMMED = "…"


def text_needs_cleaning(text: str, limit: int | None = None) -> bool:
    """Whether ``clean_text`` would change ``text``."""
    if "\x00" in text or (limit is not None and len(text) > limit):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
        text = text[: limit - 1] + TRIMMED
    return text


def clean_json(value: Any) -> Any:
    """A JSON value with every string (keys too) made storable by ``clean_text``."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


def json_needs_cleaning(value: Any, encoded: bytes | None = None) -> bool:
    """Whether ``value`` holds a string the database refuses. ``encoded``: its orjson encoding when
    the caller made one anyway (a content hash): then the common, clean case costs one substring
    search. A lone surrogate makes orjson refuse to encode at all."""
    if encoded is None:
        try:
            encoded = orjson.dumps(value)
        except TypeError:
            return True
    # (an escaped backslash before "u0000" matches too: then the walk below decides)
    return b"\\u0000" in encoded and clean_json(value) != value


def encode_checked(value: Any) -> tuple[bytes, bool]:
    """``value`` encoded by orjson with sorted keys (what content hashes digest), and whether it
    holds text the database refuses: one encoding serves both. A value orjson cannot encode (a
    lone surrogate) is encoded repaired."""
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return orjson.dumps(clean_json(value), option=orjson.OPT_SORT_KEYS), True
    return encoded, json_needs_cleaning(value, encoded)


def storable_fields(row: dict, limits: dict[str, int | None]) -> dict:
    """A row with every string the database would refuse repaired: strings in columns trimmed to
    the column (``limits``: field -> max_length) and NUL characters (text and JSON) replaced."""
    out = dict(row)
    for key, value in row.items():
        if isinstance(value, str):
            out[key] = clean_text(value, limits.get(key))
        elif isinstance(value, dict | list):
            out[key] = clean_json(value)
    return out

"""Whole-cluster syncs: insert many rows at once (PostgreSQL ``COPY``, else ``bulk_create``), and
work on millions of small objects without the cyclic garbage collector (``gc_paused``).

A cold sync of a large cluster inserts thousands of node inventories and a hundred thousand pod
allocations. Django's ``bulk_create`` on psycopg 3 sends JSON columns as text arrays that psycopg
escapes character by character with a regular expression (22 s for 5,000 node inventories here);
``COPY`` streams each row once, with JSON serialised by orjson.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import orjson
from django.db import connection
from django.db.models import Model

__all__ = ["copy_rows", "instance_row", "gc_paused"]

_BATCH = 1000


def instance_row(obj: Model) -> dict:
    """An unsaved instance as a row for ``copy_rows``: every concrete field but the primary key."""
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields if not f.primary_key}


def copy_rows(model: type[Model], rows: Sequence[Mapping]) -> None:
    """Insert ``rows`` (field name or attname -> Python value, the same keys in every row)."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create([model(**row) for row in rows], batch_size=_BATCH)
        return
    columns = list(rows[0])
    fields = [model._meta.get_field(c) for c in columns]
    json_cols = [i for i, f in enumerate(fields) if f.get_internal_type() == "JSONField"]
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            values = [row[c] for c in columns]
            for i in json_cols:
                values[i] = orjson.dumps(values[i]).decode()
            copy.write_row(values)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a sync of the whole cluster (a context manager or
    a decorator).

    A relist builds millions of small objects that hold no reference cycles (pages of Pod JSON,
    allocations, rows) and keeps many of them alive to the end, so the collector walked them again
    and again: more than half of a cold 100,000-pod relist's CPU (``bench/usage_bench.py``).
    Reference counting still frees everything; only cycles wait until the relist ends.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()

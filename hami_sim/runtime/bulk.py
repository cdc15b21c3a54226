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
from django.db import connection, transaction
from django.db.models import Model

__all__ = ["copy_rows", "update_rows", "instance_row", "gc_paused", "gc_frozen"]

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
    with connection.cursor() as cursor:
        _copy(cursor, model._meta.db_table, model, list(rows[0]), rows)


def update_rows(objs: Sequence[Model], fields: Sequence[str]) -> None:
    """Write ``fields`` of saved instances: on PostgreSQL ``COPY`` into a temporary table, then one
    ``UPDATE ... FROM`` (Django's ``bulk_update`` took 18 s for 5,000 node inventories here)."""
    if not objs:
        return
    model = type(objs[0])
    if connection.vendor != "postgresql":
        model._default_manager.bulk_update(objs, fields, batch_size=_BATCH)
        return
    attnames = [model._meta.get_field(f).attname for f in fields]
    quote = connection.ops.quote_name
    table, pk = quote(model._meta.db_table), quote(model._meta.pk.column)
    columns = [quote(model._meta.get_field(a).column) for a in attnames]
    rows = [{"pk": obj.pk, **{a: getattr(obj, a) for a in attnames}} for obj in objs]
    with transaction.atomic(), connection.cursor() as cursor:  # the temporary table lives until commit
        cursor.execute(
            f"CREATE TEMPORARY TABLE hami_sim_bulk_update ON COMMIT DROP AS "
            f"SELECT {pk}, {', '.join(columns)} FROM {table} WITH NO DATA"
        )
        _copy(cursor, "hami_sim_bulk_update", model, ["pk", *attnames], rows)
        assignments = ", ".join(f"{c} = s.{c}" for c in columns)
        cursor.execute(
            f"UPDATE {table} AS t SET {assignments} FROM hami_sim_bulk_update AS s WHERE t.{pk} = s.{pk}"
        )
        cursor.execute("DROP TABLE hami_sim_bulk_update")


def _copy(cursor, table: str, model: type[Model], columns: list[str], rows: Sequence[Mapping]) -> None:
    """``COPY`` rows of ``model``'s fields ``columns`` into ``table``; JSON serialised by orjson."""
    fields = [model._meta.pk if c == "pk" else model._meta.get_field(c) for c in columns]
    json_cols = [i for i, f in enumerate(fields) if f.get_internal_type() == "JSONField"]
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    with cursor.cursor.copy(f"COPY {connection.ops.quote_name(table)} ({names}) FROM STDIN") as copy:
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
    Reference counting still frees everything; only cycles wait until the relist ends. A 10,000-pod
    estimate is the same shape (1.7 s of a 1.9 s parse went to the collector), so its view uses this
    too. The pause is process-wide: a caller that finds collection already paused (another thread)
    leaves it to that one to resume, so it is never left off.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Keep the collector running, but off everything alive on entry (``gc.freeze``).

    A 10,000-pod estimate packs while its parsed request (millions of objects) is alive; every
    collection walked it again (0.6 s of a 1 s request). Frozen, new garbage is still collected,
    and threads other than the caller keep their collection, unlike ``gc_paused``. Another thread's
    unfreeze only costs speed, never memory.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

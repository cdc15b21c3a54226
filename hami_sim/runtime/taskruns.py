"""``record_run``: wrap a task body so each run leaves a ``TaskRun`` row, whatever its outcome, and
the row says how far the run is while it runs (``RowProgress``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import orjson
from celery import Task
from celery.exceptions import Retry
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from hami_sim.project.conf import conf

from .models import TaskRun
from .progress import reporting

__all__ = ["record_run", "will_autoretry", "RowProgress"]


def _never(exc: BaseException) -> bool:
    return False


def will_autoretry(task: Task) -> Callable[[BaseException], bool]:
    """For ``record_run``: whether Celery's ``autoretry_for`` will run this attempt of ``task`` again
    after ``exc`` (as ``Task.retry`` decides: not when called directly, not past ``max_retries``;
    not in the caller either when the task says ``retries_eagerly = False``)."""

    def retrying(exc: BaseException) -> bool:
        request = task.request
        if request.called_directly or not isinstance(exc, tuple(task.autoretry_for or ())):
            return False
        if request.is_eager and not getattr(task, "retries_eagerly", True):
            return False
        return task.max_retries is None or request.retries < task.max_retries

    return retrying


class RowProgress:
    """A ``progress.Reporter`` that writes a running task's progress into its ``TaskRun`` row: when a
    stage starts, each time another 1 % of it is done (500 items while its size is unknown), and
    when it ends, so a sync of thousands of nodes writes a few hundred small updates at most.

    Work inside a transaction (the node and usage syncs write in one) would hide an update made on
    its connection until it commits, so there the row is updated on a connection of its own,
    committed at once (PostgreSQL; SQLite has one writer at a time and skips those reports)."""

    def __init__(self, run_pk: int) -> None:
        self.pk = run_pk
        self.last: tuple[str, int, int | None] | None = None
        self.side = None

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if not self._due(stage, done, total):
            return
        self.last = (stage, done, total)
        value = {"stage": stage, "done": done, "total": total}
        if not connection.in_atomic_block:
            TaskRun.objects.filter(pk=self.pk).update(progress=value)
        elif connection.vendor == "postgresql":
            if self.side is None:
                self.side = connections.create_connection(DEFAULT_DB_ALIAS)
            with self.side.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {TaskRun._meta.db_table} SET progress = %s WHERE id = %s",
                    [orjson.dumps(value).decode(), self.pk],
                )

    def _due(self, stage: str, done: int, total: int | None) -> bool:
        if self.last is None or self.last[0] != stage or self.last[2] != total or done == total:
            return True
        step = max(total // 100, 1) if total else 500
        return done - self.last[1] >= step

    def close(self) -> None:
        if self.side is not None:
            self.side.close()
            self.side = None


@contextmanager
def record_run(
    task: str, task_id: str = "", *, retrying: Callable[[BaseException], bool] = _never
) -> Iterator[dict]:
    """Usage: ``with record_run("sync_cluster_inventory", self.request.id) as counts: counts["nodes"] = n``.

    An exception marks the run failed (with its text) and propagates, so Celery can retry; Celery's
    ``Retry``, or an exception ``retrying`` says Celery will retry (``will_autoretry``), marks it
    ``retry`` (with the cause's text).
    """
    started = time.monotonic()
    now = timezone.now()
    # A worker killed mid-task (OOM, eviction) never records an outcome; close such runs so the
    # dashboard does not show them running forever (the redelivered attempt records its own run).
    abandon = timedelta(seconds=conf().task_run_abandon_seconds)
    TaskRun.objects.filter(task=task, outcome=TaskRun.Outcome.RUNNING, started_at__lt=now - abandon).update(
        outcome=TaskRun.Outcome.FAILURE, error="abandoned: the worker stopped before recording an outcome"
    )
    run = TaskRun.objects.create(task=task, task_id=task_id or "", started_at=now)
    counts: dict = {}
    progress = RowProgress(run.pk)
    try:
        with reporting(progress):
            yield counts
    except Retry as exc:
        run.outcome = TaskRun.Outcome.RETRY
        cause = exc.exc if exc.exc is not None else exc
        run.error = f"{cause.__class__.__name__}: {cause}"[:4000]
        raise
    except Exception as exc:
        run.outcome = TaskRun.Outcome.RETRY if retrying(exc) else TaskRun.Outcome.FAILURE
        run.error = f"{exc.__class__.__name__}: {exc}"[:4000]
        raise
    else:
        run.outcome = TaskRun.Outcome.SUCCESS
    finally:
        progress.close()
        run.finished_at = timezone.now()
        run.duration_ms = int((time.monotonic() - started) * 1000)
        run.counts = counts
        run.save(update_fields=["outcome", "error", "finished_at", "duration_ms", "counts"])

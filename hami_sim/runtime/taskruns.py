"""``record_run``: wrap a task body so each run leaves a ``TaskRun`` row, whatever its outcome."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from celery import Task
from celery.exceptions import Retry
from django.utils import timezone

from hami_sim.project.conf import conf

from .models import TaskRun

__all__ = ["record_run", "will_autoretry"]


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
    try:
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
        run.finished_at = timezone.now()
        run.duration_ms = int((time.monotonic() - started) * 1000)
        run.counts = counts
        run.save(update_fields=["outcome", "error", "finished_at", "duration_ms", "counts"])

"""Celery tasks of the usage app: ``refresh_blind_spot`` (every minute by default; the schedule is a
``django_celery_beat`` row, editable in the admin)."""

from __future__ import annotations

from celery import shared_task

from .metrics import refresh_blind_spot as _refresh

__all__ = ["refresh_blind_spot"]


@shared_task(name="usage.tasks.refresh_blind_spot", ignore_result=True, expires=120)
def refresh_blind_spot() -> dict:
    """The blind spot's Prometheus series, computed here and stored, so no ``/metrics`` scrape judges
    every pending pod on the request path. Its row says when it last ran and why it failed; a
    ``TaskRun`` a minute would bury the task-runs page, so none is written."""
    return _refresh()

"""Celery tasks of the simulations app."""

from __future__ import annotations

from celery import shared_task

from hami_sim.runtime.taskruns import record_run

from .sessions import expire_sessions as _expire

__all__ = ["expire_sessions"]


@shared_task(bind=True, ignore_result=True)
def expire_sessions(self) -> int:
    """Delete sessions whose TTL has passed. Idempotent: a second run finds nothing to delete."""
    with record_run("expire_sessions", getattr(self.request, "id", "") or "") as counts:
        deleted = _expire()
        counts["deleted"] = deleted
    return deleted

"""Celery tasks of the profiles app. They take ids/strings, are idempotent, and record every run.

- ``profiles.tasks.sync_cluster_inventory``: read Nodes from ``KUBE_SOURCE`` and upsert inventories.
  A failed read (API down, slow, 403...) keeps the last good inventory, marks it stale with the
  error, and Celery retries it (``autoretry_for``) with exponential backoff, 30 s doubling to at most
  15 minutes, ``KUBE_SYNC_MAX_RETRIES`` times. After the nodes it reads which HAMi release the
  cluster runs (``hami_install``; a failure there is recorded, never raised).
  An object it cannot store as read (a NUL in a pod's annotation) is stored repaired or skipped and
  named in the run's ``rejected`` count (``hami_sim.runtime.rejects``); the rest of the sync lands.
- ``profiles.tasks.check_drift``: (re)check drift for some inventories, a group, or all of them.
"""

from __future__ import annotations

from celery import Task, shared_task
from celery.utils.time import get_exponential_backoff_interval

from hami_sim.project.conf import conf
from hami_sim.runtime.rejects import rejections
from hami_sim.runtime.taskruns import record_run, will_autoretry

from .drift import check_inventories
from .hami_install import check_cluster
from .kube import SourceError, list_nodes
from .sync import cluster_synced, mark_stale, sync_nodes

__all__ = ["sync_cluster_inventory", "check_drift", "backoff_seconds"]


BACKOFF_FIRST_SECONDS = 30
BACKOFF_MAX_SECONDS = 900


def backoff_seconds(retries: int) -> int:
    """The countdown Celery's ``retry_backoff`` gives retry ``retries + 1``: 30 s, 60 s, 120 s ... 15 min."""
    return get_exponential_backoff_interval(
        factor=BACKOFF_FIRST_SECONDS, retries=retries, maximum=BACKOFF_MAX_SECONDS, full_jitter=False
    )


class SyncTask(Task):
    """``max_retries`` from ``KUBE_SYNC_MAX_RETRIES`` when a retry is decided, not at import. Run in
    the caller (``apply()``: a synchronous sync, the tests) a failed read is raised at once instead of
    being retried on the spot; in a worker Celery schedules the retry (``autoretry_for``)."""

    retries_eagerly = False

    @property
    def max_retries(self) -> int:  # type: ignore[override]
        return conf().kube_sync_max_retries

    def retry(self, *args, exc=None, **kwargs):
        if self.request.is_eager and exc is not None:
            raise exc
        return super().retry(*args, exc=exc, **kwargs)


@shared_task(
    bind=True,
    base=SyncTask,
    name="profiles.tasks.sync_cluster_inventory",
    acks_late=True,
    autoretry_for=(SourceError,),
    retry_backoff=BACKOFF_FIRST_SECONDS,
    retry_backoff_max=BACKOFF_MAX_SECONDS,
    retry_jitter=False,
)
def sync_cluster_inventory(self, source: str | None = None, label_selector: str | None = None) -> dict:
    source = source if source is not None else conf().kube_source
    selector = label_selector if label_selector is not None else conf().kube_node_label_selector
    run = record_run("sync_cluster_inventory", self.request.id or "", retrying=will_autoretry(self))
    with run as counts, rejections("sync_cluster_inventory") as rejected:
        if not source:
            counts["skipped"] = "KUBE_SOURCE is not set"
            return counts
        try:
            nodes = list_nodes(
                source,
                selector,
                page_size=conf().kube_page_size,
                timeout=conf().kube_request_timeout,
            )
        except SourceError as exc:
            counts["stale"] = mark_stale(str(exc))
            counts["status"] = exc.status or 0
            raise  # Celery retries it (autoretry_for)
        counts.update(sync_nodes(nodes))
        counts["hami_release"] = check_cluster(source, timeout=conf().kube_request_timeout)
        cluster_synced.send(sender=sync_cluster_inventory, source=source, counts=counts, nodes=nodes)
        if rejected.found:  # named on the Task runs page (and in RejectedObject)
            counts["rejected"] = "; ".join(rejected.summary()[:10])
    return counts


@shared_task(bind=True, name="profiles.tasks.check_drift", acks_late=True)
def check_drift(self, inventory_ids: list[int] | None = None, node_group_id: int | None = None) -> dict:
    from .models import NodeInventory

    with record_run("check_drift", self.request.id or "") as counts:
        ids = inventory_ids
        if node_group_id is not None:
            ids = list(NodeInventory.objects.filter(node_group_id=node_group_id).values_list("pk", flat=True))
        counts.update(check_inventories(ids))
    return counts

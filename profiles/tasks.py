"""Celery tasks of the profiles app. They take ids/strings, are idempotent, and record every run.

- ``profiles.tasks.sync_cluster_inventory``: read Nodes from ``KUBE_SOURCE`` and upsert inventories.
  A failed read (API down, slow, 403...) keeps the last good inventory, marks it stale with the
  error, and retries with exponential backoff (``KUBE_SYNC_MAX_RETRIES``).
- ``profiles.tasks.check_drift``: (re)check drift for some inventories, a group, or all of them.
"""

from __future__ import annotations

from celery import shared_task

from hami_sim.conf import conf
from hami_sim.runtime.taskruns import record_run

from .drift import check_inventories
from .kube import SourceError, list_nodes
from .sync import cluster_synced, mark_stale, sync_nodes

__all__ = ["sync_cluster_inventory", "check_drift", "backoff_seconds"]


def backoff_seconds(retries: int) -> int:
    """30 s, 60 s, 120 s ... capped at 15 minutes."""
    return min(30 * 2**retries, 900)


@shared_task(bind=True, name="profiles.tasks.sync_cluster_inventory", max_retries=None, acks_late=True)
def sync_cluster_inventory(self, source: str | None = None, label_selector: str | None = None) -> dict:
    source = source if source is not None else conf().kube_source
    selector = label_selector if label_selector is not None else conf().kube_node_label_selector
    with record_run("sync_cluster_inventory", self.request.id or "") as counts:
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
            max_retries = conf().kube_sync_max_retries
            if self.request.called_directly or self.request.is_eager or self.request.retries >= max_retries:
                raise
            raise self.retry(
                exc=exc, countdown=backoff_seconds(self.request.retries), max_retries=max_retries
            ) from None
        counts.update(sync_nodes(nodes))
        cluster_synced.send(sender=sync_cluster_inventory, source=source, counts=counts)
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

"""The periodic Celery relist (``profiles.tasks.sync_cluster_inventory``) also relists pods (and,
with ``DRA_SYNC``, the DRA objects).

``profiles`` cannot import this app (layers point down), so the node sync announces itself with
``profiles.sync.cluster_synced`` and usage listens. A failed pod read leaves the node sync's result
alone: usage keeps its last values, records the error and ages until a read succeeds.
"""

from __future__ import annotations

import logging

from django.dispatch import receiver

from hami_sim.project.conf import conf
from profiles.kube import SourceError
from profiles.sync import cluster_synced

log = logging.getLogger("hami_sim.usage")


@receiver(cluster_synced)
def _relist_pods(sender, source: str, counts: dict, **kwargs) -> None:
    from .cluster import nodes_changed, relist_pods
    from .pending import sync_node_facts

    nodes = kwargs.get("nodes")
    if nodes is not None:  # what CA reads of each node besides its devices (taints, allocatable)
        sync_node_facts(nodes)
    if conf().dra_sync:  # before the pods: a pending pod's claims are judged against these
        from .dra import sync_dra

        counts["dra"] = sync_dra(source)
    try:
        _rv, pod_counts = relist_pods(source, everything=nodes_changed(counts))
    except SourceError as exc:
        log.warning("pod relist failed; usage keeps its last values: %s", exc)
        counts["pods_error"] = str(exc)
        return
    counts.update(pod_counts)

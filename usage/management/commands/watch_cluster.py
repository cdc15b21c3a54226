"""``manage.py watch_cluster``: keep inventories and live usage fresh with a watch (its own Deployment).

Lists Nodes and Pods, then watches both from the lists' resourceVersion with bookmarks; relists on
410 Gone and reconnects with backoff on errors. SIGTERM/SIGINT stop it cleanly. Run one replica: the
database serialises writers, but two watchers only double the API load.
"""

from __future__ import annotations

import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hami_sim.project.conf import conf


class Command(BaseCommand):
    help = "Watch Nodes and Pods from KUBE_SOURCE and keep live usage fresh until stopped."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--source", default=None, help="in-cluster or kubeconfig:<path>")
        parser.add_argument("--selector", default=None, help="Node label selector (KUBE_NODE_LABEL_SELECTOR)")
        parser.add_argument(
            "--watch-seconds", type=int, default=None, help="server-side timeout of one watch"
        )

    def handle(self, *args, **options) -> None:
        from usage.cluster import ClusterWatcher

        source = options["source"] if options["source"] is not None else settings.KUBE_SOURCE
        if not source or source.startswith("file://"):
            raise CommandError("watch_cluster needs an API source (in-cluster or kubeconfig:<path>)")
        selector = (
            options["selector"] if options["selector"] is not None else settings.KUBE_NODE_LABEL_SELECTOR
        )
        seconds = options["watch_seconds"] or conf().usage_watch_seconds
        watcher = ClusterWatcher(source, selector=selector, watch_seconds=seconds)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: watcher.stop())
        self.stdout.write(f"watching nodes and pods at {source}")
        counts = watcher.run()
        self.stdout.write(f"stopped: {counts}")

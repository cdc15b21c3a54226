"""``manage.py sync_cluster``: one sync of Nodes and Pods in the foreground (snapshots, tests), with a
progress bar per stage on stderr when it is a terminal; the counts on stdout either way."""

from __future__ import annotations

import sys

import orjson
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hami_sim.runtime.progress import terminal_progress
from profiles.kube import SourceError


class Command(BaseCommand):
    help = "Read Nodes and Pods from KUBE_SOURCE (or --source) once: inventories, then live usage."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--source", default=None, help="in-cluster, kubeconfig:<path> or file://<path>")
        parser.add_argument("--selector", default=None, help="Node label selector (KUBE_NODE_LABEL_SELECTOR)")

    def handle(self, *args, **options) -> None:
        from hami_sim.runtime.rejects import rejections
        from usage.cluster import sync_cluster

        source = options["source"] if options["source"] is not None else settings.KUBE_SOURCE
        selector = (
            options["selector"] if options["selector"] is not None else settings.KUBE_NODE_LABEL_SELECTOR
        )
        if not source:
            raise CommandError("no source: set KUBE_SOURCE or pass --source")
        try:
            with (
                rejections("sync_cluster") as rejected,
                terminal_progress(sys.stderr),
            ):  # bars on a terminal only
                counts = sync_cluster(source, selector)
                counts["rejected"] = rejected.summary()
        except SourceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(orjson.dumps(counts, option=orjson.OPT_SORT_KEYS).decode())

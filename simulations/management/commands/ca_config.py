"""``manage.py ca_config [--check] [--root DIR]``: write (or check) Cluster Autoscaler's scheduler
configuration files in ``deploy/`` from the enabled vendors (``make ca-config``)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hami_sim.engine.ca_releases import CAVersionError, parse_ca_version
from hami_sim.project.conf import configured_ca_release
from hami_sim.runtime.simulator import build_vendors
from simulations.caconfig import REGENERATE, rendered_files


class Command(BaseCommand):
    help = (
        "Render CA's --scheduler-config-file for upstream CA (NodeResourcesFit ignoredResources) and "
        "for a CA built with the extender patch, from the enabled vendors."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="write nothing; fail when a committed file is stale"
        )
        parser.add_argument(
            "--root", default=str(settings.BASE_DIR), help="repository root holding deploy/ (default: here)"
        )
        parser.add_argument(
            "--ca-version",
            help="the Cluster Autoscaler release to render for (default: the CA_VERSION setting)",
        )

    def handle(self, *args, **opts):
        root = Path(opts["root"])
        try:
            version = opts["ca_version"]
            ca = configured_ca_release() if version is None else parse_ca_version(version)
        except CAVersionError as exc:
            raise CommandError(str(exc)) from None
        stale = []
        for relative, text in rendered_files(build_vendors(settings.HAMI), ca).items():
            path = root / relative
            current = path.read_text() if path.exists() else None
            if current == text:
                self.stdout.write(f"up to date: {relative}")
            elif opts["check"]:
                stale.append(str(relative))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                self.stdout.write(f"wrote {relative}")
        if stale:
            raise CommandError(f"stale: {', '.join(stale)}; regenerate with `{REGENERATE}`")

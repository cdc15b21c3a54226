"""``manage.py import_profiles FILE``: load node groups and profiles from YAML (all or nothing)."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from hami_sim.runtime.progress import terminal_progress
from profiles.yamlio import ProfileImportError, import_profiles


class Command(BaseCommand):
    help = "Import node groups and device profiles from a YAML file (the API's schema). '-' reads stdin."

    def add_arguments(self, parser):
        parser.add_argument("file")

    def handle(self, *args, **options):
        path = options["file"]
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            with terminal_progress(sys.stderr):  # bars on a terminal only
                counts = import_profiles(text)
        except ProfileImportError as exc:
            raise CommandError(f"{path}: {exc}; nothing was changed") from None
        self.stdout.write(
            f"imported {counts['created']} new and {counts['updated']} updated node groups, {counts['profiles']} profiles"
        )

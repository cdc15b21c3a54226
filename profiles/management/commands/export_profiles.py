"""``manage.py export_profiles [-o FILE]``: node groups and profiles as YAML (the API's schema)."""

from pathlib import Path

from django.core.management.base import BaseCommand

from profiles.models import NodeGroup
from profiles.yamlio import dump_yaml, export_profiles


class Command(BaseCommand):
    help = "Export node groups and device profiles as YAML, importable with import_profiles."

    def add_arguments(self, parser):
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")
        parser.add_argument("names", nargs="*", help="only these node groups")

    def handle(self, *args, **options):
        queryset = NodeGroup.objects.filter(name__in=options["names"]) if options["names"] else None
        text = dump_yaml(export_profiles(queryset))
        if options["output"]:
            Path(options["output"]).write_text(text)
        else:
            self.stdout.write(text, ending="")

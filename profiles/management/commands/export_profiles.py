"""``manage.py export_profiles [-o FILE]``: node groups and profiles as YAML (the API's schema)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from profiles.models import NodeGroup
from profiles.yamlio import dump_yaml, export_profiles


def unknown_groups_message(asked: list[str], known: list[str]) -> str | None:
    """One line naming every asked-for group that does not exist and the ones that do; None when all exist."""
    unknown = sorted(set(asked) - set(known))
    if not unknown:
        return None
    noun = "node group" if len(unknown) == 1 else "node groups"
    return f"unknown {noun}: {', '.join(unknown)}; known: {', '.join(sorted(known)) or '(none)'}"


class Command(BaseCommand):
    help = "Export node groups and device profiles as YAML, importable with import_profiles."

    def add_arguments(self, parser):
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")
        parser.add_argument("names", nargs="*", help="only these node groups")

    def handle(self, *args, **options):
        names = options["names"]
        queryset = None
        if names:  # an unknown name is a typo, not an empty export
            problem = unknown_groups_message(names, list(NodeGroup.objects.values_list("name", flat=True)))
            if problem:
                raise CommandError(problem)
            queryset = NodeGroup.objects.filter(name__in=names)
        text = dump_yaml(export_profiles(queryset))
        if options["output"]:
            try:
                Path(options["output"]).write_text(text)
            except OSError as exc:
                raise CommandError(f"cannot write {options['output']}: {exc.strerror or exc}") from None
        else:
            self.stdout.write(text, ending="")

#!/usr/bin/env python
"""Django's command-line utility for hami-sim."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    from django.core.management import execute_from_command_line

    from hami_sim.runtime.localdirs import ensure_local_dirs

    ensure_local_dirs()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()

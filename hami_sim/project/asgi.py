"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from hami_sim.runtime.localdirs import ensure_local_dirs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
application = get_asgi_application()
ensure_local_dirs()  # the SQLite folder and the filesystem broker, where the demo uses them

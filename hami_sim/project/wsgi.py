"""WSGI entry point (gunicorn), seeing each request as nginx received it (``proxied``)."""

import os

from django.core.wsgi import get_wsgi_application

from hami_sim.project.proxied import from_nginx
from hami_sim.runtime.localdirs import ensure_local_dirs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
application = from_nginx(get_wsgi_application())
ensure_local_dirs()  # the SQLite folder and the filesystem broker, where the demo uses them

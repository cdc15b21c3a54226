"""Celery application.

The broker defaults to Kombu's ``filesystem://`` transport under ``var/broker`` so the embedded demo
needs no server; production sets ``CELERY_BROKER_URL`` (Redis or RabbitMQ).
"""

import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")

app = Celery("hami_sim")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
@signals.beat_init.connect
def _local_dirs(**kwargs) -> None:
    """The filesystem broker's folders (and the SQLite folder) before the worker or beat uses them."""
    from hami_sim.runtime.localdirs import ensure_local_dirs

    ensure_local_dirs()


@app.on_after_configure.connect
def _refuse_unsafe_start(**kwargs) -> None:
    """A worker, beat or any Celery command with production settings and the demo secret key exits
    as soon as it reads its configuration, before it connects anywhere (the server and the
    management commands refuse the same: ``checks.start_problems``)."""
    from hami_sim.project.checks import refuse_unsafe_start

    refuse_unsafe_start()

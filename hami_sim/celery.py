"""Celery application.

The broker defaults to Kombu's ``filesystem://`` transport under ``var/broker`` so the embedded demo
needs no server; production sets ``CELERY_BROKER_URL`` (Redis or RabbitMQ).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.settings")

app = Celery("hami_sim")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

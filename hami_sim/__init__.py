"""hami-sim: HAMi device-aware simulation for the Kubernetes Cluster Autoscaler."""

from .celery import app as celery_app

__all__ = ["celery_app"]

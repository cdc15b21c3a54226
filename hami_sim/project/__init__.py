"""The Django project: settings, URLs, WSGI/ASGI, middleware, the REST helpers and Celery's app.

Celery's app is loaded with the project (as Celery's Django guide does) so ``shared_task`` binds to it
in every process that loads the settings; the engine never imports this package.
"""

from .celery import app as celery_app

__all__ = ["celery_app"]

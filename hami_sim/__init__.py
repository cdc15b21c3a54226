"""hami-sim: HAMi device-aware simulation for the Kubernetes Cluster Autoscaler.

The package holds the pure engine (``hami_sim.engine``, importable without Django or Celery), the
Django project (``hami_sim.project``: settings, URLs, middleware, the REST helpers, Celery's app),
the process model (``hami_sim.server``: the production server, gunicorn's configuration and worker,
the demo), the runtime app (``hami_sim.runtime``) and the helpers every app's pages share
(``hami_sim.pages``). Importing this package imports nothing else.
"""

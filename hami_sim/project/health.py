"""Liveness and readiness.

``/readyz`` checks only what simulation needs: the database answers and no migration is pending.
Celery and the Kubernetes API are deliberately not checked: the extender answers without them.
Both say what is degraded without making the process unready or dead: the shared cache (Redis,
``CACHE_URL``) when it is gone and its counters are kept per process
(``hami_sim.project.cachefallback``).
"""

from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse

from .cachefallback import FallbackRedisCache, degraded


def _degraded() -> dict[str, str]:
    """What works degraded now: the shared cache, asked once (a failure is remembered for a few
    seconds, so a probe never waits on a gone Redis more than once in a while)."""
    backend = caches["default"]
    if not isinstance(backend, FallbackRedisCache):
        return {}
    backend.get("hami-sim:health-probe")
    why = degraded()
    return {"cache": why} if why else {}


def healthz(request: HttpRequest) -> JsonResponse:
    body: dict[str, object] = {"status": "ok"}
    if gone := _degraded():
        body["degraded"] = gone
    return JsonResponse(body)


def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    try:
        connection = connections[DEFAULT_DB_ALIAS]
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        checks["migrations"] = "ok" if not pending else f"{len(pending)} pending"
    except Exception as exc:  # any database failure means "not ready", never a 500
        checks.setdefault("database", f"error: {exc.__class__.__name__}")
    ready = all(v == "ok" for v in checks.values()) and len(checks) == 2
    body: dict[str, object] = {"status": "ready" if ready else "not ready", "checks": checks}
    if gone := _degraded():  # ready all the same: nothing that answers needs it
        body["degraded"] = gone
    return JsonResponse(body, status=200 if ready else 503)

"""Liveness and readiness.

``/readyz`` checks only what simulation needs: the database answers and no migration is pending.
Celery and the Kubernetes API are deliberately not checked: the extender answers without them.
"""

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


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
    return JsonResponse(
        {"status": "ready" if ready else "not ready", "checks": checks}, status=200 if ready else 503
    )

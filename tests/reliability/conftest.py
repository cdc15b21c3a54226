"""Fixtures for tests that run the app in a child process (gunicorn, Celery worker)."""

from __future__ import annotations

import pytest


@pytest.fixture
def child_database_url(transactional_db) -> str | None:
    """A ``DATABASE_URL`` a child process can share with this test, or None for "make your own".

    On PostgreSQL it is pytest-django's test database (migrated; flushed after the test because the
    fixture is transactional). An in-memory SQLite test database cannot be shared: None.
    """
    from django.db import connection

    params = connection.settings_dict
    if params["ENGINE"].endswith("postgresql"):
        user = params.get("USER") or "postgres"
        host = params.get("HOST") or "127.0.0.1"
        port = params.get("PORT") or 5432
        password = f":{params['PASSWORD']}" if params.get("PASSWORD") else ""
        return f"postgres://{user}{password}@{host}:{port}/{params['NAME']}"
    name = str(params.get("NAME") or "")
    if name and ":memory:" not in name and "mode=memory" not in name:
        return f"sqlite:///{name}"
    return None

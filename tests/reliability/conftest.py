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


@pytest.fixture
def make_probe_world(db):
    """What the hardening probes expect to exist: a node group ``gpu-a10`` with a profile, a viewer
    (logged in, no permissions) and an operator (member of the ``operators`` group). Returns
    (viewer, operator)."""
    from tests.factories.models import A10G, NodeGroupFactory, UserFactory

    NodeGroupFactory(name="gpu-a10", rows=[{**A10G, "quantity": 4}])
    viewer = UserFactory(username="probe-viewer", password="probe-viewer-pw-1")
    operator = UserFactory(username="probe-operator", password="probe-operator-pw-1", roles=["operators"])
    return viewer, operator


@pytest.fixture
def empty_cache():
    """Login lockouts and session rates count in the cache: empty before the test and after it, even
    when an assertion fails, so no count leaks into the next test."""
    from django.core.cache import cache

    cache.clear()
    try:
        yield cache
    finally:
        cache.clear()


@pytest.fixture
def first_call_held(monkeypatch):
    """The in-process expander's first call to reach its work holds its work slot until the test
    sets the returned event, then does its real work: "a call in work" for as long as the test
    needs, however fast the machine (or the shared caches of an earlier test) would have packed it.
    Yields (entered, release): ``entered`` is set once that call holds its slot."""
    import threading

    from simulations.grpcexpander import server

    real, entered, release, lock = server.best_options, threading.Event(), threading.Event(), threading.Lock()

    def held(*args, **kwargs):
        with lock:
            first = not entered.is_set()
            entered.set()
        if first:
            release.wait(120)  # a bound for a test that failed before releasing it
        return real(*args, **kwargs)

    monkeypatch.setattr(server, "best_options", held)
    yield entered, release
    release.set()

"""Shared fixtures. Node and pod builders live in ``tests/factories.py``."""

import pytest
from hypothesis import settings as hypothesis_settings

# Every property test is seeded: ``derandomize`` draws the same examples on every run and no example
# database carries failures from one run into the next, so ``make test`` answers the same each time.
# Loaded here, before any test module builds its ``@settings(...)``, so those inherit it.
hypothesis_settings.register_profile("seeded", derandomize=True, database=None)
hypothesis_settings.load_profile("seeded")

# Engine tests by folder (they carry no marker of their own): ``make test-fast`` selects
# ``engine or api`` and leaves out ``slow`` and ``browser``.
_ENGINE_PATHS = ("tests/engine/", "tests/vendors/", "tests/estimate/", "tests/test_hami_docs_fixtures.py")
# ... except these estimate tests, which carry no ``engine`` marker (they never ran in ``make test-fast``)
_NOT_ENGINE = (
    "tests/estimate/test_api.py",
    "tests/estimate/test_custom_info.py",
    "tests/estimate/test_engine.py",
    "tests/estimate/test_reference.py",
)


def pytest_collection_modifyitems(config, items):
    """Mark the engine conformance tests ``engine`` (``make test-fast``); check property tests are seeded."""
    root = str(config.rootpath) + "/"
    for item in items:
        path = str(item.path).removeprefix(root)
        if path.startswith(_ENGINE_PATHS) and not path.startswith(_NOT_ENGINE):
            item.add_marker(pytest.mark.engine)
        _require_seeded(item)


def _require_seeded(item) -> None:
    """A property test that turns ``derandomize`` off would make runs differ: refuse to collect it."""
    used = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    if used is not None and not used.derandomize:
        raise pytest.UsageError(f"{item.nodeid}: hypothesis tests are seeded (derandomize=True)")


def pytest_configure(config):
    """The local folders the settings point at (SQLite, static, filesystem broker): settings create none."""
    from hami_sim.runtime.localdirs import ensure_local_dirs

    ensure_local_dirs()
    # Templates link static files by content hash (CompressedManifestStaticFilesStorage): collect them
    # once per change of the sources, so no test depends on a manual collectstatic.
    from hami_sim.runtime.staticfiles import collect_static_if_stale

    collect_static_if_stale()
    # The live server then serves /static/ through WhiteNoise, as production does (hashed names,
    # gzip, cache headers), instead of Django's finder-based handler that knows no hashed names.
    from django.contrib.staticfiles.handlers import StaticFilesHandler

    StaticFilesHandler._should_handle = lambda self, path: False


@pytest.fixture(autouse=True)
def _fresh_simulator():
    """Each test sees a simulator built from its own settings, with empty memo caches."""
    from hami_sim.runtime.simulator import get_simulator
    from profiles.inventory import reset as reset_profile_catalog
    from simulations.grpcexpander.service import reset_caches as reset_expander_caches
    from usage.store import reset as reset_usage_store

    get_simulator.cache_clear()
    reset_profile_catalog()  # node-group profiles are cached per process; tests roll the database back
    reset_usage_store()  # so is live usage
    reset_expander_caches()  # and the gRPC expander's decoded messages and packings
    yield
    get_simulator.cache_clear()
    reset_usage_store()


@pytest.fixture(autouse=True)
def _no_api_throttling(settings):
    """DRF throttles count per process in the cache: a whole suite (or one schema-fuzzing test) easily
    passes 600 anonymous requests a minute. Off unless a test sets rates (tests/deploy/test_access.py)."""
    from django.core.cache import cache

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    cache.clear()
    yield


@pytest.fixture
def idle_decision_writer(settings):
    """The async decision writer, idle until ``recorder.flush``: what is recorded stays queued, and
    everything recorded meanwhile is one batch. Questions of earlier tests (flushed with their rows)
    are forgotten, so each question here is new to the writer."""
    from decisions import recorder

    settings.DECISION_RECORDING = "async"
    recorder._writer.ensure_running()
    settings.DECISION_FLUSH_SECONDS = 3600
    assert recorder.flush(timeout=20)
    recorder._writer.wake.set()  # the writer goes back to waiting, now for an hour
    assert recorder.flush(timeout=20)
    recorder._writer.known.clear()


@pytest.fixture(autouse=True)
def _record_decisions_inline(settings):
    """Decision records are written by a background thread in production. That thread's own database
    connection commits outside the test's rolled-back transaction, so rows would leak into later tests:
    record in the caller's thread unless a test asks for the async writer itself. This is the one
    place that sets it; tests of the async writer override it (tests/decisions/test_recorder.py)."""
    settings.DECISION_RECORDING = "sync"
    yield


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Django's default PBKDF2 costs about a second per user created or login checked on this
    machine; the tests exercise roles and throttles, not the hash, so they use a cheap one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    yield

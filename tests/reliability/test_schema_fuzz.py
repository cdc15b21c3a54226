"""Schema fuzzing: schemathesis generates requests for every operation in ``/api/schema/``.

Seeded (``derandomize``) and bounded (``max_examples`` per operation) so the run is CI-sized. The
requests go through Django's WSGI application in-process, inside the test's database transaction.

For every generated request: no 5xx; status code, content type, headers and body conform to the
schema; and a request the API rejects (4xx) leaves every table as it was. Requests are made as a
superuser with an API token, so writes get past authentication into validation.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi import checks as openapi_checks

from .corpus import row_counts

pytestmark = [pytest.mark.api, pytest.mark.slow, pytest.mark.django_db]  # property-based: not in test-fast

MAX_EXAMPLES = 12

CHECKS = [
    schemathesis.checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.response_headers_conformance,
]


@pytest.fixture
def api_schema(db, settings):
    """The live schema, loaded through the WSGI app the production server runs."""
    from hami_sim.project.wsgi import application

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "100000/min", "user": "100000/min"},
    }
    # Django's handler closes "obsolete" connections around each request; inside the test's
    # transaction that would close it under us (Django's own test client disconnects these too).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/", application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def token(db) -> str:
    from tests.factories.models import TokenFactory

    return TokenFactory(user__superuser=True).key


def _fuzz_operation(operation, token: str | None, max_examples: int = MAX_EXAMPLES) -> None:
    """Run one operation's generated cases; raises the first failure hypothesis shrinks to."""

    @settings(
        max_examples=max_examples, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(case=operation.as_strategy())
    def run(case):
        headers = {"Authorization": f"Token {token}"} if token else {}
        # Each example runs in a savepoint that is rolled back: examples cannot see each other's
        # writes, and a database error in one (PostgreSQL aborts the transaction) cannot leak.
        with transaction.atomic():
            try:
                before = row_counts()
                response = case.call(headers=headers)
                case.validate_response(response, checks=CHECKS, headers=headers)
                if 400 <= response.status_code < 500:
                    assert row_counts() == before, (
                        f"{case.method} {case.formatted_path} -> {response.status_code} changed stored state"
                    )
            finally:
                transaction.set_rollback(True)

    run()


@pytest.mark.parametrize("caller", ["token", "anonymous"])
def test_every_operation_holds_its_schema(api_schema, token, caller):
    """Every operation, each with its own seeded examples; all failures are reported together.

    As a superuser with a token (writes reach validation), and anonymously for the writes (they must
    be refused with a documented 401/403, or served when the endpoint is open, and change nothing).
    (schemathesis' lazy pytest loader does not run under pytest 9, so we drive its strategies here.)
    """
    failures: dict[str, str] = {}
    labels = []
    for result in api_schema.get_all_operations():
        operation = result.ok()
        if caller == "anonymous" and operation.method.upper() in ("GET", "HEAD", "OPTIONS"):
            continue
        labels.append(operation.label)
        try:
            _fuzz_operation(
                operation, token if caller == "token" else None, MAX_EXAMPLES if caller == "token" else 4
            )
        except (Exception, BaseExceptionGroup) as exc:  # collect: one bad operation must not hide the others
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:3000]
    assert len(labels) >= 4, labels
    assert not failures, "\n\n".join(f"{label}\n{text}" for label, text in failures.items())

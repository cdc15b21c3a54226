"""Structured JSON logs that carry the request id, the pod and the verdict of the request they belong to.

Why context variables: the extender view, the decision recorder and the engine log from deep call
stacks that know nothing about the HTTP request. ``RequestIdMiddleware`` (``hami_sim.project.middleware``)
binds the request id at the start of a request; the extender binds the pod and the verdict once it
knows them (``bind``); ``RequestContextFilter`` copies whatever is bound onto every log record, so
the JSON formatter emits ``request_id``, ``pod`` and ``verdict`` fields without any call site
passing them. Context variables are per thread and per asyncio task, so gthread workers and ASGI do
not mix requests up.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar, Token

__all__ = [
    "REQUEST_ID",
    "POD",
    "VERDICT",
    "RequestContextFilter",
    "bind",
    "clear",
    "current",
    "logging_config",
]

REQUEST_ID: ContextVar[str] = ContextVar("hami_sim_request_id", default="")
POD: ContextVar[str] = ContextVar("hami_sim_pod", default="")
VERDICT: ContextVar[str] = ContextVar("hami_sim_verdict", default="")

_VARS = {"request_id": REQUEST_ID, "pod": POD, "verdict": VERDICT}


def bind(**values: str) -> list[Token]:
    """Bind ``request_id``, ``pod`` and/or ``verdict`` for the rest of this request (or task)."""
    tokens = []
    for key, value in values.items():
        var = _VARS.get(key)
        if var is None:
            raise TypeError(f"unknown log context field {key!r}; expected one of {sorted(_VARS)}")
        tokens.append(var.set(value or ""))
    return tokens


def clear() -> None:
    """Forget everything bound: called when a request ends so a reused thread starts clean."""
    for var in _VARS.values():
        var.set("")


def current() -> dict[str, str]:
    """The bound fields that are set (for the access log line and for tests)."""
    return {key: var.get() for key, var in _VARS.items() if var.get()}


class RequestContextFilter(logging.Filter):
    """Adds ``request_id``, ``pod`` and ``verdict`` to every record (empty strings when unbound).

    A field the call site already passed through ``extra=`` wins, so a log line about another pod
    (a batch writer, say) can say so.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        for key, var in _VARS.items():
            if not getattr(record, key, ""):
                setattr(record, key, var.get())
        return True


def logging_config(level: str = "INFO", *, json_logs: bool = True) -> dict:
    """The ``LOGGING`` dict for settings (and gunicorn's ``logconfig_dict``): one JSON line per record.

    ``json_logs=False`` gives a plain text line for a developer's terminal; the fields are the same.
    """
    fmt = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s %(pod)s %(verdict)s"
    formatter = (
        {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": fmt,
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        }
        if json_logs
        else {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_context": {"()": "hami_sim.project.logconfig.RequestContextFilter"}},
        "formatters": {"json": formatter},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["request_context"]}
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.server": {"level": "WARNING"},
            # Our access line replaces django.request's 4xx warnings, which would say the same twice.
            "django.request": {"level": "ERROR"},
            "gunicorn.error": {"level": level, "handlers": ["console"], "propagate": False},
            "gunicorn.access": {"level": "WARNING", "handlers": ["console"], "propagate": False},
        },
    }

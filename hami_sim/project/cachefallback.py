"""The shared cache (Redis, ``CACHE_URL``) that degrades instead of failing when Redis is gone.

What the cache holds here is never the only copy of anything: the DRF throttles' and the session
creates' counters, the login lock-out counters. With Redis down every one of them raised, so CA's
session create over mTLS, REST reads, token session creates and the admin login answered 500
while ``/readyz`` said ready. Nothing of that needs Redis to answer: this backend answers each
operation Redis cannot from a per-process memory cache instead, so caches miss (fail open) and
throttles keep counting per process (degraded: a client spread over replicas gets each replica's
limit), and it remembers the failure so ``/readyz`` and ``/healthz`` report the cache as degraded.

After a failure Redis is not asked again for ``RETRY_SECONDS`` (a blackholed Redis would otherwise
cost every request its connect timeout); then the next operation tries it again, and a success
clears the degradation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

__all__ = ["FallbackRedisCache", "degraded", "RETRY_SECONDS"]

log = logging.getLogger("hami_sim.project.cache")

RETRY_SECONDS = 5.0
#: connect and read timeouts for Redis (seconds): a stalled Redis costs a request this much at most
SOCKET_TIMEOUT = 0.5

_state_lock = threading.Lock()
_failure: dict[str, Any] = {"since": None, "error": "", "retry_at": 0.0}


def degraded() -> str | None:
    """Why the shared cache is answered from process memory now (None: it is not)."""
    with _state_lock:
        if _failure["since"] is None:
            return None
        return f"degraded since {_failure['since']}: {_failure['error']} (per-process counters)"


def _failed(exc: BaseException) -> None:
    with _state_lock:
        if _failure["since"] is None:
            log.warning("cache unavailable, answering from process memory: %s", exc)
            _failure["since"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _failure["error"] = f"{exc.__class__.__name__}: {exc}"[:300]
        _failure["retry_at"] = time.monotonic() + RETRY_SECONDS


def _recovered() -> None:
    with _state_lock:
        if _failure["since"] is not None:
            log.warning("cache available again")
        _failure.update(since=None, error="", retry_at=0.0)


def _skipping() -> bool:
    with _state_lock:
        return _failure["since"] is not None and time.monotonic() < _failure["retry_at"]


def _redis_errors() -> tuple[type[BaseException], ...]:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return RedisConnectionError, RedisTimeoutError, OSError


class FallbackRedisCache(RedisCache):
    """Django's Redis cache; an operation Redis cannot answer is answered by a process-local cache."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        params = dict(params)
        options = dict(params.get("OPTIONS") or {})
        options.setdefault("socket_connect_timeout", SOCKET_TIMEOUT)
        options.setdefault("socket_timeout", SOCKET_TIMEOUT)
        params["OPTIONS"] = options
        super().__init__(server, params)
        self._local = LocMemCache(f"hami-sim-fallback-{id(self)}", {"OPTIONS": {"MAX_ENTRIES": 100_000}})

    def _either(self, name: str, *args: Any, **kwargs: Any) -> Any:
        fallback: Callable[..., Any] = getattr(self._local, name)
        if _skipping():
            return fallback(*args, **kwargs)
        try:
            result = getattr(super(), name)(*args, **kwargs)
        except _redis_errors() as exc:
            _failed(exc)
            return fallback(*args, **kwargs)
        _recovered()
        return result

    def add(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("add", *args, **kwargs)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("get", *args, **kwargs)

    def set(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("set", *args, **kwargs)

    def touch(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("touch", *args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("delete", *args, **kwargs)

    def get_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("get_many", *args, **kwargs)

    def has_key(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("has_key", *args, **kwargs)

    def incr(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("incr", *args, **kwargs)

    def set_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("set_many", *args, **kwargs)

    def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._either("delete_many", *args, **kwargs)

    def clear(self) -> Any:
        return self._either("clear")

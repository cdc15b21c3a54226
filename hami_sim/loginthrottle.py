"""Login throttling (issue 16 item 12): repeated wrong passwords lock the name, and the address, out.

Before this, 40 wrong admin passwords in a row were all answered normally. Now every failed login
(Django's ``user_login_failed`` signal, whatever form sent it) counts against the username and the
client address in the cache (Redis via ``CACHE_URL`` in production, so every replica shares the
counters, like the DRF throttles). Once ``LOGIN_FAILURE_LIMIT`` failures for a username, or ten times
that for an address (many operators may share a proxy's address), fall within
``LOGIN_FAILURE_WINDOW_SECONDS``, login attempts for it are answered ``429`` without checking the
password, until the window has passed. A successful login clears its username's count.

Why not django-axes: it brings models, migrations, its own backend and a dozen settings for one
login form; this is a cache counter and a middleware, using the cache the API throttles already use.
The cost of a per-username lock is known: someone can keep an operator locked out by failing on
purpose; the window is short and the address limit stops one client doing it at scale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from .conf import conf

__all__ = ["LoginThrottleMiddleware", "LOGIN_PATHS"]

LOGIN_PATHS = frozenset({"/admin/login/"})
ADDRESS_FACTOR = 10


def _key(kind: str, value: str) -> str:
    return f"hami-sim:login-failures:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def _address(request: HttpRequest | None) -> str:
    return request.META.get("REMOTE_ADDR", "") if request is not None else ""


def _limits() -> tuple[int, int]:
    return conf().login_failure_limit, conf().login_failure_window_seconds


def _count(key: str, window: int) -> None:
    if not cache.add(key, 1, window):
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, window)


@receiver(user_login_failed)
def _failed(sender, credentials: dict, request: HttpRequest | None = None, **kwargs) -> None:
    _, window = _limits()
    _count(_key("user", str(credentials.get("username", "")).lower()), window)
    _count(_key("addr", _address(request)), window)


@receiver(user_logged_in)
def _succeeded(sender, request: HttpRequest | None, user, **kwargs) -> None:
    cache.delete(_key("user", user.get_username().lower()))


def locked_out(username: str, address: str) -> bool:
    limit, _ = _limits()
    return (cache.get(_key("user", username.lower())) or 0) >= limit or (
        cache.get(_key("addr", address)) or 0
    ) >= limit * ADDRESS_FACTOR


class LoginThrottleMiddleware:
    """Answers a login POST 429 while its username or address is locked out; the password is not tried."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            request.method == "POST"
            and request.path_info in LOGIN_PATHS
            and locked_out(request.POST.get("username", ""), _address(request))
        ):
            _, window = _limits()
            return HttpResponse(
                "Too many failed logins for this user or address; try again later.",
                status=429,
                content_type="text/plain; charset=utf-8",
                headers={"Retry-After": str(window)},
            )
        return self.get_response(request)

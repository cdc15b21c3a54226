"""Login throttling against guessing: repeated wrong passwords lock the account, and the address, out,
without one address locking out every user behind it.

Every failed login (Django's ``user_login_failed`` signal, whatever form sent it) counts three times
in the cache (Redis via ``CACHE_URL`` in production, so every replica shares the counters, like the
DRF throttles): per account and address together, per account, per address. A login POST is answered
``429`` without checking the password, until ``LOGIN_FAILURE_WINDOW_SECONDS`` have passed, when

- its account failed ``LOGIN_FAILURE_LIMIT`` times from this address; or
- its account failed ten times that from anywhere (guessing from many addresses), or this address
  failed ten times that for any accounts (guessing many names), unless the account logged in
  successfully from this address within ``KNOWN_SECONDS``.

The exception is what keeps an address from locking out everyone behind it (many operators share a
proxy's or a NAT's address): before, 50 failures from one address locked every user of it out,
whoever made them. A user who has logged in from there before keeps the per account-and-address
limit (five more guesses per window at most); a name never seen there waits for the window. In the
same way nobody elsewhere can lock a user out of the address they use. A successful login clears
its account-and-address count.

Every name is counted and checked in one spelling (``login_name``): Django's login form strips the
username and applies NFKC before it authenticates, so ``"viewer "``, ``"viewer\t"`` and fullwidth
``"ｖｉｅｗｅｒ"`` all log in as ``viewer``; a lockout checked under the raw name let each spelling
guess again.

Why not django-axes: it brings models, migrations, its own backend and a dozen settings for one
login form; this is a few cache counters and a middleware, using the cache the API throttles use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from .conf import conf

__all__ = ["LoginThrottleMiddleware", "LOGIN_PATHS", "login_name"]

LOGIN_PATHS = frozenset({"/admin/login/"})
#: the account-wide and address-wide limits are this many times ``LOGIN_FAILURE_LIMIT``
ADDRESS_FACTOR = 10
#: how long a successful login from an address keeps that account exempt from the wide limits there
KNOWN_SECONDS = 30 * 86400


def _key(kind: str, value: str) -> str:
    return f"hami-sim:login-failures:{kind}:{hashlib.sha256(value.encode(errors='replace')).hexdigest()[:32]}"


def login_name(username: object) -> str:
    """The one spelling of a login name that failures are counted and lockouts checked under: what
    Django's login form authenticates (its ``UsernameField``: stripped, then NFKC), lower-cased."""
    from django.contrib.auth.forms import UsernameField

    return str(UsernameField().to_python(str(username or ""))).lower()


def _pair(username: str, address: str) -> str:
    return f"{login_name(username)}\n{address}"


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
    username, address = str(credentials.get("username", "")), _address(request)
    _count(_key("pair", _pair(username, address)), window)
    _count(_key("user", login_name(username)), window)
    _count(_key("addr", address), window)


@receiver(user_logged_in)
def _succeeded(sender, request: HttpRequest | None, user, **kwargs) -> None:
    pair = _pair(user.get_username(), _address(request))
    cache.delete(_key("pair", pair))
    cache.set(_key("known", pair), 1, KNOWN_SECONDS)


def locked_out(username: str, address: str) -> bool:
    """Whether a login for ``username`` from ``address`` is refused now (the module says when)."""
    limit, _ = _limits()
    pair = _pair(username, address)
    if (cache.get(_key("pair", pair)) or 0) >= limit:
        return True
    if cache.get(_key("known", pair)):
        return False
    wide = limit * ADDRESS_FACTOR
    return (cache.get(_key("user", login_name(username))) or 0) >= wide or (
        cache.get(_key("addr", address)) or 0
    ) >= wide


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

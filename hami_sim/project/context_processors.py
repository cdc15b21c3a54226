"""Template context every page may use."""

from __future__ import annotations

from django.conf import settings


def demo(request) -> dict:
    """The demo login, shown on the login page by ``make demo`` only (``DEMO_LOGIN_HINT`` is empty
    everywhere else, so a real deployment never prints a credential)."""
    return {"demo_login_hint": settings.DEMO_LOGIN_HINT}

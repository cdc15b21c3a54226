"""``manage.py check --deploy`` checks Django cannot know about: our demo secret and the listeners.

Django's own W009 accepts the demo key (it is long and varied), so a production install that
forgot ``SECRET_KEY``/``SECRET_KEY_FILE`` would pass ``check --deploy`` silently without this.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.checks import Tags, Warning, register

__all__ = ["check_secret_key", "check_listener"]

DEMO_KEY_PREFIX = "hami-sim-insecure-demo-key"


@register(Tags.security, deploy=True)
def check_secret_key(app_configs, **kwargs):
    if str(settings.SECRET_KEY).startswith(DEMO_KEY_PREFIX):
        return [
            Warning(
                "SECRET_KEY is the built-in demo key.",
                hint="Set SECRET_KEY or SECRET_KEY_FILE (a mounted Secret) to a long random value.",
                id="hami_sim.W001",
            )
        ]
    return []


@register(Tags.security, deploy=True)
def check_listener(app_configs, **kwargs):
    listener = getattr(settings, "HAMI_SIM_LISTENER", "all")
    errors = []
    if listener not in {"all", "extender", "web"}:
        errors.append(
            Warning(f"HAMI_SIM_LISTENER={listener!r} is not one of all, extender, web.", id="hami_sim.W002")
        )
    if listener == "extender" and not os.environ.get("HAMI_SIM_TLS_CLIENT_CA"):
        errors.append(
            Warning(
                "The extender listener runs without a client CA: any client that reaches it is served.",
                hint="Set HAMI_SIM_TLS_CLIENT_CA to the CA that signed Cluster Autoscaler's client certificate.",
                id="hami_sim.W003",
            )
        )
    return errors

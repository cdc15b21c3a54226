"""System checks Django cannot know about: the listeners, our demo secret and what production must not
run with (``check --deploy``), and the HAMi vendor configuration (every ``check``, so a typo fails
start-up, not the first request).

Closed by default: what production must not have is an *Error*, so ``manage.py check --deploy``
exits non-zero on it (Django's own deploy checks are warnings, which exit 0): the demo key (Django's
W009 accepts it, it is long and varied), ``DEBUG``, the demo listener ``all``, an extender listener
that clients could reach without nginx (which verifies their certificates). A ``HAMI_SIM_LISTENER`` the code does not know is refused everywhere, by every
``check``, every command and the server's start (``start_problems``): before, ``Extender`` fell
through every rule and served the admin and sessions to any certificate.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from django.conf import settings
from django.core.checks import Error, Tags, register
from django.core.exceptions import ImproperlyConfigured

from .clientcert import IDENTITY_FIELDS
from .conf import LISTENERS, conf

__all__ = [
    "check_secret_key",
    "check_listener",
    "check_production",
    "check_start",
    "check_vendor_config",
    "start_problems",
    "is_production",
    "refuse_unsafe_start",
    "vendor_config_problem",
]

DEMO_KEY_PREFIX = "hami-sim-insecure-demo-key"


PRODUCTION_LISTENERS = frozenset({"extender", "web"})


def listener_problem() -> str | None:
    """Why ``HAMI_SIM_LISTENER`` names no listener (None when it does); exact names only, no guessing."""
    listener = conf().hami_sim_listener
    if listener in LISTENERS:
        return None
    return f"HAMI_SIM_LISTENER={listener!r} is not one of {', '.join(sorted(LISTENERS))}"


def start_problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """Why this process must not serve a production listener (empty: it may), so no demo default reaches one.

    No production process (``is_production``) starts with the built-in demo ``SECRET_KEY`` (anyone
    could forge sessions and CSRF tokens with it). ``extender`` and ``web`` are production
    listeners: they also refuse ``ALLOWED_HOSTS=*``; the extender
    listener also refuses to start on anything but a unix socket (only the pod's nginx, which verifies
    client certificates, reaches one; a TCP port would serve anyone who reaches it) or without client
    identities to allow. ``all`` is the demo and development listener and starts
    with the defaults.
    """
    env = os.environ if environ is None else environ
    listener = conf().hami_sim_listener
    unknown = listener_problem()
    if unknown is not None:
        return [unknown]
    problems = []
    if is_production(env) and str(settings.SECRET_KEY).startswith(DEMO_KEY_PREFIX):
        who = f"the {listener} listener" if listener in PRODUCTION_LISTENERS else "a production process"
        problems.append(f"{who} needs SECRET_KEY or SECRET_KEY_FILE, not the demo key")
    if listener not in PRODUCTION_LISTENERS:
        return problems
    if "*" in settings.ALLOWED_HOSTS:
        problems.append(f"the {listener} listener needs ALLOWED_HOSTS set to its host names, not *")
    if listener == "extender":
        problems += _extender_problems(env)
    return problems


def _extender_problems(env: Mapping[str, str]) -> list[str]:
    """What the extender listener needs beyond the others: nginx's mTLS in front of it, an
    allow-list and known identity fields."""
    problems = []
    if not behind_nginx(env):
        problems.append(NOT_BEHIND_NGINX)
    if not conf().client_identities():
        problems.append("the extender listener needs HAMI_SIM_CLIENT_IDENTITIES (allowed CN/SAN)")
    unknown = conf().client_identity_fields() - IDENTITY_FIELDS.keys()
    if unknown or not conf().client_identity_fields():
        problems.append(
            f"HAMI_SIM_CLIENT_IDENTITY_FIELDS must name some of {', '.join(IDENTITY_FIELDS)}"
            + (f", not {', '.join(sorted(unknown))}" if unknown else "")
        )
    return problems


NOT_BEHIND_NGINX = (
    "the extender listener needs HAMI_SIM_BIND on a unix socket (unix:/path), which only nginx (mTLS) reaches"
)


def behind_nginx(environ: Mapping[str, str]) -> bool:
    """The server binds a unix socket (the default), so only the pod's nginx reaches it."""
    bind = environ.get("HAMI_SIM_BIND") or "unix:"
    return bind.startswith("unix:")


def is_production(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process runs with production settings: a production listener, or
    ``HAMI_SIM_HTTPS=true`` (what ``deploy/`` gives every container, the worker, beat, watcher
    and expander included). The demo and the tests set neither."""
    env = os.environ if environ is None else environ
    https = str(env.get("HAMI_SIM_HTTPS", "")).strip().lower() in ("1", "true", "yes", "on")
    return conf().hami_sim_listener in PRODUCTION_LISTENERS or https


def refuse_unsafe_start() -> None:
    """Exit before serving anything when ``start_problems`` finds one (the server, Celery's worker
    and beat; management commands run ``check_start`` as a system check)."""
    problems = start_problems()
    if problems:
        raise SystemExit("refusing to start: " + "; ".join(problems))


@register(Tags.security)
def check_start(app_configs, **kwargs):
    """The same rules as a system check, so ``manage.py check`` says it before a rollout does."""
    return [Error(problem, id="hami_sim.E002") for problem in start_problems()]


@register(Tags.security, deploy=True)
def check_secret_key(app_configs, **kwargs):
    if str(settings.SECRET_KEY).startswith(DEMO_KEY_PREFIX):
        return [
            Error(
                "SECRET_KEY is the built-in demo key: anyone can forge sessions and CSRF tokens with it.",
                hint="Set SECRET_KEY or SECRET_KEY_FILE (a mounted Secret) to a long random value.",
                id="hami_sim.E003",
            )
        ]
    return []


@register(Tags.security, deploy=True)
def check_listener(app_configs, **kwargs):
    listener = conf().hami_sim_listener
    if listener == "extender" and not behind_nginx(os.environ):
        return [
            Error(
                "The extender listener binds a TCP port: a client that reaches it skips nginx's mTLS.",
                hint="Leave HAMI_SIM_BIND unset (or unix:/path): nginx verifies Cluster Autoscaler's "
                "client certificate and proxies to the socket.",
                id="hami_sim.E004",
            )
        ]
    return []


@register(Tags.security, deploy=True)
def check_production(app_configs, **kwargs):
    """What a production process must not run with, besides the key and the listeners' TLS."""
    errors = []
    if settings.DEBUG:
        errors.append(
            Error(
                "DEBUG is on: error pages show settings, code and SQL to any client.",
                hint="Unset DEBUG (the default is off).",
                id="hami_sim.E005",
            )
        )
    if conf().hami_sim_listener == "all":
        errors.append(
            Error(
                "HAMI_SIM_LISTENER is 'all' (the demo listener): no listener's access rules apply.",
                hint="Run the extender listener (mTLS, Cluster Autoscaler) and the web listener apart.",
                id="hami_sim.E006",
            )
        )
    return errors


def vendor_config_problem(hami: Mapping, build_vendors: Callable[[Mapping], object]) -> str | None:
    """What is wrong with ``hami`` (exception class and text), or None when every vendor builds."""
    try:
        build_vendors(hami)
    except (ImproperlyConfigured, KeyError, TypeError, ValueError) as exc:  # e.g. a missing NVIDIA field
        return f"{type(exc).__name__}: {exc}"
    return None


@register(Tags.compatibility)
def check_vendor_config(app_configs, **kwargs):
    """Build every vendor config from ``settings.HAMI`` now: a typo in ``HAMI["VENDORS"]`` set in
    settings code then fails ``manage.py check`` (and every command and server start, which run the
    checks) instead of turning the first extender request into a 500 inside ``get_simulator()``."""
    from hami_sim.runtime.simulator import build_vendors

    hami = getattr(settings, "HAMI", None)
    if not isinstance(hami, Mapping):
        return [Error("settings.HAMI must be a dict of HAMi scheduler settings.", id="hami_sim.E001")]
    problem = vendor_config_problem(hami, build_vendors)
    if problem is None:
        return []
    return [
        Error(
            f"Invalid HAMi vendor configuration: {problem}",
            hint='Fix HAMI["VENDORS"] / HAMI["NVIDIA"] in settings, or HAMI_VENDORS_JSON.',
            id="hami_sim.E001",
        )
    ]

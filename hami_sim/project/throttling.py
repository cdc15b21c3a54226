"""DRF throttles that never throttle the simulation endpoints.

Why not DRF's classes as they are: the session verbs (``/api/v1/sessions/...``) and
``/api/v1/estimate`` are DRF views that Cluster Autoscaler's tooling calls in tight loops from one
client identity; a per-client rate would turn a scale-up simulation into 429s halfway through a
binpacking run. They are protected by mTLS and the NetworkPolicy instead (docs/production.md). The plain
extender verbs are Django views and are never seen by DRF throttles at all.

Rates are read from settings at request time (DRF's classes read them once at import), so they can
be changed per environment (``API_THROTTLE_ANON``, ``API_THROTTLE_USER``) and in tests.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from .middleware import is_simulation_path

__all__ = ["ApiAnonRateThrottle", "ApiUserRateThrottle"]


class _SettingsRate:
    scope: str

    def get_rate(self):
        rates = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {})
        return rates.get(self.scope)

    def allow_request(self, request, view):
        if is_simulation_path(request.path_info):
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class ApiAnonRateThrottle(_SettingsRate, AnonRateThrottle):
    """Anonymous REST reads, per client address."""


class ApiUserRateThrottle(_SettingsRate, UserRateThrottle):
    """Authenticated REST clients (session or token), per user."""

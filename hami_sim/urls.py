"""URL layout.

- ``/filter-simulation``, ``/prioritize-simulation``, ``/sessions/<id>/...``: the extender verbs
- ``/api/v1/...``: REST API; ``/api/schema/`` and ``/api/docs/``: OpenAPI
- ``/healthz``, ``/readyz``, ``/metrics``: operations
- ``/admin/``: operators; ``/``: dashboard
"""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import benchviews, health, metrics

urlpatterns = [
    path("", include("simulations.urls")),
    path("api/v1/", include("profiles.api.urls")),
    path("api/v1/", include("simulations.api.urls")),
    path("api/v1/", include("decisions.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),  # django-prometheus + ours, multiprocess-aware
    path("admin/", admin.site.urls),
    path("", include("dashboard.urls")),
]

# Django's 400 for suspicious requests, as JSON on the API and extender paths (hami_sim/middleware.py)
handler400 = "hami_sim.middleware.bad_request"

if settings.BENCH_ENDPOINT:
    urlpatterns.insert(0, path("bench/fixed-4k", benchviews.fixed_4k))

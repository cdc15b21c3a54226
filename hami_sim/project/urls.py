"""URL layout.

- ``/filter-simulation``, ``/prioritize-simulation``, ``/sessions/<id>/...``: the extender verbs
- ``/api/v1/...``: REST API, every app's routes on one router (``GET /api/v1/`` lists them all);
  ``/api/schema/`` and ``/api/docs/``: OpenAPI
- ``/healthz``, ``/readyz``, ``/metrics``: operations
- ``/admin/``: operators; ``/``: dashboard
"""

from django.conf import settings
from django.contrib import admin
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.decorators.cache import cache_control
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from decisions.api.urls import routes as decision_routes
from profiles.api.urls import routes as profile_routes
from simulations.api.urls import routes as simulation_routes
from usage.api.urls import routes as usage_routes

from . import benchviews, health, metrics
from .rest import OptionalSlashRouter


@cache_control(max_age=86400)
def favicon(request):
    """Browsers ask for /favicon.ico on every site: send them to the content-hashed icon (302, not 301,
    so a new icon's new hash is picked up within a day)."""
    return redirect(static("hami_sim/favicon.svg"))


# The URLconf is the composition root: the one place that names every app's REST routes.
router = OptionalSlashRouter()
for prefix, viewset, basename in (*profile_routes, *usage_routes, *simulation_routes, *decision_routes):
    router.register(prefix, viewset, basename=basename)

urlpatterns = [
    path("", include("simulations.urls")),
    path("api/v1/", include(router.urls)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),  # django-prometheus + ours, multiprocess-aware
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
    path("", include("dashboard.urls")),
]

# Django's own 400, 403, 404 and 500 answers, as JSON on the API and extender paths (hami_sim/project/middleware.py)
handler400 = "hami_sim.project.middleware.bad_request"
handler403 = "hami_sim.project.middleware.permission_denied"
handler404 = "hami_sim.project.middleware.page_not_found"
handler500 = "hami_sim.project.middleware.server_error"

if settings.BENCH_ENDPOINT:
    urlpatterns.insert(0, path("bench/fixed-4k", benchviews.fixed_4k))

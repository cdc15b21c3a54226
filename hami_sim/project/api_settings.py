"""The REST API's settings (DRF and drf-spectacular), apart from the rest of the settings so each
reads whole: one API style (orjson in and out, one error shape), authentication, throttling, paging.
"""

from __future__ import annotations

import environ


def rest_framework(env: environ.Env) -> dict:
    """DRF's ``REST_FRAMEWORK`` setting; the permission default and the rates come from ``env``."""
    return {
        "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
        # One API style (hami_sim/project/restjson.py, hami_sim/project/rest.py): orjson in and out, one error shape ({"detail": ...}).
        "DEFAULT_PARSER_CLASSES": [
            "hami_sim.project.restjson.OrjsonParser",
            "hami_sim.project.restjson.FormParser",  # forms, with JSON-looking fields bounded in depth
            "hami_sim.project.restjson.MultiPartParser",
        ],
        "DEFAULT_RENDERER_CLASSES": [
            "hami_sim.project.restjson.OrjsonRenderer",
            "rest_framework.renderers.BrowsableAPIRenderer",
        ],
        "EXCEPTION_HANDLER": "hami_sim.project.rest.exception_handler",
        "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
        "DEFAULT_PAGINATION_CLASS": "hami_sim.project.rest.LimitOffsetPagination",  # ?limit= capped at API_MAX_PAGE_SIZE
        "PAGE_SIZE": 50,
        "DEFAULT_AUTHENTICATION_CLASSES": [
            "rest_framework.authentication.SessionAuthentication",
            "rest_framework.authentication.TokenAuthentication",
        ],
        "DEFAULT_PERMISSION_CLASSES": [
            "rest_framework.permissions.IsAuthenticated"
            if env.bool("API_REQUIRE_AUTH_FOR_READS", default=False)
            else "rest_framework.permissions.IsAuthenticatedOrReadOnly"
        ],
        # Per-client REST rates; the simulation endpoints are exempt (hami_sim/project/throttling.py says why).
        "DEFAULT_THROTTLE_CLASSES": [
            "hami_sim.project.throttling.ApiAnonRateThrottle",
            "hami_sim.project.throttling.ApiUserRateThrottle",
        ],
        "DEFAULT_THROTTLE_RATES": {
            "anon": env.str("API_THROTTLE_ANON", default="600/min"),
            "user": env.str("API_THROTTLE_USER", default="6000/min"),
        },
        # Client identity for anonymous rates: the connection's address, unless this many trusted proxies
        # append to X-Forwarded-For (DRF's default would trust a client-supplied header and be evadable).
        "NUM_PROXIES": env.int("API_NUM_PROXIES", default=0),
    }


SPECTACULAR_SETTINGS = {
    "TITLE": "hami-sim API",
    "DESCRIPTION": "HAMi device-aware simulation for the Kubernetes Cluster Autoscaler.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc from drf-spectacular-sidecar's pinned static files, never a CDN: /api/docs/
    # must render offline and in air-gapped clusters.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "simulations.schema.add_extender_paths",
        "simulations.schema.add_error_responses",
    ],
}

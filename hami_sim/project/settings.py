"""Django settings for hami-sim.

Everything comes from the environment (django-environ). With no environment at all the embedded
default applies: SQLite in ``var/``, Celery on the filesystem broker, DEBUG off, a demo secret key.
Production sets ``DATABASE_URL`` (PostgreSQL), ``CELERY_BROKER_URL`` (Redis) and ``SECRET_KEY``.
"""

import json
import os
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

from hami_sim.engine.ca_releases import DEFAULT_VERSION, CAVersionError, parse_ca_version
from hami_sim.engine.hami_releases import DEFAULT_RELEASE, HamiReleaseError, parse_release
from hami_sim.project.api_settings import SPECTACULAR_SETTINGS, rest_framework  # noqa: F401
from hami_sim.project.conf import DEFAULTS
from hami_sim.project.logconfig import logging_config

BASE_DIR = Path(__file__).resolve().parents[2]
# Local state (the SQLite database, static files, the filesystem broker). Nothing is created here:
# ``hami_sim.runtime.localdirs.ensure_local_dirs`` does it where a process starts (manage.py, WSGI,
# Celery, the demo).
VAR_DIR = Path(environ.Env().str("HAMI_SIM_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["*"]),
)
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None


def secret(name: str, default: str = "") -> str:
    """``<NAME>`` from the environment, else the content of the file ``<NAME>_FILE`` names (a mounted
    Kubernetes Secret; trailing newline dropped), else ``default``. ``<NAME>`` wins when both are set.

    The one place secrets are read: ``SECRET_KEY``, ``DATABASE_URL``, ``CELERY_BROKER_URL``,
    ``CELERY_RESULT_BACKEND`` and ``CACHE_URL`` (docs/production.md, Settings).
    """
    value = os.environ.get(name)
    if value:
        return value
    path = os.environ.get(f"{name}_FILE")
    if path:
        return Path(path).read_text().rstrip("\r\n")
    return default


DEBUG = env("DEBUG")
SECRET_KEY = secret("SECRET_KEY", "hami-sim-insecure-demo-key-change-me-in-production-0123456789")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI assets served from our static files (offline /api/docs/)
    "django_filters",
    "django_tables2",
    "simple_history",
    "django_prometheus",
    "django_celery_beat",
    "hami_sim.project",
    "hami_sim.runtime",
    "profiles",
    "usage",
    "simulations",
    "decisions",
    "dashboard",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "hami_sim.project.middleware.RequestIdMiddleware",
    "hami_sim.project.middleware.RequestSanityMiddleware",  # a NUL in the path: 400, not a database error
    "hami_sim.project.middleware.JsonHostMiddleware",  # bad Host header: JSON 400 for API/extender clients
    "hami_sim.project.middleware.BodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "hami_sim.project.middleware.ContentSecurityPolicyMiddleware",  # dashboard pages: nonce-only scripts
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "hami_sim.project.loginthrottle.LoginThrottleMiddleware",  # wrong passwords lock the name/address out
    "hami_sim.project.middleware.ListenerMiddleware",
    "hami_sim.project.middleware.ClientIdentityMiddleware",  # extender: client certificate CN/SAN allow-list
    "hami_sim.project.middleware.CookieCsrfMiddleware",  # simulation writes by a logged-in browser need CSRF
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "hami_sim.project.dberrors.DatabaseUnavailableMiddleware",  # database down: 503 JSON, not a 500 page
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "hami_sim.project.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "hami_sim.project.context_processors.demo",
            ],
        },
    },
]
WSGI_APPLICATION = "hami_sim.project.wsgi.application"

DATABASES = {"default": env.db_url_config(secret("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"))}
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL + a busy timeout let the web server, the Celery worker and beat share the demo database;
    # IMMEDIATE transactions take the write lock up front, so a writer waits for the busy timeout
    # instead of failing with "database is locked" when a read transaction would upgrade.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE"}
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
# One date format with the zone name on every page and in the admin (hami_sim/project/formats/en/formats.py).
FORMAT_MODULE_PATH = ["hami_sim.project.formats"]

STATIC_URL = "/static/"
STATIC_ROOT = env.str("STATIC_ROOT", default=str(VAR_DIR / "static"))
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
WHITENOISE_USE_FINDERS = True
# Static files by content hash (``app.3f2a9c.css``) with gzip copies: WhiteNoise serves them with a
# one-year immutable cache, so plotly.min.js (4.8 MB, ~1.4 MB gzipped) is sent once per release.
# Needs ``collectstatic``: the Dockerfile, ``make demo`` and the test session (tests/conftest.py) run it.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "dashboard.finders.PlotlyFinder",  # plotly.min.js from the plotly package, no CDN
]

LOGIN_URL = "/admin/login/"
# A CSRF refusal in JSON on the API and extender paths (Django's page elsewhere).
CSRF_FAILURE_VIEW = "hami_sim.project.middleware.csrf_failure"

# The largest page any list API answers (``?limit=`` above it is served as this many).
API_MAX_PAGE_SIZE = env.int("API_MAX_PAGE_SIZE", default=500)
# Request bodies: the extender reads its own limit (64 MiB default); everything else uses Django's.
EXTENDER_MAX_BODY_BYTES = env.int("EXTENDER_MAX_BODY_BYTES", default=64 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)

# HAMi scheduler configuration (docs/device-rules.md, docs/vendors.md); names and defaults as the Helm chart.
HAMI = {
    "NODE_SCHEDULER_POLICY": env.str("HAMI_NODE_SCHEDULER_POLICY", default="binpack"),
    "GPU_SCHEDULER_POLICY": env.str("HAMI_GPU_SCHEDULER_POLICY", default="spread"),
    "NVIDIA": {
        "resourceCountName": env.str("HAMI_NVIDIA_RESOURCE_COUNT", default="nvidia.com/gpu"),
        "resourceMemoryName": env.str("HAMI_NVIDIA_RESOURCE_MEMORY", default="nvidia.com/gpumem"),
        "resourceMemoryPercentageName": env.str(
            "HAMI_NVIDIA_RESOURCE_MEMORY_PERCENTAGE", default="nvidia.com/gpumem-percentage"
        ),
        "resourceCoreName": env.str("HAMI_NVIDIA_RESOURCE_CORES", default="nvidia.com/gpucores"),
        "defaultMemory": env.int("HAMI_NVIDIA_DEFAULT_MEMORY", default=0),
        "defaultCores": env.int("HAMI_NVIDIA_DEFAULT_CORES", default=0),
        "memoryFactor": env.int("HAMI_NVIDIA_MEMORY_FACTOR", default=1),
    },
}


def _json_object_env(
    name: str, kind: type = dict, what: str = "a JSON object of vendor blocks", **unset: Any
) -> Any:
    """An optional JSON ``kind`` (``what``) variable; unset, ``unset["unset"]`` or an empty ``kind``."""
    raw = env.str(name, default="").strip()
    if not raw:
        return unset["unset"] if unset else kind()
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(value, kind):
        raise ImproperlyConfigured(f"{name} must be {what}, got {type(value).__name__}")
    return value


# Other vendors' config blocks (docs/vendors.md), e.g. HAMI_VENDORS_JSON='{"hygon": {"resourceCountName":
# "hygon.com/dcunum"}}'. Validated when the apps are ready (``hami_sim.project.apps``), so an unknown vendor,
# chip or field stops start-up (ImproperlyConfigured) instead of failing the first extender request.
HAMI["VENDORS"] = _json_object_env("HAMI_VENDORS_JSON")
# NVIDIA's knownMigGeometries, the Helm chart's block as JSON: [{"models": ["A100-SXM4-40GB"],
# "allowedGeometries": [[{"name": "1g.5gb", "memory": 5120, "core": 14, "count": 7}]]}]. Read only under
# HAMI_VERSION 2.9 and 2.8 (v2.10 reads each GPU's migProfiles). Unset: the release's chart default; "[]": none.
HAMI["NVIDIA"]["knownMigGeometries"] = _json_object_env(
    "HAMI_NVIDIA_KNOWN_MIG_GEOMETRIES", list, "a JSON list of knownMigGeometries entries", unset=None
)

REST_FRAMEWORK = rest_framework(env)

# "localhost" only names the host: without one kombu warns "No hostname was supplied" at every start.
CELERY_BROKER_URL = secret("CELERY_BROKER_URL", "filesystem://localhost/")
_broker_dir = VAR_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    # Redis/SQS: a task held by a killed worker (acks_late) comes back after the visibility timeout;
    # kombu's default is an hour, far longer than any of our tasks runs.
    else {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=900)}
)
CELERY_RESULT_BACKEND = secret("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Where the extender gets inventories for template nodes: annotations, or node-group profiles.
HAMI_INVENTORY_RESOLVER = env.str("HAMI_INVENTORY_RESOLVER", default=DEFAULTS.hami_inventory_resolver)
# How often each process checks the profile catalog generation (cross-process cache invalidation).
PROFILE_CACHE_CHECK_SECONDS = env.float(
    "PROFILE_CACHE_CHECK_SECONDS", default=DEFAULTS.profile_cache_check_seconds
)
CELERY_TIMEZONE = "UTC"

# Cluster sync (profiles app).
KUBE_SOURCE = env.str(
    "KUBE_SOURCE", default=DEFAULTS.kube_source
)  # "", "in-cluster", "kubeconfig:<path>", "file://<path>"
KUBE_NODE_LABEL_SELECTOR = env.str("KUBE_NODE_LABEL_SELECTOR", default=DEFAULTS.kube_node_label_selector)
KUBE_PAGE_SIZE = env.int("KUBE_PAGE_SIZE", default=DEFAULTS.kube_page_size)
KUBE_REQUEST_TIMEOUT = env.float("KUBE_REQUEST_TIMEOUT", default=DEFAULTS.kube_request_timeout)
KUBE_SYNC_MAX_RETRIES = env.int("KUBE_SYNC_MAX_RETRIES", default=DEFAULTS.kube_sync_max_retries)
# where HAMi's scheduler and device plugin run: the sync reads the HAMi release from their images
HAMI_NAMESPACE = env.str("HAMI_NAMESPACE", default=DEFAULTS.hami_namespace)
DRA_SYNC = env.bool("DRA_SYNC", default=DEFAULTS.dra_sync)
DRA_CLUSTERAPI_DRIVER = env.str("DRA_CLUSTERAPI_DRIVER", default=DEFAULTS.dra_clusterapi_driver)
DRIFT_DEVMEM_TOLERANCE_PERCENT = env.float(
    "DRIFT_DEVMEM_TOLERANCE_PERCENT", default=DEFAULTS.drift_devmem_tolerance_percent
)
DRIFT_UNREGISTERED_GRACE_SECONDS = env.int(
    "DRIFT_UNREGISTERED_GRACE_SECONDS", default=DEFAULTS.drift_unregistered_grace_seconds
)
DECISION_RETENTION_DAYS = env.int("DECISION_RETENTION_DAYS", default=DEFAULTS.decision_retention_days)
# Decision recording: "async" (bounded queue + writer thread), "sync" (in the caller) or "off".
DECISION_RECORDING = env.str("DECISION_RECORDING", default=DEFAULTS.decision_recording)
# EXPANDER_RETURN: what the gRPC expander answers CA, "most-placed" or "least-gpu-waste"
# (docs/cluster-autoscaler.md)
EXPANDER_RETURN = env.str("EXPANDER_RETURN", default=DEFAULTS.expander_return)
# EXPANDER_UNJUDGED: "keep" (default) answers CA with the options the expander cannot judge, "drop" drops them
EXPANDER_UNJUDGED = env.str("EXPANDER_UNJUDGED", default=DEFAULTS.expander_unjudged)
if EXPANDER_UNJUDGED not in ("keep", "drop"):
    raise ImproperlyConfigured(f"EXPANDER_UNJUDGED must be 'keep' or 'drop', not {EXPANDER_UNJUDGED!r}")
# the gRPC expander's bounds: largest request, request bytes in work at once, concurrent calls
EXPANDER_MAX_REQUEST_BYTES = env.int(
    "EXPANDER_MAX_REQUEST_BYTES", default=DEFAULTS.expander_max_request_bytes
)
EXPANDER_MAX_INFLIGHT_BYTES = env.int(
    "EXPANDER_MAX_INFLIGHT_BYTES", default=DEFAULTS.expander_max_inflight_bytes
)
EXPANDER_MAX_CONCURRENT = env.int("EXPANDER_MAX_CONCURRENT", default=DEFAULTS.expander_max_concurrent)
# A call's request must arrive whole within EXPANDER_RECEIVE_SECONDS; one without a deadline (or a later
# one) is answered within EXPANDER_MAX_CALL_SECONDS or stopped.
EXPANDER_RECEIVE_SECONDS = env.float("EXPANDER_RECEIVE_SECONDS", default=DEFAULTS.expander_receive_seconds)
EXPANDER_MAX_CALL_SECONDS = env.float("EXPANDER_MAX_CALL_SECONDS", default=DEFAULTS.expander_max_call_seconds)
# CA_VERSION: the Cluster Autoscaler release the cluster runs ("1.34" = the patch we pin, or "1.34.5");
# the estimator and the expander follow its behaviour (hami_sim/engine/ca_releases.py). Unsupported: no start.
try:
    CA_VERSION = parse_ca_version(env.str("CA_VERSION", default=DEFAULT_VERSION)).version
except CAVersionError as exc:
    raise ImproperlyConfigured(f"CA_VERSION: {exc}") from None
# HAMI_VERSION: the HAMi release the cluster runs ("2.8" = v2.8.3, "2.9" = v2.9.0, "2.10" = v2.10.0, or
# "v2.9.0"); every answer follows its device rules (hami_sim/engine/hami_releases.py). Unsupported: no start.
try:
    HAMI_VERSION = parse_release(env.str("HAMI_VERSION", default=DEFAULT_RELEASE))
except HamiReleaseError as exc:
    raise ImproperlyConfigured(f"HAMI_VERSION: {exc}") from None
DECISION_QUEUE_MAX_BYTES = env.int(
    "DECISION_QUEUE_MAX_BYTES", default=DEFAULTS.decision_queue_max_bytes
)  # what queued records keep alive (estimated), not calls or nodes
MAX_ANSWER_BYTES = env.int("MAX_ANSWER_BYTES", default=DEFAULTS.max_answer_bytes)  # estimate/session answers
ESTIMATE_TIME_LIMIT_SECONDS = env.float(
    "ESTIMATE_TIME_LIMIT_SECONDS", default=DEFAULTS.estimate_time_limit_seconds
)  # POST /api/v1/estimate: groups not packed by then are cut short, as CA's max-binpacking-time
DECISION_FLUSH_SECONDS = env.float(
    "DECISION_FLUSH_SECONDS", default=DEFAULTS.decision_flush_seconds
)  # fold CA bursts per write
KUBE_EVENTS_SOURCE = env.str(
    "KUBE_EVENTS_SOURCE", default=DEFAULTS.kube_events_source
)  # default: KUBE_SOURCE
# Live usage (docs/usage.md): a live node whose usage is older than USAGE_STALE_SECONDS answers per
# USAGE_STALE_POLICY ("fail": the node fails the filter, so CA scales up rather than trusting old data)
# Estimates one process runs at once (one per identity); more are refused 429/503 at once, never queued.
ESTIMATE_MAX_CONCURRENT = env.int("ESTIMATE_MAX_CONCURRENT", default=DEFAULTS.estimate_max_concurrent)
USAGE_STALE_SECONDS = env.int("USAGE_STALE_SECONDS", default=DEFAULTS.usage_stale_seconds)
USAGE_STALE_POLICY = env.str(
    "USAGE_STALE_POLICY", default=DEFAULTS.usage_stale_policy
)  # "fail" or "last-known"
USAGE_CACHE_SECONDS = env.float(
    "USAGE_CACHE_SECONDS", default=DEFAULTS.usage_cache_seconds
)  # how often a replica checks for new usage
USAGE_WATCH_SECONDS = env.int(
    "USAGE_WATCH_SECONDS", default=DEFAULTS.usage_watch_seconds
)  # server-side timeout of one watch request
CA_AGGREGATE_CAPACITY = env.bool(
    "CA_AGGREGATE_CAPACITY", default=DEFAULTS.ca_aggregate_capacity
)  # deploy/capacity: nodes advertise summed device memory and cores (docs/cluster-autoscaler.md)
DEMO_READ_ONLY = env.bool("DEMO_READ_ONLY", default=False)
# "user / password" on the login page; set by ``make demo`` (hami_sim/server/demo.py) and nowhere else.
DEMO_LOGIN_HINT = env.str("DEMO_LOGIN_HINT", default="")
BENCH_ENDPOINT = env.bool("HAMI_SIM_BENCH_ENDPOINT", default=False)

# JSON lines with request_id, pod and verdict on every record (hami_sim/project/logconfig.py).
LOGGING = logging_config(env.str("LOG_LEVEL", default="INFO"), json_logs=env.bool("LOG_JSON", default=True))
ACCESS_LOG = env.bool("ACCESS_LOG", default=DEFAULTS.access_log)

# -- Production serving and security (docs/production.md) --------------------------------------------
# Which endpoints this process serves: "extender" (mTLS, CA only), "web" (dashboard/admin/REST) or
# "all" (demo, development). See hami_sim/project/middleware.py.
HAMI_SIM_LISTENER = env.str("HAMI_SIM_LISTENER", default=DEFAULTS.hami_sim_listener)
# HAMI_SIM_HTTPS=true when clients reach us over TLS (gunicorn's own TLS or a TLS proxy): turns on
# every HTTPS-only protection below at once; each stays overridable on its own.
_HTTPS = env.bool("HAMI_SIM_HTTPS", default=False)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=_HTTPS)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]  # kubelet and Prometheus over plain HTTP
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if _HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=_HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=_HTTPS)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=_HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=_HTTPS)
SESSION_COOKIE_HTTPONLY = True
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# Only behind a TLS-terminating proxy that overwrites X-Forwarded-Proto; gunicorn's own TLS needs none.
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("TRUST_X_FORWARDED_PROTO", default=False) else None
)
X_FRAME_OPTIONS = "DENY"
# Throttle counters: shared by all replicas when CACHE_URL points at Redis, per process otherwise.
CACHES = {"default": env.cache_url_config(secret("CACHE_URL", "locmemcache://hami-sim"))}
# Redis behind the cache degrades instead of failing: an operation Redis cannot answer is answered
# from process memory (hami_sim.project.cachefallback), and /readyz and /healthz say so.
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"]["BACKEND"] = "hami_sim.project.cachefallback.FallbackRedisCache"

# -- Hardening (docs/production.md "Threat model") ----------------------------------------------------
# Client certificate identities (subject CN or DNS SAN, comma-separated) the extender listener
# serves; checked per request on top of the TLS handshake, so a certificate the CA signed for anybody
# else is refused.
HAMI_SIM_CLIENT_IDENTITIES = env.str(
    "HAMI_SIM_CLIENT_IDENTITIES", default=DEFAULTS.hami_sim_client_identities
)
# Which parts of the certificate name it: the subject CN and DNS SANs (an email, URI or IP SAN is
# not a workload's name: a certificate for "email:cluster-autoscaler" is not CA's).
HAMI_SIM_CLIENT_IDENTITY_FIELDS = env.str(
    "HAMI_SIM_CLIENT_IDENTITY_FIELDS", default=DEFAULTS.hami_sim_client_identity_fields
)
# Admin login: this many failures per username (ten times as many per address) within the window lock it out.
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=DEFAULTS.login_failure_limit)
LOGIN_FAILURE_WINDOW_SECONDS = env.int(
    "LOGIN_FAILURE_WINDOW_SECONDS", default=DEFAULTS.login_failure_window_seconds
)
# A task run still "running" after this long is closed as abandoned (its worker died mid-task).
TASK_RUN_ABANDON_SECONDS = env.int("TASK_RUN_ABANDON_SECONDS", default=DEFAULTS.task_run_abandon_seconds)
# Growth bounds: decision detail and rows, sessions and what each may hold.
for _name in (
    "DECISION_DETAIL_NODES",
    "DECISION_LISTED_NODES",
    "DECISION_MAX_ROWS",
    "SESSION_MAX_LIVE",
    "SESSION_MAX_PLACEMENTS",
    "SESSION_MAX_NODES",
    "SESSION_MAX_CHECKPOINT_ROWS",
    "SESSION_CREATE_PER_MINUTE",
    "SESSION_QUOTA_PER_IDENTITY",
    "SESSION_QUOTA_PER_USER",
    "SESSION_MAX_BYTES",
):
    globals()[_name] = env.int(_name, default=getattr(DEFAULTS, _name.lower()))

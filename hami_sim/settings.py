"""Django settings for hami-sim.

Everything comes from the environment (django-environ). With no environment at all the embedded
default applies: SQLite in ``var/``, Celery on the filesystem broker, DEBUG off, a demo secret key.
Production sets ``DATABASE_URL`` (PostgreSQL), ``CELERY_BROKER_URL`` (Redis) and ``SECRET_KEY``.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("HAMI_SIM_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["*"]),
)
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None

DEBUG = env("DEBUG")
SECRET_KEY = env.str("SECRET_KEY", default="hami-sim-insecure-demo-key-change-me-in-production-0123456789")
if env.str("SECRET_KEY_FILE", default=""):
    SECRET_KEY = Path(env.str("SECRET_KEY_FILE")).read_text().strip()
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
    "django_filters",
    "django_tables2",
    "simple_history",
    "django_prometheus",
    "django_celery_beat",
    "profiles",
    "simulations",
    "decisions",
    "dashboard",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "hami_sim.urls"
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
            ],
        },
    },
]
WSGI_APPLICATION = "hami_sim.wsgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL + a busy timeout let the web server and the Celery worker share the demo database.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
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

STATIC_URL = "/static/"
STATIC_ROOT = env.str("STATIC_ROOT", default=str(VAR_DIR / "static"))
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "/admin/login/"

# Request bodies: the extender reads its own limit (64 MiB default); everything else uses Django's.
EXTENDER_MAX_BODY_BYTES = env.int("EXTENDER_MAX_BODY_BYTES", default=64 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)

# HAMi scheduler configuration (device-model.md section 2.1 and 4.1); names and defaults as the Helm chart.
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

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
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
}
SPECTACULAR_SETTINGS = {
    "TITLE": "hami-sim API",
    "DESCRIPTION": "HAMi device-aware simulation for the Kubernetes Cluster Autoscaler.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "simulations.schema.add_extender_paths",
    ],
}

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
_broker_dir = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem"):
    for _sub in ("out", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    else {}
)
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Where the extender gets inventories for template nodes: annotations, or node-group profiles.
HAMI_INVENTORY_RESOLVER = env.str("HAMI_INVENTORY_RESOLVER", default="profiles.inventory.resolve")
# How often each process checks the profile catalog generation (cross-process cache invalidation).
PROFILE_CACHE_CHECK_SECONDS = env.float("PROFILE_CACHE_CHECK_SECONDS", default=1.0)
CELERY_TIMEZONE = "UTC"

# Cluster sync (profiles app).
KUBE_SOURCE = env.str("KUBE_SOURCE", default="")  # "", "in-cluster", "kubeconfig:<path>", "file://<path>"
KUBE_NODE_LABEL_SELECTOR = env.str("KUBE_NODE_LABEL_SELECTOR", default="")
KUBE_PAGE_SIZE = env.int("KUBE_PAGE_SIZE", default=500)
KUBE_REQUEST_TIMEOUT = env.float("KUBE_REQUEST_TIMEOUT", default=30.0)
KUBE_SYNC_MAX_RETRIES = env.int("KUBE_SYNC_MAX_RETRIES", default=5)
DRIFT_DEVMEM_TOLERANCE_PERCENT = env.float("DRIFT_DEVMEM_TOLERANCE_PERCENT", default=2.0)
DRIFT_UNREGISTERED_GRACE_SECONDS = env.int("DRIFT_UNREGISTERED_GRACE_SECONDS", default=600)
DECISION_RETENTION_DAYS = env.int("DECISION_RETENTION_DAYS", default=14)
DEMO_READ_ONLY = env.bool("DEMO_READ_ONLY", default=False)
BENCH_ENDPOINT = env.bool("HAMI_SIM_BENCH_ENDPOINT", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.server": {"level": "WARNING"}},
}

"""gunicorn configuration for production: the application behind nginx, worker sizing, multiprocess
metrics, JSON logs.

nginx (``hami_sim.server.nginx``, its own container in the pod) terminates TLS and mTLS and reads
every request whole before gunicorn sees it; gunicorn binds a unix socket that only nginx reaches
and runs the stock ``gthread`` worker. Everything comes from the environment so one image serves both
listeners (extender and web):

==============================  ===========================================================
``HAMI_SIM_BIND``               where gunicorn listens: ``unix:/run/hami-sim/gunicorn.sock`` in
                                the pods (the socket nginx proxies to); ``host:port`` for a
                                plain HTTP listener without nginx (the certificate headers are
                                then ignored, ``hami_sim.project.proxied``)
``HAMI_SIM_WORKERS``            worker processes (default: CPUs available to the process)
``HAMI_SIM_THREADS``            threads per worker (default 1: the extender is CPU-bound)
``HAMI_SIM_TIMEOUT``            worker timeout in seconds (default 60)
``HAMI_SIM_METRICS_PORT``       serve every worker's metrics on plain HTTP on this port from the
                                master (for the mTLS extender listener, which Prometheus cannot
                                reach without a client certificate), on ``HAMI_SIM_METRICS_HOST``
                                (default ``0.0.0.0``)
``PROMETHEUS_MULTIPROC_DIR``    where workers share metric samples (set to a private temp dir if unset)
==============================  ===========================================================

The gthread worker keeps nginx's upstream connections alive between requests (the sync worker
would close each after one answer).
"""

from __future__ import annotations

import os
import tempfile

from hami_sim.project.logconfig import logging_config
from hami_sim.server.serve import refuse_unsafe_start

__all__ = ["settings_from_env", "DEFAULT_BIND"]

DEFAULT_BIND = "unix:/run/hami-sim/gunicorn.sock"


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def settings_from_env(environ: os._Environ | dict | None = None) -> dict:
    """The gunicorn settings this environment asks for (pure, so tests and ``serve`` can use it)."""
    env = os.environ if environ is None else environ
    return {
        "bind": [env.get("HAMI_SIM_BIND") or DEFAULT_BIND],
        "workers": int(env.get("HAMI_SIM_WORKERS") or _cpus()),
        # gthread, not sync: sync workers close the connection after every response, so nginx
        # would open a new one per request; nginx has read the whole request before it sends it.
        "worker_class": "gthread",
        "threads": int(env.get("HAMI_SIM_THREADS") or 1),
        "timeout": int(env.get("HAMI_SIM_TIMEOUT") or 60),
        "graceful_timeout": 30,
        "keepalive": 75,  # longer than nginx's upstream keep-alive (60 s), so nginx closes first
        "max_requests": int(env.get("HAMI_SIM_MAX_REQUESTS") or 0),
        "max_requests_jitter": 100,
        # nginx bounds the request line, each field and the whole head (hami_sim.server.nginx.Limits)
        # and refuses what is over them itself; gunicorn's own limits sit above nginx's, so a request
        # nginx passed on is never refused again in another shape.
        "limit_request_line": 0,
        "limit_request_fields": 32768,
        "limit_request_field_size": 0,
    }


globals().update(settings_from_env())
refuse_unsafe_start()  # a production listener with demo defaults never starts
wsgi_app = "hami_sim.project.wsgi:application"
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = None  # our RequestIdMiddleware writes one JSON access line per request with its id
errorlog = "-"
control_socket_disable = True  # it would write to $HOME, which is read-only in the container
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# gunicorn's own lines (start, worker boot/exit) as the same JSON lines.
logconfig_dict = logging_config(os.environ.get("LOG_LEVEL", "INFO").upper())

if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="hami-sim-metrics-")


def on_starting(server) -> None:
    """Start from empty metric files: samples of a previous run's dead workers would be counted."""
    directory = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".db"):
            os.unlink(os.path.join(directory, name))


def when_ready(server) -> None:
    port = os.environ.get("HAMI_SIM_METRICS_PORT")
    if port:
        from prometheus_client import CollectorRegistry, multiprocess, start_http_server

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        host = os.environ.get("HAMI_SIM_METRICS_HOST") or "0.0.0.0"
        start_http_server(int(port), addr=host, registry=registry)
        server.log.info("worker metrics on http://%s:%s/metrics", host, port)


def child_exit(server, worker) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker) -> None:
    """Live usage and the profile catalog are refreshed in the background: never read on the
    request path (``usage.store.start_refresher``)."""
    from usage.store import start_refresher

    start_refresher()

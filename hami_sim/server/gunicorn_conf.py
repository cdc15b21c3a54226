"""gunicorn configuration for production: TLS, mTLS, worker sizing, multiprocess metrics, JSON logs.

Everything comes from the environment so one image serves both listeners (extender and web):

==============================  ===========================================================
``HAMI_SIM_BIND``               ``host:port`` (default ``0.0.0.0:8443`` with TLS, ``0.0.0.0:8000`` without)
``HAMI_SIM_TLS_CERT``           server certificate chain (PEM); with ``HAMI_SIM_TLS_KEY`` turns TLS on
``HAMI_SIM_TLS_KEY``            server private key (PEM)
``HAMI_SIM_TLS_CLIENT_CA``      CA bundle for client certificates: turns **mTLS** on. A client
                                without a certificate signed by it cannot complete the handshake.
``HAMI_SIM_WORKERS``            worker processes (default: CPUs available to the process)
``HAMI_SIM_THREADS``            threads per worker (default 1: the extender is CPU-bound)
``HAMI_SIM_TIMEOUT``            worker timeout in seconds (default 60)
``HAMI_SIM_REQUEST_TIMEOUT``    seconds a client has to send a whole request, head and body (default 10;
                                then 408; ``HAMI_SIM_BODY_TIMEOUT`` is read when it is unset)
``HAMI_SIM_HEADER_TIMEOUT``     seconds a client has to send a request's head (default 10; then 408)
``HAMI_SIM_METRICS_PORT``       serve every worker's metrics on plain HTTP on this port from the
                                master (for the mTLS extender listener, which Prometheus cannot
                                reach without a client certificate)
``PROMETHEUS_MULTIPROC_DIR``    where workers share metric samples (set to a private temp dir if unset)
==============================  ===========================================================

Why gunicorn (and not granian, which ``HAMI_SIM_SERVER=granian`` still offers): docs/production.md
has the measurement. granian answered ~1.5-2 ms faster per call, but only gunicorn's master hooks
give the mTLS listener a plain-HTTP metrics port and clean up dead workers' metric files, and
granian reads PKCS#8 keys only. The gthread worker keeps connections alive: the sync worker closed
them after each response, so every CA call paid a fresh TCP + mTLS handshake (~5x the latency).
"""

from __future__ import annotations

import os
import ssl
import tempfile

from hami_sim.project.logconfig import logging_config
from hami_sim.server.serve import refuse_unsafe_start

__all__ = ["settings_from_env"]


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def settings_from_env(environ: os._Environ | dict | None = None) -> dict:
    """The gunicorn settings this environment asks for (pure, so tests and ``serve`` can use it)."""
    env = os.environ if environ is None else environ
    cert, key, client_ca = (
        env.get("HAMI_SIM_TLS_CERT", ""),
        env.get("HAMI_SIM_TLS_KEY", ""),
        env.get("HAMI_SIM_TLS_CLIENT_CA", ""),
    )
    if bool(cert) != bool(key):
        raise SystemExit("HAMI_SIM_TLS_CERT and HAMI_SIM_TLS_KEY must be set together")
    if client_ca and not cert:
        raise SystemExit("HAMI_SIM_TLS_CLIENT_CA (mTLS) needs HAMI_SIM_TLS_CERT and HAMI_SIM_TLS_KEY")
    out: dict = {
        "bind": [env.get("HAMI_SIM_BIND") or ("0.0.0.0:8443" if cert else "0.0.0.0:8000")],
        "workers": int(env.get("HAMI_SIM_WORKERS") or _cpus()),
        # gthread, not sync: sync workers close the connection after every response, so each CA
        # call would pay a new TCP + mTLS handshake (measured: ~5x the latency, docs/production.md).
        # Our gthread subclass reads request heads in the event loop (worker.py, front.py).
        "worker_class": "hami_sim.server.worker.HardenedThreadWorker",
        "threads": int(env.get("HAMI_SIM_THREADS") or 1),
        "timeout": int(env.get("HAMI_SIM_TIMEOUT") or 60),
        "graceful_timeout": 30,
        "keepalive": 75,  # longer than the Go client's idle timeout so CA reuses connections
        "max_requests": int(env.get("HAMI_SIM_MAX_REQUESTS") or 0),
        "max_requests_jitter": 100,
        "limit_request_line": 8190,
        "limit_request_fields": 100,
        "limit_request_field_size": 16384,
    }
    if cert:
        out.update({"certfile": cert, "keyfile": key})
        if client_ca:
            out.update({"ca_certs": client_ca, "cert_reqs": ssl.CERT_REQUIRED})
    return out


globals().update(settings_from_env())
refuse_unsafe_start()  # a production listener with demo defaults never starts
wsgi_app = "hami_sim.project.wsgi:application"
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = None  # our RequestIdMiddleware writes one JSON access line per request with its id
errorlog = "-"
control_socket_disable = True  # it would write to $HOME, which is read-only in the container
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# gunicorn's own lines (start, worker boot/exit, TLS handshake failures) as the same JSON lines.
logconfig_dict = logging_config(os.environ.get("LOG_LEVEL", "INFO").upper())
# Certificates, keys and the client CA are read once at start; a rotated Secret needs a rollout.
do_handshake_on_connect = True  # fail a client without a valid certificate at accept, not mid-request

if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="hami-sim-metrics-")


def ssl_context(conf, default_ssl_context_factory):
    """TLS 1.2+ only; the default context already holds the cert, key, client CA and CERT_REQUIRED."""
    context = default_ssl_context_factory()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


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
        host = server.cfg.bind[0].rpartition(":")[0].strip("[]") or "0.0.0.0"  # the listener's interface
        start_http_server(int(port), addr=host, registry=registry)
        server.log.info("worker metrics on http://%s:%s/metrics", host, port)


def child_exit(server, worker) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)

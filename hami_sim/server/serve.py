"""Start the production server: ``python -m hami_sim.server.serve`` (the container's command).

It execs gunicorn with ``hami_sim/server/gunicorn_conf.py``, which reads TLS/mTLS material and sizing from
the environment (see that module for the variables); ``HAMI_SIM_SERVER=granian`` runs granian with
the same variables instead. ``start_server`` does the same as a child
process on a loopback port for the mTLS tests and for ``bench/``::

    from hami_sim.server.serve import start_server
    proc, url = start_server(cert="server.pem", key="server.key", client_ca="clients-ca.pem", workers=2)
    ...  # https://127.0.0.1:<port>/filter-simulation, client certificate required
    stop_server(proc)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping

__all__ = [
    "gunicorn_argv",
    "granian_argv",
    "server_argv",
    "main",
    "refuse_unsafe_start",
    "probe",
    "start_server",
    "stop_server",
    "free_port",
    "wait_for_port",
]

CONFIG = "python:hami_sim.server.gunicorn_conf"


def gunicorn_argv(extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "gunicorn", "-c", CONFIG, *(extra or [])]


def granian_argv(environ: Mapping[str, str] | None = None) -> list[str]:
    """The same environment contract on granian (``HAMI_SIM_SERVER=granian``; docs/production.md).

    Opt-in: measured faster per request, but it has no master hooks, so there is no plain-HTTP
    metrics port for the mTLS listener and dead workers' metric files are not cleaned up; its key
    file must be PKCS#8.
    """
    env = os.environ if environ is None else environ
    cert, key, client_ca = (
        env.get("HAMI_SIM_TLS_CERT", ""),
        env.get("HAMI_SIM_TLS_KEY", ""),
        env.get("HAMI_SIM_TLS_CLIENT_CA", ""),
    )
    host, _, port = (env.get("HAMI_SIM_BIND") or ("0.0.0.0:8443" if cert else "0.0.0.0:8000")).rpartition(":")
    argv = [
        sys.executable, "-m", "granian", "--interface", "wsgi", "--host", host.strip("[]") or "0.0.0.0",
        "--port", port, "--workers", env.get("HAMI_SIM_WORKERS") or str(len(os.sched_getaffinity(0))),
        "--blocking-threads", env.get("HAMI_SIM_THREADS") or "1", "--no-ws",
        "--respawn-failed-workers", "--log-level", env.get("LOG_LEVEL", "info").lower(),
    ]  # fmt: skip
    if cert:
        argv += ["--ssl-certificate", cert, "--ssl-keyfile", key, "--ssl-protocol-min", "tls1.2"]
        if client_ca:
            argv += ["--ssl-ca", client_ca, "--ssl-client-verify"]
    return [*argv, "hami_sim.project.wsgi:application"]


def server_argv(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    server = env.get("HAMI_SIM_SERVER", "gunicorn")
    if server == "granian":
        return granian_argv(env)
    if server != "gunicorn":
        raise SystemExit(f"HAMI_SIM_SERVER={server!r}: expected gunicorn or granian")
    return gunicorn_argv()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout: float = 30.0) -> None:
    """Wait until something accepts TCP connections on 127.0.0.1:port (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode} before listening on {port}")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


def start_server(
    *,
    cert: str = "",
    key: str = "",
    client_ca: str = "",
    port: int | None = None,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    stdout=None,
    stderr=None,
    timeout: float = 30.0,
) -> tuple[subprocess.Popen, str]:
    """Run the production server on 127.0.0.1 as a child process; returns (process, base URL).

    ``env`` is added to this process' environment (``DATABASE_URL``, ``HAMI_SIM_LISTENER`` ...).
    The child gets its own process group so ``stop_server`` ends gunicorn and its workers together.
    """
    port = port or free_port()
    child_env = {**os.environ, **(env or {})}
    child_env.update(
        {
            "HAMI_SIM_BIND": f"127.0.0.1:{port}",
            "HAMI_SIM_WORKERS": str(workers),
            "HAMI_SIM_TLS_CERT": cert,
            "HAMI_SIM_TLS_KEY": key,
            "HAMI_SIM_TLS_CLIENT_CA": client_ca,
        }
    )
    child_env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # gunicorn_conf makes a private one
    if child_env.get("HAMI_SIM_SERVER") == "granian":
        import tempfile

        child_env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="hami-sim-metrics-")
    proc = subprocess.Popen(
        server_argv(child_env), env=child_env, stdout=stdout, stderr=stderr, start_new_session=True
    )
    try:
        wait_for_port(port, proc, timeout)
    except BaseException:
        stop_server(proc)
        raise
    return proc, f"{'https' if cert else 'http'}://127.0.0.1:{port}"


def stop_server(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM gunicorn's process group (graceful), SIGKILL it if it does not go."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def probe(kind: str) -> int:
    """Exec probes for containers without an HTTP endpoint; 0 = healthy.

    ``tcp``: the configured listener accepts connections (Docker HEALTHCHECK; TLS or not).
    ``db``: the database answers (Celery beat: its schedule lives there).
    ``celery``: this pod's Celery worker answers a ping over the broker.
    """
    if kind == "tcp":
        host, _, port = (os.environ.get("HAMI_SIM_BIND") or "127.0.0.1:8000").rpartition(":")
        host = "127.0.0.1" if host in ("", "0.0.0.0", "[::]") else host
        with socket.create_connection((host, int(port)), timeout=3):
            return 0
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    import django

    django.setup()
    if kind == "db":
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return 0
    if kind == "celery":
        from hami_sim.project.celery import app

        replies = app.control.ping(destination=[f"celery@{socket.gethostname()}"], timeout=5)
        return 0 if replies else 1
    print(f"unknown probe {kind!r}; expected tcp, db or celery", file=sys.stderr)
    return 2


def refuse_unsafe_start() -> None:
    """Exit before binding when this listener's settings are unsafe (``hami_sim.project.checks.start_problems``:
    a production listener with the demo key or ``ALLOWED_HOSTS=*``, an extender without mTLS)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    from hami_sim.project.checks import refuse_unsafe_start as refuse

    refuse()


def main(argv: list[str] | None = None) -> None:
    """Replace this process with gunicorn (PID 1 in the container receives the signals).

    ``python -m hami_sim.server.serve probe <tcp|db|celery>`` runs a health probe instead.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["probe"]:
        try:
            code = probe(args[1] if len(args) > 1 else "tcp")
        except Exception as exc:  # a probe reports, it does not crash with a traceback
            print(f"probe failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
            code = 1
        raise SystemExit(code)
    if os.environ.get("HAMI_SIM_SERVER") == "granian":
        refuse_unsafe_start()  # gunicorn runs it from its config file
        os.makedirs(os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", "/tmp/prometheus"), exist_ok=True)
        argv = granian_argv()
    else:
        argv = gunicorn_argv(args)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()

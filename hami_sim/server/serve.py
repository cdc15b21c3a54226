"""Start the production server: ``python -m hami_sim.server.serve`` (the container's command).

It execs gunicorn with ``hami_sim/server/gunicorn_conf.py`` (sizing from the environment, see that
module) on the unix socket that the pod's nginx proxies to (``hami_sim.server.nginx``: TLS, mTLS,
request buffering and limits). ``start_server`` runs both, nginx in front of gunicorn, as child
processes on a loopback port for the tests and ``bench/``::

    from hami_sim.server.serve import start_server
    server, url = start_server(cert="server.pem", key="server.key", client_ca="clients-ca.pem", workers=2)
    ...  # https://127.0.0.1:<port>/filter-simulation, client certificate required
    stop_server(server)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "gunicorn_argv",
    "main",
    "refuse_unsafe_start",
    "probe",
    "Server",
    "start_server",
    "stop_server",
    "free_port",
    "wait_for_port",
    "NGINX",
]

CONFIG = "python:hami_sim.server.gunicorn_conf"
NGINX = os.environ.get("HAMI_SIM_NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"


def gunicorn_argv(extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "gunicorn", "-c", CONFIG, *(extra or [])]


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


@dataclass
class Server:
    """nginx in front of gunicorn, as ``start_server`` runs them; ``pid`` is gunicorn's master."""

    app: subprocess.Popen
    nginx: subprocess.Popen | None
    run_dir: str

    @property
    def pid(self) -> int:
        return self.app.pid

    @property
    def nginx_log(self) -> str:
        """nginx's own log lines (its error log) while it runs."""
        return os.path.join(self.run_dir, "nginx.log")

    def poll(self) -> int | None:
        """None while both run."""
        return next((p.returncode for p in self._procs() if p.poll() is not None), None)

    def _procs(self) -> list[subprocess.Popen]:
        return [p for p in (self.nginx, self.app) if p is not None]


def _wait_for_socket(path: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with status {proc.returncode} before binding {path}")
        with socket.socket(socket.AF_UNIX) as s:
            if s.connect_ex(path) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"gunicorn did not bind {path} within {timeout}s")


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
    limits=None,
) -> tuple[Server, str]:
    """Run the production stack on 127.0.0.1: gunicorn on a unix socket in a fresh directory, nginx
    rendered by ``hami_sim.server.nginx`` in front of it (TLS with ``cert``/``key``, mTLS with
    ``client_ca``, ``limits`` or the production ones). Returns (server, base URL).

    ``env`` is added to this process' environment (``DATABASE_URL``, ``HAMI_SIM_LISTENER`` ...).
    Each child gets its own process group so ``stop_server`` ends them with their workers.
    """
    from hami_sim.server.nginx import Limits, Site, render

    port = port or free_port()
    run_dir = tempfile.mkdtemp(prefix="hami-sim-serve-")
    os.chmod(run_dir, 0o755)  # nginx's workers (an unprivileged user under root) reach the socket
    sock = os.path.join(run_dir, "gunicorn.sock")
    child_env = {**os.environ, **(env or {})}
    child_env.update(
        {
            "HAMI_SIM_BIND": f"unix:{sock}",
            "HAMI_SIM_WORKERS": str(workers),
            "HAMI_SIM_METRICS_HOST": "127.0.0.1",
        }
    )
    child_env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # gunicorn_conf makes a private one
    app = subprocess.Popen(
        gunicorn_argv(), env=child_env, stdout=stdout, stderr=stderr, start_new_session=True
    )
    server = Server(app, None, run_dir)
    try:
        _wait_for_socket(sock, app, timeout)
        site = Site(
            listener=child_env.get("HAMI_SIM_LISTENER", "all"),
            port=port,
            host="127.0.0.1",
            upstream=sock,
            prefix=run_dir,
            cert=cert,
            key=key,
            client_ca=client_ca,
            workers=1,
            limits=limits or Limits(),
        )
        conf = Path(run_dir, "nginx.conf")
        conf.write_text(render(site))
        with open(server.nginx_log, "wb") as log:  # nginx's lines are not the app's JSON lines
            server.nginx = subprocess.Popen(
                [NGINX, "-e", "stderr", "-p", run_dir, "-c", str(conf)],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        try:
            wait_for_port(port, server.nginx, timeout)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {Path(server.nginx_log).read_text()[-2000:]}") from exc
    except BaseException:
        stop_server(server)
        raise
    return server, f"{'https' if cert else 'http'}://127.0.0.1:{port}"


def _stop(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM a process group (graceful), SIGKILL it if it does not go."""
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


def stop_server(server: Server, timeout: float = 15.0) -> None:
    """Stop nginx, then gunicorn (graceful, then killed), and remove their directory."""
    for proc in server._procs():
        _stop(proc, timeout)
    shutil.rmtree(server.run_dir, ignore_errors=True)


def probe(kind: str) -> int:
    """Exec probes for containers without an HTTP endpoint; 0 = healthy.

    ``tcp``: the configured listener (``HAMI_SIM_BIND``: the unix socket, or host:port) accepts
    connections (the app container's liveness, Docker HEALTHCHECK).
    ``db``: the database answers (Celery beat: its schedule lives there).
    ``celery``: this pod's Celery worker answers a ping over the broker.
    """
    if kind == "tcp":
        return _accepts(os.environ.get("HAMI_SIM_BIND") or "unix:/run/hami-sim/gunicorn.sock")
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


def _accepts(bind: str) -> int:
    if bind.startswith("unix:"):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(3)
            s.connect(bind[len("unix:") :])
        return 0
    host, _, port = bind.rpartition(":")
    host = "127.0.0.1" if host in ("", "0.0.0.0", "[::]") else host
    with socket.create_connection((host, int(port)), timeout=3):
        return 0


def refuse_unsafe_start() -> None:
    """Exit before binding when this listener's settings are unsafe (``hami_sim.project.checks.start_problems``:
    a production listener with the demo key or ``ALLOWED_HOSTS=*``, an extender nginx is not in front of)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    from hami_sim.project.checks import refuse_unsafe_start as refuse

    refuse()


def main(argv: list[str] | None = None) -> None:
    """Replace this process with gunicorn (PID 1 in the container receives the signals); nginx is
    the pod's other container.

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
    argv = gunicorn_argv(args)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()

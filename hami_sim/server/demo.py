"""``make demo``: SQLite + the embedded (filesystem) Celery broker, demo data, web, worker and beat.

Steps run in order (``STEPS``); each is a function of the ``Demo`` state, so adding one (e.g. seeding
decisions) is a one-line addition to the list. Then gunicorn and a Celery worker with embedded beat
start as children; the URL and the admin login are printed; Ctrl-C (or SIGTERM) stops every child.

Environment: ``DEMO_PORT`` (8000), ``DEMO_EXPANDER_PORT`` (8444: CA's gRPC expander, plaintext on
loopback), ``DEMO_BIND_HOST`` (127.0.0.1; 0.0.0.0 in the demo container), ``DEMO_ADMIN_USER`` (admin),
``DEMO_ADMIN_PASSWORD`` (hami-sim-demo), and everything ``hami_sim/project/settings.py`` reads. ``KUBE_SOURCE``
defaults to the demo snapshot; ``LOG_JSON`` defaults to false (plain text lines, the same format as
Celery's and gunicorn's own).

A restart keeps what the first start (or the operator) put in the database: the demo node groups are
imported only into an empty database, so admin edits survive, and the demo questions are asked only
once. ``make clean`` (or deleting ``var/``) starts from scratch.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
DEMO_DIR = BASE_DIR / "demo"

__all__ = [
    "Demo",
    "STEPS",
    "main",
    "migrate",
    "load_profiles",
    "create_admin",
    "sync_inventory",
    "enqueue_sync",
    "seed_session",
]


@dataclass
class Demo:
    port: int = int(os.environ.get("DEMO_PORT", "8000"))
    #: CA's gRPC expander, plaintext on loopback (docs/cluster-autoscaler.md)
    expander_port: int = int(os.environ.get("DEMO_EXPANDER_PORT", "8444"))
    user: str = os.environ.get("DEMO_ADMIN_USER", "admin")
    password: str = os.environ.get("DEMO_ADMIN_PASSWORD", "hami-sim-demo")
    children: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """True when something already listens on ``port`` (the demo would wait for it, then fail)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def check_port(demo: Demo) -> None:
    """Fail fast, before any setup, when a port is taken: name the setting that moves it.

    Both listeners: a second demo's expander would otherwise bind next to the first one's (gRPC sets
    SO_REUSEPORT) and split CA's calls between two databases."""
    for port, setting, other in (
        (demo.port, "DEMO_PORT", 8001),
        (demo.expander_port, "DEMO_EXPANDER_PORT", 8445),
    ):
        if port_taken(port):
            raise SystemExit(
                f"port {port} is already in use; start the demo on another one: {setting}={other} make demo"
            )


def _environment() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    os.environ.setdefault("KUBE_SOURCE", f"file://{DEMO_DIR / 'cluster-snapshot.json'}")
    # The demo cluster holds HAMi-DRA objects (a DRA node, its slice, two pods with claims: docs/dra.md).
    os.environ.setdefault("DRA_SYNC", "true")
    os.environ.setdefault("PYTHONPATH", str(BASE_DIR))
    # Unregistered nodes are flagged after a minute in the demo rather than ten.
    os.environ.setdefault("DRIFT_UNREGISTERED_GRACE_SECONDS", "60")
    # One log format on the demo's terminal: Celery and gunicorn print plain text lines, so Django does too.
    os.environ.setdefault("LOG_JSON", "false")


def migrate(demo: Demo) -> None:
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    print("  database migrated")


def collect_static(demo: Demo) -> None:
    """Static files by content hash (WhiteNoise's manifest storage); skipped when nothing changed."""
    from hami_sim.runtime.staticfiles import collect_static_if_stale

    print("  static files collected" if collect_static_if_stale() else "  static files up to date")


def load_profiles(demo: Demo) -> None:
    """The demo node groups, into an empty database only: a restart keeps the operator's admin edits."""
    from django.core.management import call_command

    from profiles.models import NodeGroup

    existing = NodeGroup.objects.count()
    if existing:
        print(
            f"  {existing} node groups kept from the last start (make clean starts from demo/profiles.yaml)"
        )
        return
    call_command("import_profiles", str(DEMO_DIR / "profiles.yaml"))
    call_command("import_profiles", str(DEMO_DIR / "dra-profiles.yaml"))
    print(
        "  demo node groups loaded: gpu-a10 (warm), gpu-h100 (cold-zero, profile), gpu-l4 (no profile),"
        " gpu-a10-dra (HAMi on DRA, clusterapi)"
    )


def create_admin(demo: Demo) -> None:
    from django.contrib.auth import get_user_model

    User = get_user_model()  # noqa: N806
    user, _ = User.objects.get_or_create(
        username=demo.user, defaults={"email": f"{demo.user}@example.invalid"}
    )
    user.is_staff = user.is_superuser = True
    user.set_password(demo.password)
    user.save()
    from django.contrib.auth.models import Group

    user.groups.add(Group.objects.get_or_create(name="operators")[0])  # the role, not just superuser
    print(f"  admin user {demo.user!r} ready")


def sync_inventory(demo: Demo) -> None:
    from profiles.tasks import sync_cluster_inventory

    counts = sync_cluster_inventory.apply().get()
    print(f"  cluster inventory synced from {os.environ['KUBE_SOURCE']}: {counts}")


def enqueue_sync(demo: Demo) -> None:
    """One more sync through the broker, so the worker's first job is visible as a task run."""
    from profiles.tasks import sync_cluster_inventory

    sync_cluster_inventory.delay()


def seed_decisions(demo: Demo) -> None:
    """Three pods asked through the extender (scaled cold-zero group, rejected everywhere, fit) + CA events."""
    from decisions.demo import DEMO_PODS, seed
    from decisions.models import Decision

    uids = [pod["metadata"]["uid"] for pod in DEMO_PODS.values()]
    if Decision.objects.filter(pod_uid__in=uids).exists():  # asked once per database, not once per start
        print("  demo decisions kept from the last start")
        return
    counts = seed()
    print(f"  demo decisions and CA events seeded: {counts}; open {demo.url}/ and follow a pod")


DEMO_SESSION = "demo: CA binpacking 12000 MiB pods on gpu-a10"


def seed_session(demo: Demo) -> None:
    """One simulation session, so the sessions page shows what CA's estimator loop leaves behind:
    three pods placed on a gpu-a10 template node, then a checkpoint (fork) holding a fourth."""
    from decisions.demo import demo_pod
    from profiles.models import NodeGroup
    from profiles.nodetemplates import group_template
    from simulations.models import SimulationSession
    from simulations.sessions import create_session, fork, place_pod

    SimulationSession.objects.filter(name=DEMO_SESSION).delete()  # one per demo, not one per start
    session = create_session({"name": DEMO_SESSION, "ttlSeconds": 86400})
    node = group_template(NodeGroup.objects.get(name="gpu-a10"))
    node["metadata"]["name"] = "template-node-for-gpu-a10-0"
    for i in range(4):
        if i == 3:
            fork(session["id"], None)
        pod = demo_pod(f"batch-infer-{i}", f"5e55e55e-0000-4000-8000-00000000000{i}", 12000)
        body = {"pod": pod, "node": node} if i == 0 else {"pod": pod, "nodeName": node["metadata"]["name"]}
        place_pod(session["id"], body, None)
    print(f"  demo session seeded: {demo.url}/sessions/{session['id']}/")


# The demo's data steps, in order. Add a step here (a function taking the Demo) to seed more data.
STEPS: list[Callable[[Demo], None]] = [
    migrate,
    collect_static,
    load_profiles,
    create_admin,
    sync_inventory,
    enqueue_sync,
    seed_decisions,
    seed_session,
]


def _spawn(demo: Demo, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
    child = subprocess.Popen(argv, cwd=BASE_DIR, env=env or os.environ.copy(), start_new_session=True)
    demo.children.append(child)
    print(f"  started {name} (pid {child.pid})")


def _var_dir() -> Path:
    return Path(os.environ.get("HAMI_SIM_VAR_DIR", BASE_DIR / "var"))


def web_argv(demo: Demo, workers: int = 2) -> list[str]:
    """gunicorn for the demo's web server (several workers, as in production)."""
    bind = f"{os.environ.get('DEMO_BIND_HOST', '127.0.0.1')}:{demo.port}"
    app = "hami_sim.project.wsgi:application"
    return [sys.executable, "-m", "gunicorn", app, "-b", bind, "-w", str(workers), "--timeout", "60"]


def web_env(demo: Demo) -> dict[str, str]:
    """The web server's environment: metrics in multiprocess mode, from empty files.

    Without ``PROMETHEUS_MULTIPROC_DIR`` each gunicorn worker counts alone and ``/metrics`` answers
    with whichever worker took the scrape (a counter reading 7, then 1, then 7). With it every worker
    writes its samples to a shared directory and ``hami_sim.project.metrics.metrics_view`` adds them up, as
    ``hami_sim/server/gunicorn_conf.py`` arranges in production. Old files would count a dead run's samples.
    """
    directory = _var_dir() / f"metrics-{demo.port}"
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()
    return {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)}


def start_services(demo: Demo) -> None:
    python = sys.executable
    var = _var_dir()
    _spawn(demo, "web", web_argv(demo), web_env(demo))
    _spawn(
        demo,
        "celery worker + beat",
        [
            # WARNING: beat's minute-by-minute task lines would scroll the banner away (task runs are on
            # the overview and in the admin)
            python, "-m", "celery", "-A", "hami_sim.project", "worker", "-B", "-l", "WARNING", "--concurrency", "1",
            "--without-gossip", "--without-mingle", "-s", str(var / "celerybeat-schedule"),
        ],
    )  # fmt: skip
    _spawn(
        demo,
        f"gRPC expander on 127.0.0.1:{demo.expander_port} (plaintext)",
        [python, "manage.py", "run_expander", "--bind", f"127.0.0.1:{demo.expander_port}"],
    )


def wait_expander(demo: Demo, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_taken(demo.expander_port):
            return True
        time.sleep(0.3)
    return False


def seed_expander_call(demo: Demo) -> None:
    """One real gRPC BestOptions call to the demo's expander (once per database), so the dashboard shows
    the upstream-CA path too: a decision with caller ``expander`` and each option's reason."""
    from decisions.models import Decision
    from simulations.management.commands.expander_example import ask_expander

    if Decision.objects.filter(caller="expander").exists():
        return
    try:
        offered, kept = ask_expander(f"127.0.0.1:{demo.expander_port}")
    except Exception as exc:  # the demo still serves everything else
        print(f"  expander example call failed: {exc}", file=sys.stderr)
        return
    from simulations.management.commands.expander_example import option_lines

    print(f"  expander asked once over gRPC (options {', '.join(offered)}):")
    for line in option_lines(offered, kept):
        print(f"  {line}")


def wait_worker(started: float, timeout: float = 60.0) -> bool:
    """True once the Celery worker has finished a task run begun after ``started`` (its first job)."""
    from datetime import UTC, datetime

    from hami_sim.runtime.models import TaskRun

    since = datetime.fromtimestamp(started, tz=UTC)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if TaskRun.objects.filter(started_at__gte=since, finished_at__isnull=False).exists():
            return True
        time.sleep(0.5)
    return False


def banner(demo: Demo) -> str:
    """What to open and how to log in: printed last, below the services' start-up lines."""
    rule = "=" * 72
    return (
        f"\n{rule}\n"
        f"hami-sim demo is up: {demo.url}/  (admin: {demo.url}/admin/  API: {demo.url}/api/v1/)\n"
        f"admin login: {demo.user} / {demo.password}\n"
        f"gRPC expander (upstream CA's --expander=grpc): 127.0.0.1:{demo.expander_port}, plaintext;\n"
        f"  ask it as CA does: DEMO_EXPANDER_PORT={demo.expander_port} .venv/bin/python manage.py expander_example\n"
        "cold-zero check: POST a pod to /filter-simulation with a node named template-node-for-gpu-h100-1\n"
        f"Ctrl-C stops everything.\n{rule}"
    )


def wait_ready(demo: Demo, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{demo.url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def stop_services(demo: Demo) -> None:
    for child in demo.children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 15
    for child in demo.children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    print("demo stopped")


def main() -> int:
    _environment()
    import django

    django.setup()
    from hami_sim.runtime.localdirs import ensure_local_dirs

    ensure_local_dirs()
    demo = Demo()
    check_port(demo)
    os.environ.setdefault("DEMO_LOGIN_HINT", f"{demo.user} / {demo.password}")  # the web child's login page
    print("hami-sim demo: preparing data")
    for step in STEPS:
        step(demo)
    from django.db import connections

    connections.close_all()
    print("starting services")
    stopping = False

    def _stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    started = time.time()
    start_services(demo)
    try:
        if not wait_ready(demo):
            print("web server did not come up; stopping", file=sys.stderr)
            return 1
        if wait_expander(demo):
            seed_expander_call(demo)
        if not wait_worker(started):
            print("  the Celery worker has not finished a task yet; its log lines follow", file=sys.stderr)
        print(banner(demo), flush=True)
        while not stopping:
            if any(child.poll() is not None for child in demo.children):
                print("a demo service exited; stopping", file=sys.stderr)
                return 1
            time.sleep(0.5)
        return 0
    finally:
        stop_services(demo)


if __name__ == "__main__":
    sys.exit(main())

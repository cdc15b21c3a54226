"""One way for a bench script to reach a migrated database: the scripts that measure what Django
stores (metrics, usage, upgrade comparison) each use their own PostgreSQL database, created when
missing, so a bench never touches the tests' or the demo's data. A non-PostgreSQL ``DATABASE_URL``
is used as it is (SQLite creates its file itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["setup_django"]


def setup_django(database: str, **env_defaults: str) -> None:
    """Point Django at ``DATABASE_URL`` (default: PostgreSQL database ``database`` on loopback),
    create and migrate it, and set Django up; ``env_defaults`` are further settings' defaults."""
    os.environ.setdefault("DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/{database}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hami_sim.project.settings")
    for name, value in env_defaults.items():
        os.environ.setdefault(name, value)
    _create_database(os.environ["DATABASE_URL"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()


def _create_database(url: str) -> None:
    if not url.startswith("postgres"):
        return
    import environ
    import psycopg

    cfg = environ.Env.db_url_config(url)
    admin = f"host={cfg['HOST'] or '127.0.0.1'} port={cfg['PORT'] or 5432} user={cfg['USER'] or 'postgres'} dbname=postgres"
    if cfg.get("PASSWORD"):
        admin += f" password={cfg['PASSWORD']}"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [cfg["NAME"]]).fetchone():
            conn.execute(f'CREATE DATABASE "{cfg["NAME"]}"')

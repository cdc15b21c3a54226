"""Production settings as an operator sets them: ``check --deploy`` and the server's behaviour without a database."""

from __future__ import annotations

import http.client
import os
import secrets
import subprocess
import sys

import orjson
import pytest

from hami_sim.server.serve import start_server, stop_server
from tests.deploy.conftest import REPO

PRODUCTION_ENV = {
    "DEBUG": "false",
    "HAMI_SIM_HTTPS": "true",
    "ALLOWED_HOSTS": "hami-sim.hami-sim.svc,hami-sim.example.com",
    "HAMI_SIM_LISTENER": "web",
}


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SECRET_KEY", "SECURE_", "HAMI_SIM_", "DATABASE_URL"))
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env={**base, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    key_file = tmp_path / "secret-key"
    key_file.write_text(secrets.token_urlsafe(64) + "\n")  # as mounted from a Secret
    db_file = tmp_path / "database-url"
    db_file.write_text(f"sqlite:///{tmp_path / 'db.sqlite3'}\n")
    result = _check_deploy(
        {**PRODUCTION_ENV, "SECRET_KEY_FILE": str(key_file), "DATABASE_URL_FILE": str(db_file)}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_flags_a_forgotten_secret_and_http_settings():
    result = _check_deploy({"DEBUG": "false"})
    assert result.returncode != 0
    out = result.stdout + result.stderr
    for check_id in ("hami_sim.E003", "security.W004", "security.W008", "security.W012", "security.W016"):
        assert check_id in out, check_id


def test_check_deploy_flags_an_extender_listener_that_clients_reach_without_nginx():
    """nginx verifies CA's client certificate; a TCP port would let a client skip it."""
    result = _check_deploy(
        {
            **PRODUCTION_ENV,
            "HAMI_SIM_LISTENER": "extender",
            "HAMI_SIM_BIND": "0.0.0.0:8443",
            "SECRET_KEY": secrets.token_urlsafe(64),
        }
    )
    assert result.returncode != 0 and "hami_sim.E004" in result.stdout + result.stderr


@pytest.mark.slow
def test_server_without_database_is_alive_but_not_ready():
    proc, url = start_server(
        env={
            "DATABASE_URL": "postgres://postgres@127.0.0.1:1/nowhere",
            "LOG_LEVEL": "ERROR",
            "HAMI_SIM_LISTENER": "all",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = int(url.rsplit(":", 1)[1])

        def get(path: str):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, orjson.loads(response.read())

        assert get("/healthz") == (200, {"status": "ok"})
        status, body = get("/readyz")
        assert status == 503 and body["status"] == "not ready"
        assert body["checks"]["database"].startswith("error")
    finally:
        stop_server(proc)


def test_secrets_are_read_from_mounted_files(tmp_path):
    """``<NAME>_FILE`` (a Kubernetes Secret volume) supplies the setting, trailing newline dropped."""
    (tmp_path / "database-url").write_text("postgres://hami:pw@db.example.internal:5432/hami_sim\n")
    (tmp_path / "secret-key").write_text("k" * 60 + "\n")
    code = (
        "from django.conf import settings; d = settings.DATABASES['default']; "
        "print(d['HOST'], d['NAME'], len(settings.SECRET_KEY))"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SECRET_KEY")},
            "PYTHONPATH": str(REPO),
            "DJANGO_SETTINGS_MODULE": "hami_sim.project.settings",
            "DATABASE_URL_FILE": str(tmp_path / "database-url"),
            "SECRET_KEY_FILE": str(tmp_path / "secret-key"),
        },
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["db.example.internal", "hami_sim", "60"]


def _settings_in_child(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SECRET_KEY", "DATABASE_URL", "CACHE_URL", "CELERY_", "HAMI_SIM_VAR_DIR"))
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, "PYTHONPATH": str(REPO), "DJANGO_SETTINGS_MODULE": "hami_sim.project.settings", **env},
    )


@pytest.mark.parametrize(
    ("variable", "file_content", "expected"),
    [
        # only the file: its content, trailing newline dropped
        (None, "from-file\n", "from-file"),
        # both: the variable wins (docs/production.md: <NAME>_FILE is the alternative to <NAME>)
        ("from-env", "from-file\n", "from-env"),
        # an empty variable counts as unset
        ("", "from-file\n", "from-file"),
    ],
)
@pytest.mark.parametrize("name", ["SECRET_KEY", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"])
def test_a_secret_variable_wins_over_its_file(tmp_path, name, variable, file_content, expected):
    """One precedence for every ``<NAME>``/``<NAME>_FILE`` pair (SECRET_KEY used to prefer the file)."""
    secret_file = tmp_path / "secret"
    secret_file.write_text(file_content)
    env = {f"{name}_FILE": str(secret_file)}
    if variable is not None:
        env[name] = variable
    code = f"from django.conf import settings; print(settings.{name})"
    result = _settings_in_child(code, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_importing_settings_creates_no_directory(tmp_path):
    """Settings are read by linters, collectors and one-off scripts: only a starting process creates
    ``var/`` (its SQLite folder, static root and filesystem broker)."""
    var = tmp_path / "var"
    code = (
        "from django.conf import settings; settings.INSTALLED_APPS; import os, sys; "
        f"print(os.path.exists({str(var)!r}))"
    )
    result = _settings_in_child(code, {"HAMI_SIM_VAR_DIR": str(var)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
    result = _settings_in_child(
        "from hami_sim.runtime.localdirs import ensure_local_dirs; ensure_local_dirs(); "
        f"import os; print(sorted(os.listdir({str(var)!r})))",
        {"HAMI_SIM_VAR_DIR": str(var)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['broker', 'static']"

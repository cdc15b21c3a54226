"""Fixtures for the production-serving tests: throwaway PKI and a real nginx + gunicorn on loopback."""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import trustme
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


class Pki:
    """A cluster CA (signs the server and Cluster Autoscaler's client cert) and an unrelated CA."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.ca = trustme.CA(organization_name="hami-sim test cluster CA")
        self.other_ca = trustme.CA(organization_name="somebody else's CA")
        server = self.ca.issue_cert("127.0.0.1", "localhost", "hami-sim.hami-sim.svc")
        self.server_cert = self._write("server.crt", server.cert_chain_pems)
        self.server_key = self._write("server.key", [server.private_key_pem])
        self.ca_cert = self._write("ca.crt", [self.ca.cert_pem])
        self.client = self.ca.issue_cert("cluster-autoscaler.kube-system")
        self.client_pem = self._write("client.pem", [self.client.private_key_and_cert_chain_pem])
        stranger = self.other_ca.issue_cert("cluster-autoscaler.kube-system")
        self.stranger_pem = self._write("stranger.pem", [stranger.private_key_and_cert_chain_pem])

    def _write(self, name: str, blobs) -> str:
        path = self.dir / name
        path.write_bytes(b"".join(blob.bytes() for blob in blobs))
        return str(path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def server_database_url(django_db_setup, django_db_blocker, tmp_path_factory) -> str:
    """A migrated database the server subprocess can open: the PostgreSQL test database when the
    suite runs on PostgreSQL (already migrated by pytest-django, which creates it only when some test
    of the session is marked ``django_db``), else a freshly migrated SQLite file."""
    from django.db import connection

    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"].endswith("postgresql"):
        user = settings_dict.get("USER") or "postgres"
        password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
        host = settings_dict.get("HOST") or "127.0.0.1"
        port = settings_dict.get("PORT") or 5432
        return f"postgres://{user}{password}@{host}:{port}/{settings_dict['NAME']}"
    url = f"sqlite:///{tmp_path_factory.mktemp('serverdb') / 'db.sqlite3'}"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(REPO)},
        check=True,
    )
    return url


@pytest.fixture
def access_log():
    """What the console handler prints for ``hami_sim.access`` (the configured JSON formatter and
    filters), captured: ``access_log()`` gives every record, ``access_log(path)`` those of one path."""
    console = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(console.formatter)
    for f in console.filters:
        handler.addFilter(f)
    access = logging.getLogger("hami_sim.access")
    access.addHandler(handler)
    old_level = access.level
    access.setLevel(logging.INFO)

    def records(path: str | None = None) -> list[dict]:
        lines = [orjson.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
        return lines if path is None else [r for r in lines if r.get("path") == path]

    yield records
    access.removeHandler(handler)
    access.setLevel(old_level)


def overlays() -> list[str]:
    """Every kustomization under deploy/ that renders on its own (Components are rendered by their
    examples)."""
    found = []
    for path in sorted(DEPLOY.rglob("kustomization.yaml")):
        if yaml.safe_load(path.read_text()).get("kind", "Kustomization") == "Kustomization":
            found.append(str(path.parent.relative_to(DEPLOY)))
    return found


@pytest.fixture(scope="module")
def every_overlay() -> dict[str, list[dict]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")  # test_manifests.py fails on CI without it
    out = {}
    for name in overlays():
        result = subprocess.run(
            [kubectl, "kustomize", str(DEPLOY / name)], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, f"kubectl kustomize deploy/{name}: {result.stderr}"
        out[name] = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    return out

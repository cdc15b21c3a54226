"""``make demo``: ports checked before anything starts, restarts that keep edits, one log format, the banner."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from hami_sim.server.demo import Demo, banner, check_port


def test_taken_port_fails_fast_naming_demo_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(SystemExit) as stopped:
            check_port(Demo(port=port))
    assert f"port {port} is already in use" in str(stopped.value)
    assert "DEMO_PORT=" in str(stopped.value)
    check_port(Demo(port=port))  # free again: no complaint


@pytest.mark.django_db
@pytest.mark.parametrize("hint", ["admin / hami-sim-demo", ""])
def test_login_page_hints_the_demo_login_in_demo_mode_only(client, settings, hint):
    settings.DEMO_LOGIN_HINT = hint
    page = client.get("/admin/login/").content.decode()
    assert ("Demo login: <b>admin / hami-sim-demo</b>" in page) == bool(hint)
    assert 'name="username"' in page  # still the admin's login form


def test_taken_expander_port_fails_fast_naming_demo_expander_port():
    """A second demo's expander would bind next to the first one's and split CA's calls."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        free = Demo(port=port).port + 0  # the web port stays free below
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            web = probe.getsockname()[1]
        with pytest.raises(SystemExit) as stopped:
            check_port(Demo(port=web, expander_port=free))
    assert str(stopped.value) == (
        f"port {port} is already in use; start the demo on another one: DEMO_EXPANDER_PORT=8445 make demo"
    )


def test_readme_documents_the_expander_port_next_to_demo_port():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "DEMO_PORT=8001 make demo" in quick_start
    assert "DEMO_EXPANDER_PORT" in quick_start and "8444" in quick_start


@pytest.mark.django_db
def test_a_restart_keeps_admin_edits_and_asks_the_demo_questions_once(capsys, monkeypatch):
    from decisions.models import Decision
    from hami_sim.server.demo import DEMO_DIR, load_profiles, seed_decisions, sync_inventory
    from profiles.models import NodeGroup

    monkeypatch.setenv("KUBE_SOURCE", f"file://{DEMO_DIR / 'cluster-snapshot.json'}")
    demo = Demo(port=1)
    load_profiles(demo)
    sync_inventory(demo)
    seed_decisions(demo)
    asked = dict(Decision.objects.values_list("pod_name", "count"))
    NodeGroup.objects.filter(name="gpu-l4").update(description="edited in the admin", max_size=3)
    load_profiles(demo)  # the second start
    seed_decisions(demo)
    edited = NodeGroup.objects.get(name="gpu-l4")
    assert (edited.description, edited.max_size) == ("edited in the admin", 3)
    assert dict(Decision.objects.values_list("pod_name", "count")) == asked  # not "asked 18x"
    assert asked["giant-training-0"] == 9
    assert "node groups kept from the last start" in capsys.readouterr().out


def test_the_banner_names_the_url_the_login_and_the_expander():
    text = banner(Demo(port=8123, expander_port=8555, user="ops", password="pw"))
    assert "http://127.0.0.1:8123/" in text
    assert "admin login: ops / pw" in text
    assert "127.0.0.1:8555" in text and "manage.py expander_example" in text


def test_demo_logs_are_plain_text_lines(monkeypatch):
    """Celery and gunicorn print plain text; the demo's Django lines must not be JSON among them."""
    from hami_sim.server import demo as demo_module

    monkeypatch.delenv("LOG_JSON", raising=False)
    demo_module._environment()
    assert os.environ["LOG_JSON"] == "false"
    from hami_sim.project.logconfig import logging_config

    config = logging_config("INFO", json_logs=os.environ["LOG_JSON"] == "true")
    assert "JsonFormatter" not in str(config["formatters"])

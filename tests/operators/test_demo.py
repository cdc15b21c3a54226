"""``make demo`` stops at once, naming DEMO_PORT, when its port is taken."""

from __future__ import annotations

import socket

import pytest

from hami_sim.demo import Demo, check_port


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

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

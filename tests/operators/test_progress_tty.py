"""Long commands show progress on a terminal and nothing else anywhere else: ``manage.py sync_cluster``
and ``import_profiles`` with their stderr on a real pseudo-terminal (Python's ``pty``), then piped."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import sys
import termios
import threading
from pathlib import Path

import orjson
import pytest
import yaml
from django.core.management import call_command

from tests.factories import kube

pytestmark = [pytest.mark.django_db]
DEMO = Path(__file__).resolve().parents[2] / "demo" / "profiles.yaml"
NODES, CARDS = 120, 4


def _snapshot(tmp_path: Path) -> str:
    """What `kubectl get nodes,pods -A -o json` writes for NODES nodes, each holding one pod per card."""
    nodes, pods = [], []
    for i in range(NODES):
        node = kube.gpu_node(f"n{i}", CARDS)
        node.update(kind="Node", apiVersion="v1")
        nodes.append(node)
        for c in range(CARDS):
            pod = kube.pod(f"p{i}-{c}", gpumem=1000, uid=f"uid-{i}-{c}", namespace="ml")
            pod.update(kind="Pod", apiVersion="v1")
            pod["spec"]["nodeName"] = f"n{i}"
            pod["metadata"]["annotations"] = {
                "hami.io/vgpu-node": f"n{i}",
                "hami.io/vgpu-devices-allocated": f"GPU-n{i}-{c},NVIDIA,1000,10:;",
            }
            pod["status"] = {"phase": "Running"}
            pods.append(pod)
    path = tmp_path / "cluster.json"
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": nodes + pods}))
    return f"file://{path}"


class Terminal:
    """A pseudo-terminal: ``stream`` is its slave end (a tty, as a shell's stderr is), ``text()``
    what a user would have seen on it."""

    def __init__(self) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24 x 100, as a window
        self.stream = os.fdopen(slave, "w", encoding="utf-8", buffering=1)
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the slave end closed
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    def text(self) -> str:
        self.stream.close()
        self.reader.join(timeout=30)
        os.close(self.master)
        return b"".join(self.chunks).decode("utf-8", "replace")


def _run(monkeypatch, stderr, command: str, *args, **options) -> str:
    monkeypatch.setattr(sys, "stderr", stderr)
    out = io.StringIO()
    call_command(command, *args, stdout=out, **options)
    return out.getvalue()


def test_sync_cluster_on_a_terminal_shows_each_stage_to_its_end(monkeypatch, tmp_path):
    source = _snapshot(tmp_path)
    terminal = Terminal()
    assert terminal.stream.isatty()
    out = _run(monkeypatch, terminal.stream, "sync_cluster", source=source)
    seen = terminal.text()
    for stage, total in [
        ("list nodes", NODES),
        ("nodes", NODES),
        ("list pods", NODES * CARDS),
        ("usage", NODES),
    ]:
        assert re.search(rf"(^|[\r\n]){stage}: 100%\|[^|]*\| {total}/{total}\b", seen), (stage, seen)
    assert orjson.loads(out)["nodes"] == NODES  # the counts stay on stdout, bars on stderr


def test_sync_cluster_piped_prints_only_its_counts(monkeypatch, tmp_path):
    piped = io.StringIO()
    out = _run(monkeypatch, piped, "sync_cluster", source=_snapshot(tmp_path))
    assert piped.getvalue() == ""
    assert orjson.loads(out)["pods_created"] == NODES * CARDS


def test_import_profiles_on_a_terminal_shows_the_groups_and_piped_nothing(monkeypatch, tmp_path):
    groups = yaml.safe_load(DEMO.read_text())["node_groups"]
    terminal = Terminal()
    out = _run(monkeypatch, terminal.stream, "import_profiles", str(DEMO))
    seen = terminal.text()
    n = len(groups)
    assert re.search(rf"check node groups: 100%\|[^|]*\| {n}/{n}\b", seen), seen
    assert re.search(rf"import node groups: 100%\|[^|]*\| {n}/{n}\b", seen), seen
    assert f"imported {n} new" in out
    piped = io.StringIO()
    assert "updated" in _run(monkeypatch, piped, "import_profiles", str(DEMO))
    assert piped.getvalue() == ""

"""The node-group page's capacity chart shows the panels a vendor's devices have, in its units."""

from __future__ import annotations

import json
import re

import pytest

from tests.factories.models import NodeGroupFactory

pytestmark = [pytest.mark.django_db]

A10 = {
    "type": "NVIDIA A10G",
    "devmem": 23028,
    "devcore": 100,
    "count": 10,
    "numa": 0,
    "mode": "hami-core",
    "mig_profiles": [],
}


def _group(name: str, vendor: str, rows: list[dict], **fields):
    from profiles.api.serializers import complete_rows

    rows = complete_rows(vendor, rows)
    return NodeGroupFactory(name=name, match_labels={"pool": name}, rows=rows, rows__vendor=vendor, **fields)


def _capacity_figure(client, name: str) -> dict:
    html = client.get(f"/node-groups/{name}/").content.decode()
    match = re.search(r'<script id="fig-capacity" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the page has a capacity chart"
    return json.loads(match.group(1))


def _panel_titles(fig: dict) -> list[str]:
    return [a["text"] for a in fig["layout"].get("annotations", [])]


def test_aws_neuron_shows_only_neuroncores(client, staff):
    _group("inf2", "AWSNeuron", [{"count": 2, "devcore": 3, "quantity": 4}], machine_type="inf2.24xlarge")
    client.force_login(staff)
    fig = _capacity_figure(client, "inf2")
    assert _panel_titles(fig) == ["NeuronCores"]
    free = next(t for t in fig["data"] if t["name"] == "free")
    assert list(free["x"]) == [f"Neuron device {i}" for i in range(4)]
    assert list(free["y"]) == [2, 2, 2, 2]  # two NeuronCores per device, not the core mask 3


def test_nvidia_keeps_memory_cores_and_slots(client, staff):
    _group("gpu-a10", "NVIDIA", [{**A10, "quantity": 2}])
    client.force_login(staff)
    fig = _capacity_figure(client, "gpu-a10")
    assert _panel_titles(fig) == ["memory (MiB)", "cores (%)", "slots"]
    assert next(t for t in fig["data"] if t["name"] == "free")["x"] == ["GPU 0", "GPU 1"]


def test_amd_cores_are_compute_units(client, staff):
    _group(
        "mi300", "AMD", [{"type": "AMD MI300X", "devmem": 196608, "devcore": 304, "count": 4, "quantity": 1}]
    )
    client.force_login(staff)
    assert _panel_titles(_capacity_figure(client, "mi300")) == ["memory (MiB)", "compute units", "slots"]

"""YAML import/export: round trip, and an invalid file that names the bad entry and changes nothing."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from hami_sim.project import safeyaml

pytestmark = [pytest.mark.django_db]
DEMO = Path(__file__).resolve().parents[2] / "demo" / "profiles.yaml"


def export() -> str:
    out = StringIO()
    call_command("export_profiles", stdout=out)
    return out.getvalue()


def snapshot() -> list:
    from profiles.models import DeviceProfile, DeviceRow, NodeGroup

    return [
        list(NodeGroup.objects.order_by("name").values()),
        list(
            DeviceProfile.objects.order_by("id").values(
                "node_group__name", "vendor", "pair_scores", "version"
            )
        ),
        list(DeviceRow.objects.order_by("id").values()),
    ]


def test_round_trip_through_a_file(tmp_path):
    from profiles.models import NodeGroup

    call_command("import_profiles", str(DEMO), stdout=StringIO())
    first = export()
    data = yaml.safe_load(first)
    assert [g["name"] for g in data["node_groups"]] == ["gpu-a10", "gpu-h100", "gpu-l4"]
    assert data["node_groups"][1]["instance_type"] == "p5.48xlarge"
    assert sum(r["quantity"] for r in data["node_groups"][1]["profiles"][0]["devices"]) == 8
    path = tmp_path / "export.yaml"
    call_command("export_profiles", "-o", str(path))
    NodeGroup.objects.all().delete()
    call_command("import_profiles", str(path), stdout=StringIO())
    assert export() == first
    # importing the same file again changes nothing visible in the export (idempotent)
    call_command("import_profiles", str(path), stdout=StringIO())
    assert export() == first


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["node_groups"][1]["profiles"][0]["devices"][1].update(devmem=-5),
            "node_groups[1] (gpu-h100): profiles[0].devices[1].devmem: devmem must be a positive number of MiB, got -5",
        ),
        (
            lambda d: d["node_groups"][0]["profiles"][0]["devices"][0].update(count=0),
            "node_groups[0] (gpu-a10): profiles[0].devices[0].count: count (split count) must be at least 1, got 0",
        ),
        (
            lambda d: d["node_groups"][2].update(match_labels=d["node_groups"][0]["match_labels"]),
            "node_groups[2] (gpu-l4): match_labels",
        ),
        (
            lambda d: d["node_groups"][2].update(inventory_source="bogus"),
            "node_groups[2] (gpu-l4): inventory_source",
        ),
        (
            lambda d: d["node_groups"][2].update(colour="blue"),
            "node_groups[2] (gpu-l4): unknown fields colour",
        ),
        (
            lambda d: d["node_groups"].append(dict(d["node_groups"][0])),
            "node_groups[3] (gpu-a10): node group listed twice",
        ),
    ],
)
def test_invalid_file_names_the_entry_and_changes_nothing(tmp_path, mutate, message):
    call_command("import_profiles", str(DEMO), stdout=StringIO())
    data = yaml.safe_load(DEMO.read_text())
    data["node_groups"][0]["description"] = "edited"  # a valid change that must not land either
    mutate(data)
    path = tmp_path / "bad.yaml"
    path.write_text(safeyaml.dump(data))  # plain YAML: the importer refuses aliases
    before = snapshot()
    with pytest.raises(CommandError) as raised:
        call_command("import_profiles", str(path), stdout=StringIO())
    assert message in str(raised.value) and "nothing was changed" in str(raised.value)
    assert snapshot() == before


def test_not_yaml_and_missing_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("node_groups: [")
    with pytest.raises(CommandError, match="not valid YAML"):
        call_command("import_profiles", str(path))
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_profiles", str(tmp_path / "missing.yaml"))

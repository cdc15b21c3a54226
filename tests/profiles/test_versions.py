"""``DeviceProfile.version`` counts edits a user made: 1 when created, +1 per changing edit, 0 for no-ops."""

from __future__ import annotations

from io import StringIO

import pytest
import yaml
from django.core.management import call_command

from tests.factories.models import NodeGroupFactory

from .conftest import A10

pytestmark = [pytest.mark.django_db]


def _file(tmp_path, devmem: int = 23028, notes: str = "", quantity: int = 1) -> str:
    row = {**A10, "devmem": devmem, "quantity": quantity}
    data = {
        "apiVersion": "hami-sim/v1",
        "kind": "NodeGroupList",
        "node_groups": [
            {
                "name": "gpu-a10",
                "match_labels": {"eks.amazonaws.com/nodegroup": "gpu-a10"},
                "profiles": [{"vendor": "NVIDIA", "notes": notes, "devices": [row]}],
            }
        ],
    }
    path = tmp_path / f"profiles-{devmem}-{quantity}-{len(notes)}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _version() -> int:
    from profiles.models import DeviceProfile

    return DeviceProfile.objects.get(node_group__name="gpu-a10").version


def _import(path: str) -> None:
    call_command("import_profiles", path, stdout=StringIO())


def test_imported_profile_is_version_1_and_reimport_keeps_it(tmp_path):
    path = _file(tmp_path)
    _import(path)
    assert _version() == 1
    _import(path)
    _import(path)
    assert _version() == 1


def test_each_changed_import_bumps_by_exactly_one(tmp_path):
    _import(_file(tmp_path))
    _import(_file(tmp_path, devmem=22000))
    assert _version() == 2
    _import(_file(tmp_path, devmem=22000, quantity=2, notes="two cards now"))  # rows and notes: one edit
    assert _version() == 3
    _import(_file(tmp_path, devmem=22000, quantity=2, notes="two cards now"))
    assert _version() == 3


def test_api_create_is_version_1_and_each_update_one_more(token_client, db):
    NodeGroupFactory(name="gpu-a10")
    created = token_client.post(
        "/api/v1/device-profiles/",
        {"node_group": "gpu-a10", "devices": [{**A10, "quantity": 4}]},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["version"] == 1
    url = f"/api/v1/device-profiles/{created.json()['id']}/"
    body = token_client.patch(url, {"notes": "x", "devices": [{**A10, "quantity": 2}]}, format="json").json()
    assert body["version"] == 2
    assert token_client.patch(url, {"notes": "x"}, format="json").json()["version"] == 2  # no change
    assert token_client.patch(url, {"notes": "y"}, format="json").json()["version"] == 3


def test_a_lone_row_edit_is_one_version(db):
    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    profile = group.profiles.get()
    assert profile.version == 1
    row = profile.devices.get()
    row.quantity = 2
    row.save()
    profile.refresh_from_db()
    assert profile.version == 2 and profile.devices_snapshot[0]["quantity"] == 2

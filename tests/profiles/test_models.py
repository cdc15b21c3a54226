"""Models and rendering on PostgreSQL: the registration a profile renders, validation, versions."""

from __future__ import annotations

import orjson
import pytest
from django.core.exceptions import ValidationError

from tests.factories.models import NodeGroupFactory

from .conftest import A10

pytestmark = [pytest.mark.django_db]


def test_rendered_annotation_is_what_the_device_plugin_writes(db):
    from hami_sim.engine.annotations import decode_device_json
    from profiles.render import placeholder_uuid, render_annotations

    value = render_annotations("gpu-a10", "NVIDIA", [{**A10, "quantity": 2}])["hami.io/node-nvidia-register"]
    first = placeholder_uuid("gpu-a10", "NVIDIA", 0)
    second = placeholder_uuid("gpu-a10", "NVIDIA", 1)
    # Go field order, omitempty (index 0 and numa 0 are omitted), health true
    assert value == (
        f'[{{"id":"{first}","count":10,"devmem":23028,"devcore":100,"type":"NVIDIA A10G","mode":"hami-core","health":true}},'
        f'{{"id":"{second}","index":1,"count":10,"devmem":23028,"devcore":100,"type":"NVIDIA A10G","mode":"hami-core","health":true}}]'
    )
    assert first.startswith("GPU-") and first == placeholder_uuid("gpu-a10", "NVIDIA", 0)
    assert first != placeholder_uuid("gpu-a100", "NVIDIA", 0)
    assert [d.index for d in decode_device_json(value)] == [0, 1]


def test_mig_rows_and_pair_scores_render_through_the_engine_codecs():
    from profiles.render import render_annotations

    mig = [
        {
            "name": "1g.10gb",
            "memoryMB": 9856,
            "core": 14,
            "sliceCount": 1,
            "placements": [{"start": 0, "size": 1}],
        }
    ]
    row = {
        **A10,
        "type": "NVIDIA A100-SXM4-80GB",
        "devmem": 81920,
        "count": 7,
        "mode": "mig",
        "mig_profiles": mig,
        "quantity": 2,
    }
    out = render_annotations("g", "NVIDIA", [row], {"0": {"1": 100}, "1": {"0": 100}})
    devices = orjson.loads(out["hami.io/node-nvidia-register"])
    assert devices[0]["migProfiles"] == mig
    scores = orjson.loads(out["hami.io/node-nvidia-score"])
    assert scores[0]["score"] == {devices[1]["id"]: 100}


def test_group_validation_names_the_field(db):
    from profiles.models import NodeGroup

    NodeGroupFactory(name="a", match_labels={"pool": "gpu"})
    with pytest.raises(ValidationError) as raised:
        NodeGroup(name="b", match_labels={"pool": "gpu"}).full_clean()
    assert "match_labels" in raised.value.message_dict
    with pytest.raises(ValidationError) as raised:
        NodeGroup(name="c", match_labels={"pool": 1}).full_clean()
    assert raised.value.message_dict["match_labels"] == [
        "match_labels must be an object of string keys to string values"
    ]
    with pytest.raises(ValidationError) as raised:
        NodeGroup(name="d", min_size=3, max_size=1).full_clean()
    assert raised.value.message_dict["min_size"] == ["min_size 3 is larger than max_size 1"]


def test_row_edits_bump_version_generation_and_history(db):
    from profiles.models import CatalogVersion
    from profiles.services import set_rows

    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    profile = group.profiles.get()
    version, generation = profile.version, CatalogVersion.objects.get().generation
    history = profile.history.count()
    set_rows(profile, [{**A10, "quantity": 2}])
    profile.refresh_from_db()
    assert profile.version > version
    assert CatalogVersion.objects.get().generation > generation
    assert profile.history.count() > history
    assert profile.history.first().devices_snapshot[0]["quantity"] == 2
    set_rows(profile, profile.rows_data())  # no change: no new history entry
    assert profile.history.count() == history + 1


def test_rows_from_devices_collapses_identical_cards():
    from hami_sim.engine.model import DeviceInfo
    from profiles.render import rows_from_devices

    devices = [
        DeviceInfo(f"GPU-{i}", index=i, count=10, devmem=23028, devcore=100, type="NVIDIA A10G", numa=i // 2)
        for i in range(4)
    ]
    rows = rows_from_devices(devices)
    assert [(r["numa"], r["quantity"]) for r in rows] == [(0, 2), (1, 2)]

"""The operator's admin: forms posted for real (valid and invalid), revert, the inventory action."""

from __future__ import annotations

import orjson
import pytest
from django.urls import reverse

from tests.factories.models import NodeGroupFactory

from .conftest import A10, H100

pytestmark = [pytest.mark.django_db]


def group_form(**overrides) -> dict:
    data = {
        "name": "gpu-h100",
        "description": "",
        "provider": "aws",
        "machine_type": "p5.48xlarge",
        "min_size": "0",
        "max_size": "4",
        "match_labels": '{"eks.amazonaws.com/nodegroup": "gpu-h100"}',
        "inventory_source": "annotation-first",
        "labels": "{}",
        "taints": "[]",
        "capacity": '{"cpu": "192", "memory": "2048Gi", "pods": "110"}',
    }
    data.update(overrides)
    return data


def profile_form(group_id: int, rows: list[dict], initial: list[int] | None = None, **overrides) -> dict:
    data = {
        "node_group": str(group_id),
        "vendor": "NVIDIA",
        "pair_scores": "{}",
        "notes": "",
        "devices-TOTAL_FORMS": str(len(rows)),
        "devices-INITIAL_FORMS": str(len(initial or [])),
        "devices-MIN_NUM_FORMS": "1",
        "devices-MAX_NUM_FORMS": "1000",
    }
    for i, row in enumerate(rows):
        if initial and i < len(initial):
            data[f"devices-{i}-id"] = str(initial[i])
        for key, value in {"position": i, **row}.items():
            data[f"devices-{i}-{key}"] = orjson.dumps(value).decode() if key == "mig_profiles" else str(value)
    data.update(overrides)
    return data


def test_add_node_group_valid_and_duplicate_labels(admin_client, db):
    from profiles.models import NodeGroup

    url = reverse("admin:profiles_nodegroup_add")
    response = admin_client.post(url, group_form())
    assert response.status_code == 302, response.content.decode()[:2000]
    assert NodeGroup.objects.get(name="gpu-h100").machine_type == "p5.48xlarge"
    response = admin_client.post(url, group_form(name="gpu-h100-copy"))
    assert response.status_code == 200
    assert "match_labels are the same as node group &#x27;gpu-h100&#x27;" in response.content.decode()
    response = admin_client.post(
        url, group_form(name="other", match_labels='{"a": 1}', min_size="9", max_size="2")
    )
    assert "match_labels must be an object of string keys to string values" in response.content.decode()
    assert NodeGroup.objects.count() == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({**A10, "devmem": -1}, "devmem must be a positive number of MiB, got -1"),
        ({**A10, "count": 0}, "count (split count) must be at least 1, got 0"),
        (
            {
                **A10,
                "mode": "mig",
                "mig_profiles": [{"name": "7g.80gb", "memoryMB": 81920, "core": 100, "sliceCount": 7}],
            },
            "MIG profile 7g.80gb has memoryMB 81920, larger than the card&#x27;s devmem 23028",
        ),
        ({**A10, "mode": "turbo"}, "mode must be one of hami-core, mig, mps"),
    ],
)
def test_profile_with_invalid_row_is_rejected_with_a_named_message(admin_client, db, row, message):
    from profiles.models import DeviceProfile

    group = NodeGroupFactory(name="gpu-a10")
    response = admin_client.post(
        reverse("admin:profiles_deviceprofile_add"), profile_form(group.pk, [{**row, "quantity": 1}])
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert DeviceProfile.objects.count() == 0


def test_profile_needs_a_row_and_valid_profile_renders_its_annotation(admin_client, db):
    from profiles.models import DeviceProfile

    group = NodeGroupFactory(name="gpu-a10")
    url = reverse("admin:profiles_deviceprofile_add")
    response = admin_client.post(url, profile_form(group.pk, [], **{"devices-MIN_NUM_FORMS": "0"}))
    assert "a device profile needs at least one device row" in response.content.decode()
    response = admin_client.post(url, profile_form(group.pk, [{**A10, "quantity": 4}]))
    assert response.status_code == 302
    profile = DeviceProfile.objects.get()
    page = admin_client.get(
        reverse("admin:profiles_deviceprofile_change", args=[profile.pk])
    ).content.decode()
    assert "Rendered hami.io/node-nvidia-register" in page
    assert "&quot;devmem&quot;:23028" in page or '"devmem":23028' in page
    listing = admin_client.get(reverse("admin:profiles_nodegroup_changelist")).content.decode()
    assert "4 x NVIDIA A10G 23028 MiB" in listing


def test_history_revert_restores_the_device_rows(admin_client, db):
    from profiles.models import DeviceProfile

    group = NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])
    profile = DeviceProfile.objects.get(node_group=group)
    first = profile.history.order_by("history_date").last()  # the entry holding the 8-card rows
    assert first.devices_snapshot[0]["quantity"] == 8
    row_id = profile.devices.get().pk
    response = admin_client.post(
        reverse("admin:profiles_deviceprofile_change", args=[profile.pk]),
        profile_form(group.pk, [{**H100, "quantity": 2}], initial=[row_id]),
    )
    assert response.status_code == 302
    assert profile.devices.get().quantity == 2
    history_url = reverse("admin:profiles_deviceprofile_simple_history", args=[profile.pk, first.history_id])
    assert admin_client.get(history_url).status_code == 200
    response = admin_client.post(
        history_url, {"node_group": str(group.pk), "vendor": "NVIDIA", "pair_scores": "{}", "notes": ""}
    )
    assert response.status_code == 302
    assert [r["quantity"] for r in DeviceProfile.objects.get().rows_data()] == [8]
    # and the extender sees the restored profile at once
    from hami_sim.runtime.simulator import get_simulator
    from profiles.inventory import resolve

    tmpl = {"metadata": {"name": "template-node-for-gpu-h100-1", "labels": {}, "annotations": {}}}
    assert len(resolve(tmpl, get_simulator()).devices) == 8


def test_create_profile_from_a_nodes_inventory_and_drift_column(admin_client, db):
    from profiles.models import DeviceProfile, NodeInventory
    from profiles.sync import sync_nodes
    from tests.factories import gpu, node

    NodeGroupFactory(name="gpu-l4")
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 2}])
    labels = {"eks.amazonaws.com/nodegroup": "gpu-l4"}
    l4 = node(
        "l4-1", [gpu(f"GPU-{i}", index=i, type="NVIDIA L4", devmem=22491) for i in range(2)], labels=labels
    )
    sick = node(
        "a10-1",
        [gpu("GPU-a", type="NVIDIA A10G"), gpu("GPU-b", index=1, type="NVIDIA A10G", health=False)],
        labels={"eks.amazonaws.com/nodegroup": "gpu-a10"},
    )
    sync_nodes([l4, sick])
    changelist = reverse("admin:profiles_nodeinventory_changelist")
    page = admin_client.get(changelist).content.decode()
    assert "1 open" in page  # the drift column of the sick node
    inv = NodeInventory.objects.get(name="l4-1")
    response = admin_client.post(
        changelist,
        {"action": "create_profile_from_inventory", "_selected_action": [str(inv.pk)]},
        follow=True,
    )
    assert "created the profile of node group gpu-l4" in response.content.decode()
    profile = DeviceProfile.objects.get(node_group__name="gpu-l4")
    assert profile.rows_data() == [
        {
            "type": "NVIDIA L4",
            "devmem": 22491,
            "devcore": 100,
            "count": 10,
            "numa": 0,
            "mode": "hami-core",
            "mig_profiles": [],
            "quantity": 2,
        }
    ]
    # a group that already has a profile is not overwritten
    response = admin_client.post(
        changelist,
        {
            "action": "create_profile_from_inventory",
            "_selected_action": [str(NodeInventory.objects.get(name="a10-1").pk)],
        },
        follow=True,
    )
    assert "already has a profile" in response.content.decode()
    assert DeviceProfile.objects.get(node_group__name="gpu-a10").rows_data()[0]["quantity"] == 2


def test_admin_needs_login(client):
    response = client.get(reverse("admin:profiles_nodegroup_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_findings_and_task_runs_are_listed_for_operators(admin_client, db):
    from profiles.sync import sync_nodes
    from tests.factories import gpu, node

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 1}])
    sync_nodes(
        [
            node(
                "a10-1",
                [gpu("GPU-a", type="NVIDIA A10G", devmem=16000)],
                labels={"eks.amazonaws.com/nodegroup": "gpu-a10"},
            )
        ]
    )
    page = admin_client.get(
        reverse("admin:profiles_driftfinding_changelist") + "?open=yes&kind__exact=mismatch"
    ).content.decode()
    assert "a10-1" in page and "devmem" in page and "23028 MiB" in page and "16000 MiB" in page
    assert (
        "a10-1"
        not in admin_client.get(
            reverse("admin:profiles_driftfinding_changelist") + "?open=no"
        ).content.decode()
    )
    from profiles.tasks import check_drift

    check_drift.apply()
    runs = admin_client.get(reverse("admin:runtime_taskrun_changelist")).content.decode()
    assert "check_drift" in runs and "success" in runs
    groups = admin_client.get(reverse("admin:profiles_nodegroup_changelist") + "?q=a10").content.decode()
    assert "1 open" in groups

"""Simulation with node-group profiles: cold-zero templates, inventory_source rules, caching."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import extender_args, gpu, node, pod
from tests.factories.models import NodeGroupFactory

from .conftest import A10, H100

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def cold(name: str, labels: dict | None = None) -> dict:
    tmpl = node(name, labels=labels)
    tmpl["metadata"]["annotations"] = {}
    return tmpl


def ask(client, pod_obj: dict, nodes: list[dict]) -> dict:
    response = client.post(
        "/filter-simulation", extender_args(pod_obj, nodes), content_type="application/json"
    )
    assert response.status_code == 200
    return orjson.loads(response.content)


def fitting(answer: dict) -> list[str]:
    return [n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items", [])]


def test_cold_zero_template_gets_exact_verdicts_from_its_profile(client, db):
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])
    tmpl = cold("template-node-for-gpu-h100-5577006791947779410")
    answer = ask(client, pod(gpumem=80000), [tmpl])
    assert fitting(answer) == ["template-node-for-gpu-h100-5577006791947779410"]
    assert answer["Nodes"]["items"][0] == tmpl  # echoed unchanged
    # 9 whole cards on an 8-card node: HAMi's own reason, from the profile's devices
    answer = ask(client, pod(gpu_count=9), [tmpl])
    assert answer["FailedNodes"] == {
        "template-node-for-gpu-h100-5577006791947779410": "NodeInsufficientDevice"
    }
    answer = ask(client, pod(gpumem=90000), [tmpl])
    assert answer["FailedNodes"] == {
        "template-node-for-gpu-h100-5577006791947779410": "8/8 CardInsufficientMemory"
    }


def test_estimator_copies_and_label_matching_find_the_group(client, db):
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 2}])
    by_copy = cold("template-node-for-gpu-h100-42-e-3")
    by_labels = cold("some-fake-node", labels={"eks.amazonaws.com/nodegroup": "gpu-h100", "zone": "a"})
    answer = ask(client, pod(gpumem=70000, gpu_count=2), [by_copy, by_labels])
    assert fitting(answer) == ["template-node-for-gpu-h100-42-e-3", "some-fake-node"]


def test_group_without_profile_and_unknown_nodes(client, db):
    NodeGroupFactory(name="gpu-l4")
    answer = ask(client, pod(), [cold("template-node-for-gpu-l4-7"), cold("template-node-for-nope-1")])
    assert answer["FailedAndUnresolvableNodes"] == {
        "template-node-for-gpu-l4-7": "no device profile for node group gpu-l4",
        "template-node-for-nope-1": "node unregistered",
    }


def test_annotation_first_warm_template_uses_its_own_annotation(client, db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    warm = node("template-node-for-gpu-a10-9", [gpu("GPU-x", devmem=10000)])
    answer = ask(client, pod(gpumem=20000), [warm])
    assert answer["FailedNodes"] == {"template-node-for-gpu-a10-9": "1/1 CardInsufficientMemory"}


def test_malformed_annotation_is_reported_not_replaced_by_the_profile(client, db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    bad = node(
        "template-node-for-gpu-a10-9",
        annotations={"hami.io/node-nvidia-register": "GPU-0,10,23028,100,A10,0,true:"},
    )
    answer = ask(client, pod(), [bad])
    reason = answer["FailedAndUnresolvableNodes"]["template-node-for-gpu-a10-9"]
    assert reason.startswith("malformed hami.io/node-nvidia-register: ")


def test_profile_only_ignores_a_sampled_node_with_a_failed_gpu(client, db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}], inventory_source="profile-only")
    sampled = node(
        "template-node-for-gpu-a10-1",
        [gpu(f"GPU-{i}", index=i, devmem=23028, health=(i != 0)) for i in range(4)],
    )
    answer = ask(client, pod(gpu_count=4, gpumem=20000), [sampled])
    assert fitting(answer) == ["template-node-for-gpu-a10-1"]


def test_profile_only_without_profile_and_annotation_only(client, db):
    NodeGroupFactory(name="p-only", inventory_source="profile-only")
    NodeGroupFactory(name="a-only", rows=[{**A10, "quantity": 4}], inventory_source="annotation-only")
    warm = node("template-node-for-p-only-1", [gpu("GPU-0")])
    answer = ask(client, pod(), [warm, cold("template-node-for-a-only-1")])
    assert answer["FailedAndUnresolvableNodes"] == {
        "template-node-for-p-only-1": "no device profile for node group p-only",
        "template-node-for-a-only-1": "node unregistered",
    }


def test_saving_a_profile_changes_the_next_answer(client, db):
    from profiles.services import set_rows

    group = NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 1}])
    tmpl = cold("template-node-for-gpu-h100-1")
    assert ask(client, pod(gpu_count=2), [tmpl])["FailedNodes"] == {
        "template-node-for-gpu-h100-1": "NodeInsufficientDevice"
    }
    profile = group.profiles.get()
    set_rows(profile, [{**H100, "quantity": 2}])
    assert fitting(ask(client, pod(gpu_count=2), [tmpl])) == ["template-node-for-gpu-h100-1"]


def test_other_processes_see_edits_through_the_generation_counter(db, settings):
    """A profile saved by another replica (only the generation moved here) is picked up after the interval."""
    from hami_sim.runtime.simulator import get_simulator
    from profiles import inventory
    from profiles.models import CatalogVersion, DeviceProfile, DeviceRow

    settings.PROFILE_CACHE_CHECK_SECONDS = 0
    group = NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 1}])
    sim = get_simulator()
    tmpl = cold("template-node-for-gpu-h100-1")
    assert len(sim.inventory(tmpl).devices) == 1
    # Another process edits the rows: bypass this process's signals with a queryset update.
    DeviceRow.objects.filter(profile__node_group=group).update(quantity=3)
    DeviceProfile.objects.filter(node_group=group).update(version=99)
    settings.PROFILE_CACHE_CHECK_SECONDS = 3600
    inventory.catalog.next_check = float("-inf")  # the next use checks the generation once more
    assert len(sim.inventory(tmpl).devices) == 1  # generation unchanged: the cached profile stays
    CatalogVersion.objects.filter(pk=1).update(generation=12345)
    assert len(sim.inventory(tmpl).devices) == 1  # within the interval: no database read at all
    inventory.catalog.next_check = float("-inf")  # the interval has passed
    assert len(sim.inventory(tmpl).devices) == 3
    assert inventory.catalog.generation == 12345


def test_resolver_does_not_query_per_node(client, db, django_assert_max_num_queries, settings):
    settings.PROFILE_CACHE_CHECK_SECONDS = 3600
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    nodes = [cold(f"template-node-for-gpu-h100-{i}") for i in range(50)] + [
        cold(f"n{i}", labels={"eks.amazonaws.com/nodegroup": "gpu-a10"}) for i in range(50)
    ]
    ask(client, pod(), nodes[:1])  # warm the catalog
    with django_assert_max_num_queries(0):
        from hami_sim.runtime.simulator import get_simulator
        from profiles.inventory import resolve

        sim = get_simulator()
        for n in nodes:
            assert resolve(n, sim).source == "profile"


def test_inventory_key_distinguishes_profiles(db):
    from hami_sim.runtime.simulator import get_simulator
    from profiles.inventory import resolve

    NodeGroupFactory(name="g1", rows=[{**H100, "quantity": 1}])
    NodeGroupFactory(name="g2", rows=[{**H100, "quantity": 2}])
    NodeGroupFactory(name="g3", rows=[{**H100, "quantity": 1}])
    sim = get_simulator()
    k1 = resolve(cold("template-node-for-g1-1"), sim)
    k2 = resolve(cold("template-node-for-g2-1"), sim)
    k3 = resolve(cold("template-node-for-g3-1"), sim)
    assert k1.key != k2.key
    assert (k1.node_group, k2.node_group, k3.node_group) == ("g1", "g2", "g3")
    assert len({k1.devices[0].id, k3.devices[0].id}) == 2  # placeholder UUIDs are per group


@pytest.mark.django_db(transaction=True)
def test_database_down_still_answers_warm_templates(db, settings):
    from django.db import connection

    from hami_sim.runtime.simulator import get_simulator
    from profiles.inventory import reset, resolve

    if connection.vendor != "postgresql":
        pytest.skip("needs a server database to take away (SQLite test databases live in memory)")
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    sim = get_simulator()
    warm = node("template-node-for-gpu-a10-1", [gpu("GPU-0")])
    reset()
    connection.close()
    saved = dict(connection.settings_dict)
    try:
        connection.settings_dict["PORT"] = 1  # nothing listens there: a real connection failure
        inv = resolve(warm, sim)
        assert inv.source == "annotation" and len(inv.devices) == 1 and not inv.error
        assert resolve(cold("template-node-for-gpu-a10-2"), sim).error == "node unregistered"
    finally:
        connection.close()
        connection.settings_dict.update(saved)
        reset()

"""Node-group device profiles under each HAMi release (``HAMI_VERSION``): an AMD group judged by its
release's rules, and every vendor's profile rendered as its release's backend reads it.

The profile describes two MI300X cards (192 GiB, 304 compute units, 10 slots each). v2.10's AMD
backend shares them as vGPU slices (``hami.io/node-amd-register``); v2.9's and v2.8's counted whole
cards in ``status.capacity["amd.com/gpu"]``, each a 192000 MiB MI300X taking one pod, and read
neither memory nor cores. Under 2.9 and 2.8 the group's template is therefore two whole cards (not
its 20 v2.10 slots), and a cold CA template of the group is judged by those whole-card rules.
"""

from __future__ import annotations

import orjson
import pytest

from tests.factories.models import DeviceProfileFactory, NodeGroupFactory

pytestmark = [pytest.mark.api, pytest.mark.django_db]

ROWS = [{"type": "AMD MI300X", "devmem": 196608, "devcore": 304, "quantity": 2}]
GROUP = "amd-pool"


def _pod(name: str, **limits) -> dict:
    resources = {"limits": {k: str(v) for k, v in limits.items()}}
    return {
        "metadata": {"name": name, "namespace": "default", "annotations": {}},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]},
    }


def _cold() -> dict:
    """CA's scale-from-zero template of the group: no registration, no device capacity."""
    name = f"template-node-for-{GROUP}-5577006791947779410"
    cap = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "annotations": {}},
        "status": {"capacity": cap, "allocatable": cap},
    }


@pytest.fixture
def amd_group(db):
    from profiles.api.serializers import complete_rows

    group = NodeGroupFactory(name=GROUP, match_labels={"pool": "amd"})
    DeviceProfileFactory(node_group=group, vendor="AMD", rows=complete_rows("AMD", ROWS))
    return group


# (release, pod limits, fits, reason when not)
CASES = [
    # two whole cards: two fit, three do not (HAMi counts the node's devices first)
    ("2.9", {"amd.com/gpu": 2}, True, ""),
    ("2.9", {"amd.com/gpu": 3}, False, "NodeInsufficientDevice"),
    ("2.8", {"amd.com/gpu": 2}, True, ""),
    ("2.8", {"amd.com/gpu": 3}, False, "NodeInsufficientDevice"),
    # memory and cores are not read before v2.10: a card is whole whatever they say
    ("2.9", {"amd.com/gpu": 1, "amd.com/gpumem": 300000}, True, ""),
    ("2.8", {"amd.com/gpu": 1, "amd.com/gpucores": 50}, True, ""),
    # v2.10 reads the slice: more memory than a card holds fails
    ("2.10", {"amd.com/gpu": 2}, True, ""),
    ("2.10", {"amd.com/gpu": 1, "amd.com/gpumem": 300000}, False, "2/2 CardInsufficientMemory"),
    ("2.10", {"amd.com/gpu": 3}, False, "NodeInsufficientDevice"),
]


@pytest.mark.parametrize(("release", "limits", "fits", "reason"), CASES)
def test_a_cold_amd_group_is_judged_by_its_release(
    client, settings, amd_group, release, limits, fits, reason
):
    settings.HAMI_VERSION = release
    settings.PROFILE_CACHE_CHECK_SECONDS = 0
    template = _cold()
    body = orjson.dumps({"Pod": _pod("p", **limits), "Nodes": {"metadata": {}, "items": [template]}})
    answer = orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)
    assert answer["Error"] == ""
    name = template["metadata"]["name"]
    if fits:
        assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == [name]
    else:
        assert answer["FailedNodes"] == {name: reason}


@pytest.mark.parametrize(
    ("release", "capacity", "registered"),
    [("2.8", "2", False), ("2.9", "2", False), ("2.10", "20", True)],
)
def test_the_group_template_registers_amd_as_its_release_does(
    client, settings, amd_group, release, capacity, registered
):
    """Before v2.10 AMD's device plugin advertises whole cards and writes no HAMi registration."""
    settings.HAMI_VERSION = release
    template = client.get(f"/api/v1/node-groups/{GROUP}/template").json()
    assert template["status"]["capacity"]["amd.com/gpu"] == capacity
    assert ("hami.io/node-amd-register" in template["metadata"]["annotations"]) is registered


# ---- every vendor's profile under every release -------------------------------------------------
#: the backends a release lacks: their registration is rendered and no backend of the release reads it
ABSENT = {"2.8": {"Biren", "Vastai", "Ascend910C"}, "2.9": {"Biren"}, "2.10": set()}


@pytest.mark.parametrize("release", ["2.8", "2.9", "2.10"])
def test_every_vendors_profile_renders_a_template_its_release_reads(settings, release):
    """A release may swap a profile's backend (AMD's whole cards, Enflame's shared GCUs before v2.10)
    or lack it; the group's template still renders and holds the release's devices."""
    from hami_sim.runtime.simulator import get_simulator
    from profiles.api.serializers import complete_rows
    from profiles.render import template_node
    from tests.profiles.test_vendor_profiles import PROFILES

    settings.HAMI_VERSION = release
    for vendor, rows in sorted(PROFILES.items()):
        node = template_node(
            "g", match_labels={"pool": "x"}, profiles=[(vendor, complete_rows(vendor, rows), {})]
        )
        devices = get_simulator().annotation_inventory(node).devices
        assert bool(devices) is (vendor not in ABSENT[release]), (vendor, release)


def test_an_enflame_drs_profile_is_shared_gcus_before_v2_10(settings):
    """Before v2.10 the Enflame vGCU backend shared whole GCUs counted in ``enflame.com/gcu-count``."""
    from hami_sim.runtime.simulator import get_simulator
    from profiles.api.serializers import complete_rows
    from profiles.render import template_node
    from tests.profiles.test_vendor_profiles import PROFILES

    settings.HAMI_VERSION = "2.9"
    rows = complete_rows("Enflame", PROFILES["Enflame"])
    node = template_node("g", match_labels={"pool": "x"}, profiles=[("Enflame", rows, {})])
    assert node["status"]["capacity"]["enflame.com/gcu-count"] == "2"
    assert "enflame.com/gcu-drs-capacity" not in node["metadata"]["annotations"]
    devices = get_simulator().annotation_inventory(node).devices
    assert [(d.device_vendor, d.count, d.devmem) for d in devices] == [("Enflame", 100, 100)] * 2

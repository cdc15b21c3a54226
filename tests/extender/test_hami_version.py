"""``/filter-simulation`` answers by the device rules of the HAMi release ``HAMI_VERSION`` names.

The pod that shows it: an init container asking a whole A10 (23028 MiB) and a main container asking
10000 MiB. HAMi v2.10.0 runs the init container alone first (#1773), so one card holds the pod;
v2.9.0 fits the init and main containers one after the other on the same cards, so a one-card node
fails it; v2.8.3 never reads init containers.
"""

from __future__ import annotations

import orjson
import pytest

from tests.factories import container, extender_args, gpu_node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]

BIG_INIT = pod("big-init", containers=[container(gpumem=10000)], init=[container("init")])


@pytest.mark.parametrize(
    ("version", "failed"),
    [
        ("2.10", {}),
        ("v2.10.0", {}),
        ("2.9", {"one-a10": "1/1 CardInsufficientMemory"}),
        ("2.8", {}),
    ],
)
def test_an_init_container_larger_than_the_main_one_on_a_full_card(client, settings, version, failed):
    settings.HAMI_VERSION = version
    nodes = [gpu_node("one-a10", 1), gpu_node("two-a10", 2)]
    body = extender_args(BIG_INIT, nodes)
    answer = orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)
    assert answer["Error"] == ""
    assert (answer["FailedNodes"] or {}) == failed
    fitting = [n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items", [])]
    assert fitting == [n for n in ("one-a10", "two-a10") if n not in failed]


def test_two_cards_hold_the_pod_under_v2_9(client, settings):
    """Under v2.9.0 the init container keeps one card whole and the main container takes the other."""
    settings.HAMI_VERSION = "2.9"
    body = extender_args(BIG_INIT, [gpu_node("two-a10", 2)])
    answer = orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["two-a10"]


def test_a_changed_release_takes_effect_at_the_next_answer(client, settings):
    """The process's simulator is rebuilt when ``HAMI_VERSION`` changes (``override_settings``)."""
    body = extender_args(BIG_INIT, [gpu_node("one-a10", 1)])

    def post() -> dict:
        return orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)

    assert post()["FailedNodes"] in (None, {})
    settings.HAMI_VERSION = "2.9"
    assert post()["FailedNodes"] == {"one-a10": "1/1 CardInsufficientMemory"}
    settings.HAMI_VERSION = "2.10"
    assert post()["FailedNodes"] in (None, {})

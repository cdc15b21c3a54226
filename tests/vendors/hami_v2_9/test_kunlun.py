"""HAMi v2.9.0 ``pkg/device/kunlun/device_test.go`` as data, under the v2.9 rules (the file is the
same at v2.8.3: ``hami_v2_8/test_kunlun.py`` runs these cases under v2.8's).

Ported: ``Test_graphSelect`` (9 cases, through the whole-card Fit), ``Test_graphSelectVXPU`` (6, through
the vXPU Fit) and ``Test_ScoreNode`` (2). The Go tables leave ``Health`` unset, so every device is
unhealthy: at v2.9.0 neither ``FitXPU`` nor ``FitVXPU`` read it (v2.10.0 skips such devices, #2260,
and its tables set ``Health: true``). The values are v2.10.0's tables' (``hami_v2_10/test_kunlun.py``),
the same at both tags but for the health.
"""

from __future__ import annotations

import pytest

from tests.vendors.hami_v2_10 import test_kunlun as v2_10
from tests.vendors.harness import cdev, for_release

GO = "pkg/device/kunlun/device_test.go"


def _cases(params, test: str) -> list:
    return [pytest.param(*p.values, id=f"{GO}::{p.id}") for p in params if p.id.startswith(f"{test}/")]


GRAPH_SELECT = _cases(v2_10.GRAPH_SELECT, "Test_graphSelect")
GRAPH_SELECT_VXPU = _cases(v2_10.GRAPH_SELECT_VXPU, "Test_graphSelectVXPU")
SCORE_NODE = [
    pytest.param([list(range(8))], (0, 1, 2, 3), 4, 3000, id=f"{GO}::Test_ScoreNode/Scenario 1"),
    pytest.param([[0]], (), 0, 0, id=f"{GO}::Test_ScoreNode/Scenario 2"),
]


def unhealthy(devices):
    for dev in devices:
        dev.health = False
    return devices


def check_graph_select(h, used, nums, want) -> None:
    outcome = h.fit(v2_10.CARDS, unhealthy(v2_10.board(*used)), (nums, v2_10.KUNLUN, 0, 100, 0))
    assert outcome.ok is bool(want)
    assert v2_10.indices(outcome) == want


def check_graph_select_vxpu(h, cards, nums, want) -> None:
    outcome = h.fit(v2_10.VXPU, unhealthy(v2_10.vboard(*cards)), (nums, v2_10.XPU, 24576, 0, 25))
    assert outcome.ok is bool(want)
    assert v2_10.indices(outcome) == want


def check_score_node(h, cur, prev, n, want) -> None:
    previous = unhealthy(v2_10.board(*prev))[:n]
    pod_devices = [[cdev(f"xpu-{i}", v2_10.KUNLUN, idx=i) for i in container] for container in cur]
    assert h.score_node(v2_10.CARDS, pod_devices, previous, "binpack") == want


h = for_release("2.9")


@pytest.mark.parametrize(("used", "nums", "want"), GRAPH_SELECT)
def test_graph_select(used, nums, want):
    check_graph_select(h, used, nums, want)


@pytest.mark.parametrize(("cards", "nums", "want"), GRAPH_SELECT_VXPU)
def test_graph_select_vxpu(cards, nums, want):
    check_graph_select_vxpu(h, cards, nums, want)


@pytest.mark.parametrize(("cur", "prev", "n", "want"), SCORE_NODE)
def test_score_node(cur, prev, n, want):
    check_score_node(h, cur, prev, n, want)


@pytest.mark.parametrize(
    ("vendor", "vtype", "slots", "request_", "annotations", "chosen"),
    [pytest.param(*p.values, id=f"{GO}@v2.10.0::{p.id}") for p in v2_10.UUID_CASES],
)
def test_v2_10_uuid_cases_are_not_read_under_v2_9(vendor, vtype, slots, request_, annotations, chosen):
    """v2.10.0's UUID-selection cases (added with #2577; v2.9.0 has none): v2.9.0's Kunlun Fit never
    reads the use/nouse lists, so each pod gets what it gets without them, never CardUuidMismatch."""
    h = for_release("2.9")
    board = v2_10.uuid_board(vtype, slots)
    with_lists = h.fit(vendor, board, request_, annotations)
    without = h.fit(vendor, v2_10.uuid_board(vtype, slots), request_, {})
    assert with_lists.ok and [d.uuid for d in with_lists.devices] == [d.uuid for d in without.devices]

"""HAMi v2.8.3 ``pkg/device/kunlun/device_test.go`` as data, under the v2.8 rules: the same file as
v2.9.0's, so the cases are ``hami_v2_9/test_kunlun.py``'s (devices unhealthy, as Go's zero
``Health``; v2.8.3 never read it either)."""

from __future__ import annotations

import pytest

from tests.vendors.hami_v2_9.test_kunlun import (
    GRAPH_SELECT,
    GRAPH_SELECT_VXPU,
    SCORE_NODE,
    check_graph_select,
    check_graph_select_vxpu,
    check_score_node,
)
from tests.vendors.harness import for_release

h = for_release("2.8")


@pytest.mark.parametrize(("used", "nums", "want"), GRAPH_SELECT)
def test_graph_select(used, nums, want):
    check_graph_select(h, used, nums, want)


@pytest.mark.parametrize(("cards", "nums", "want"), GRAPH_SELECT_VXPU)
def test_graph_select_vxpu(cards, nums, want):
    check_graph_select_vxpu(h, cards, nums, want)


@pytest.mark.parametrize(("cur", "prev", "n", "want"), SCORE_NODE)
def test_score_node(cur, prev, n, want):
    check_score_node(h, cur, prev, n, want)

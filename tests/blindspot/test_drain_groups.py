"""Which node groups get scale-down views: each node's pods are re-placed on the other nodes of its
group, so the cost grows with the square of a group's size. Groups are judged smallest first within a
budget of ``DRAIN_MAX_NODES ** 2`` node pairs per report, whatever the cluster's size."""

from __future__ import annotations

import pytest

from hami_sim.engine.blindspot import ViewNode


def _nodes(sizes: dict[str, int], upcoming: int = 0) -> list[ViewNode]:
    out = [ViewNode(f"{g}-{i}", {}, node_group=g) for g, n in sizes.items() for i in range(n)]
    out += [ViewNode(f"new-{i}", {}, node_group="a", upcoming=True) for i in range(upcoming)]
    return out


@pytest.mark.parametrize(
    ("sizes", "judged", "skipped"),
    [
        # budget 3 x 3 = 9 pairs: a (1) + b (2) = 5 pairs fit, c (3) would make 14
        ({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2}, ["c"]),
        # one group of the limit's size uses the whole budget
        ({"big": 3}, {"big": 3}, []),
        # a group larger than the limit is never judged; the small ones still are
        ({"huge": 4, "x": 1, "y": 1}, {"x": 1, "y": 1}, ["huge"]),
        # nodes in no group form one group of their own
        ({"": 2}, {"": 2}, []),
        ({"": 4}, {}, ["(no node group)"]),
    ],
)
def test_groups_within_the_pair_budget(monkeypatch, sizes, judged, skipped):
    from usage import blindspot

    monkeypatch.setattr(blindspot, "DRAIN_MAX_NODES", 3)
    groups, left_out = blindspot.drain_groups(_nodes(sizes, upcoming=2))
    assert {members[0].node_group: len(members) for members in groups} == judged
    assert left_out == skipped
    assert not any(v.upcoming for members in groups for v in members)  # CA's upcoming nodes: never

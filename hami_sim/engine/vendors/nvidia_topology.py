"""NVIDIA's topology-aware choice (HAMi v2.10.0 ``gpuSchedulerPolicy: topology-aware``): once the Fit
walk collected every fitting GPU, which of them the container gets, by the operator's pair scores
(``hami.io/node-nvidia-score``)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from ..model import ContainerDevice

__all__ = ["topology_pick"]

PairScores = Mapping[str, Mapping[str, int]]


def topology_pick(
    collected: list[ContainerDevice], origin: int, scores: PairScores, *, zero_scores: bool = True
) -> list[ContainerDevice]:
    """``origin`` devices of ``collected``: one device goes where it links least to the rest (the
    well-linked ones stay for larger requests); several take the best-linked subset. A missing score
    counts 0 (HAMi would crash). ``zero_scores`` off (before v2.10, ``HamiRules.topology_zero_scores``):
    only a subset scoring above 0 is taken, else none (the container then holds no GPU), and the one
    device is chosen with -1 as the "none yet" mark (``_least_linked``)."""
    if origin == 1:
        return [_least_linked(collected, scores, minus_one_unset=not zero_scores)]
    best_combo: tuple[ContainerDevice, ...] = tuple(collected[:origin])
    best_total: int | None = None
    for combo in combinations(collected, origin):
        total = sum(_pair(scores, a, b) for a, b in combinations(combo, 2))
        if best_total is None or total > best_total:
            best_combo, best_total = combo, total
    if not zero_scores and (best_total is None or best_total <= 0):
        return []
    return list(best_combo)


def _least_linked(
    collected: list[ContainerDevice], scores: PairScores, *, minus_one_unset: bool = False
) -> ContainerDevice:
    """The first device with the lowest summed score to every other collected device.

    ``minus_one_unset`` (v2.9.0 and v2.8.3 ``computeWorstSingleCard``): the lowest total so far starts
    at -1 and -1 means "none yet", so a device whose total is exactly -1, while it is the lowest so
    far, is replaced by the next device whatever that one's total. Only hand-written scores reach
    it: the device plugin's pair scores are never negative."""
    best, best_score = collected[0], None
    for dev in collected:
        total = sum(_pair(scores, dev, other) for other in collected if other is not dev)
        if best_score is None or (minus_one_unset and best_score == -1) or total < best_score:
            best, best_score = dev, total
    return best


def _pair(scores: PairScores, a: ContainerDevice, b: ContainerDevice) -> int:
    return scores.get(a.uuid, {}).get(b.uuid, 0)

"""The Kunlunxin 8-card board (HAMi v2.10.0 ``pkg/device/kunlun``): which cards a request of 1, 2,
4 or 8 takes (``graghSelect``: two 4-card wings 0-3 and 4-7, interconnect pairs and groups), and the
board's node score (``countbubble``/``calcscore``). Both ``kunlun.py`` backends place by it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..model import ContainerDevice, ContainerDeviceRequest, DeviceUsage

__all__ = ["FitFn", "graph_select", "kunlun_topology_score"]

INTER_GROUP = ((0, 4), (1, 5), (2, 6), (3, 7))
INTER_GROUP_4 = ((0, 1, 4, 5), (2, 3, 6, 7), (0, 2, 4, 6), (1, 3, 5, 7), (0, 3, 4, 7), (1, 2, 5, 6))
GROUP = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (4, 5), (4, 6), (4, 7), (5, 6), (5, 7), (6, 7))
#: the wing sizes a request tries, tightest first: an odd request fills a wing of 1, 3, 2, then 4 free
_ODD_ORDER = (1, 3, 2, 4)

#: whether a device can take the request (whole card: idle and healthy; vXPU: a slice of its size)
FitFn = Callable[[DeviceUsage, ContainerDeviceRequest], bool]


def graph_select(devices: list[DeviceUsage], request: ContainerDeviceRequest, fits: FitFn) -> list[int]:
    """``graghSelect``: device indices for the request on an 8-card board, or [] when none fit.

    Every device is asked ``fits`` once up front (the wings' free cards), as HAMi does."""
    count = request.nums
    left = sum(1 for i, d in enumerate(devices) if i < 4 and fits(d, request))
    right = sum(1 for i, d in enumerate(devices) if i >= 4 and fits(d, request))
    if count == 8:
        return list(range(8)) if left + right == count else []
    if count not in (1, 2, 4):
        return []
    if left >= count or right >= count:
        start = _tightest_wing(count, left, right)
        if start is not None:
            return _pick(devices, start, request, fits)
    return _interconnect(devices, request, fits)


def _tightest_wing(count: int, left: int, right: int) -> int | None:
    """The first index of the wing whose free cards match the request most tightly (left first)."""
    for slots in range(count, 5):
        num = _ODD_ORDER[slots - 1] if count % 2 == 1 else slots
        if left == num:
            return 0
        if right == num:
            return 4
    return None


def _interconnect(devices: list[DeviceUsage], request: ContainerDeviceRequest, fits: FitFn) -> list[int]:
    """HAMi's ``interconnect``: 2 cards on one interconnect pair, or 4 on one interconnect group."""
    if request.nums == 2:
        return _interconnect_pair(devices, request, fits)
    if request.nums == 4:
        return _interconnect_four(devices, request, fits)
    return []


def _interconnect_pair(devices: list[DeviceUsage], request: ContainerDeviceRequest, fits: FitFn) -> list[int]:
    for a in devices:
        if not fits(a, request):
            continue
        for b in devices:
            if not fits(b, request) or b.index == a.index:
                continue
            for left, right in INTER_GROUP:
                if (left, right) in ((a.index, b.index), (b.index, a.index)):
                    return [a.index, b.index]
    return []


def _interconnect_four(devices: list[DeviceUsage], request: ContainerDeviceRequest, fits: FitFn) -> list[int]:
    unused = [d.index for d in devices if fits(d, request)]
    if len(unused) in (4, 5):
        for combo in INTER_GROUP_4:
            if set(combo) <= set(unused):
                return list(combo)
    if len(unused) == 6:
        ret: list[int] = []
        for combo in INTER_GROUP_4:
            if set(combo) <= set(unused):
                ret = list(combo)
                rest = [i for i in unused if i not in combo]
                for pair in INTER_GROUP + GROUP:
                    if set(pair) <= set(rest):
                        return ret
        return ret
    return []


def _pick(devices: list[DeviceUsage], start: int, request: ContainerDeviceRequest, fits: FitFn) -> list[int]:
    out: list[int] = []
    for t in range(start, min(8, len(devices))):  # HAMi indexes devices[t] up to 7 (it would panic)
        if fits(devices[t], request):
            out.append(devices[t].index)
            if len(out) == request.nums:
                return out
    return out


def _wing_value(count: int) -> int:
    """``getvalue``: a full 4-card wing leaves no bubble, a lone card two, anything else one."""
    if count == 4:
        return 0
    if count == 1:
        return 2
    return 1


def _bubbles(indices: list[int]) -> int:
    """``countbubble``: fragmentation of a set of card indices over the two wings (0-3, 4-7)."""
    left = sum(1 for i in indices if i < 4)
    right = len(indices) - left
    if left == 0 and right == 0:
        return 1
    return _wing_value(left) + _wing_value(right)


_BUBBLE_SCORE = {-1: 3000.0, 0: 2000.0, 1: 1000.0, 2: 0.0}


def kunlun_topology_score(
    pod_devices: Sequence[Sequence[ContainerDevice]], previous: Sequence[DeviceUsage], card: str
) -> float:
    """HAMi's kunlun ``ScoreNode``: 0 unless every device of the node is a whole card (type ``card``).

    ``prev`` = distinct indices of cards in use before the pod, ``current`` = distinct indices of
    the pod's cards (every container); the score is ``calcscore(prev, current)``.
    """
    prev: list[int] = []
    for dev in previous:
        if card not in dev.type:
            return 0.0
        if dev.used > 0 and dev.index not in prev:
            prev.append(dev.index)
    current: list[int] = []
    for container in pod_devices:
        for chosen in container:
            if card not in chosen.type:
                return 0.0
            if chosen.idx not in current:
                current.append(chosen.idx)
    return _BUBBLE_SCORE.get(_bubbles(current) - _bubbles(prev), 1000.0)

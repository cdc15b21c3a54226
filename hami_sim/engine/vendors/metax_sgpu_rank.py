"""Which fitting MetaX sGPU cards a container takes, and the node score (HAMi v2.10.0
``pkg/device/metax``): the second half of the sGPU Fit (``choose``, after ``metax_sgpu.card_reason``)
and ``ScoreNode``.

- App classes: an online pod with more candidates than it needs prefers cards with fewer online pods
  and avoids cards running only offline pods (``prioritizeOnlineDevices``).
- Exclusive prioritisation: an exclusive pod (``vcore`` 100, no app-class annotation) with more
  candidates than it needs takes them MetaXLink zone first (``linkZone`` of the registration: the
  smallest zone that holds the whole request, else zones smallest first, then unlinked cards).
- ``ScoreNode`` ("policy neutral" x +10000, x -10000 under spread, ``neutral_score``): for exclusive
  devices with topology awareness on (``metax-tech.com/sgpu-topology-aware``, else the config's
  ``topology_aware``), ``10 x link score of the chosen cards - link score the idle cards lose``;
  online pods score by the online/offline pods already on their cards (``DeviceUsage.pod_infos``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceUsage
from ..policy import f32
from .base import FitOutcome
from .fit_loop import Rejections
from .metax_sgpu import APP_CLASS, METAX_SGPU, ONLINE, SgpuAsk, app_classes, link_zone

__all__ = ["TOPOLOGY_AWARE", "choose", "link_score", "neutral_score", "prioritize"]

TOPOLOGY_AWARE = "metax-tech.com/sgpu-topology-aware"
DIRECT_LINK_SCORE = 10
POLICY_NEUTRAL_WEIGHT = 10000
_GO_BOOLS = {
    "1": True,
    "t": True,
    "T": True,
    "TRUE": True,
    "true": True,
    "True": True,
    "0": False,
    "f": False,
    "F": False,
    "FALSE": False,
    "false": False,
    "False": False,
}


def link_score(devices: Sequence[tuple[str, int]]) -> int:
    """``LinkDevices.Score``: 10 for every pair of distinct cards in the same non-zero link zone."""
    score = 0
    for i, (uuid_a, zone_a) in enumerate(devices):
        for uuid_b, zone_b in devices[i + 1 :]:
            if uuid_a != uuid_b and zone_a != 0 and zone_a == zone_b:
                score += DIRECT_LINK_SCORE
    return score


def choose(
    candidates: list[tuple[DeviceUsage, int]], ask: SgpuAsk, reject: Rejections, total: int
) -> FitOutcome:
    """After the walk: too few candidates fail with HAMi's reason; otherwise ``prioritize`` picks."""
    if len(candidates) < ask.request.nums:
        if candidates:
            reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = len(candidates)
        return FitOutcome(False, [], R.gen_reason(reject.counts, total), reject.device_reasons)
    best = prioritize(candidates, ask.request, ask.annotations)
    cores = 0 if ask.app_class == ONLINE else ask.request.coresreq
    chosen = [ContainerDevice(dev.index, dev.id, dev.type, memreq, cores) for dev, memreq in best]
    return FitOutcome(True, chosen, "", reject.device_reasons)


def _online_rank(dev: DeviceUsage) -> tuple[int, int, int]:
    """``prioritizeOnlineDevices``' order as a sort key: cards running only offline pods last (fewest
    of them first), the others by fewest online pods, then fewest offline pods. HAMi sorts with an
    unstable ``sort.Slice``; we sort stably, so ties keep the candidates' (GPU policy) order."""
    online, offline = app_classes(dev)
    if online == 0 and offline > 0:
        return (1, 0, offline)
    return (0, online, offline)


def score_online(chosen: Sequence[ContainerDevice], previous: Sequence[DeviceUsage]) -> int:
    """``scoreOnlineDevices``: per chosen card, -100 per offline pod on a card running only offline
    pods, else -20 per online pod and -2 per offline pod (the pods on it before this pod)."""
    picked = {device.uuid for device in chosen}
    result = 0
    for dev in previous:
        if dev.id not in picked:
            continue
        online, offline = app_classes(dev)
        if offline > 0 and online == 0:
            result += -100 * offline
        else:
            result += -20 * online - 2 * offline
    return result


def prioritize(
    candidates: list[tuple[DeviceUsage, int]], request: ContainerDeviceRequest, annotations: Mapping[str, str]
) -> list[tuple[DeviceUsage, int]]:
    """The sGPU Fit's choice among more candidates than it needs: an online pod orders the cards by
    the app classes on them, an offline one keeps the GPU policy's order, and a pod without an app
    class asking whole cards (100 cores) goes by MetaXLink zone."""
    nums = request.nums
    if len(candidates) <= nums:
        return candidates[:nums]
    if APP_CLASS in annotations:
        if annotations[APP_CLASS] == ONLINE:
            return sorted(candidates, key=lambda item: _online_rank(item[0]))[:nums]
        return candidates[:nums]
    if request.coresreq == 100:
        return _prioritize_exclusive(candidates, nums)
    return candidates[:nums]


def _prioritize_exclusive(
    candidates: list[tuple[DeviceUsage, int]], nums: int
) -> list[tuple[DeviceUsage, int]]:
    """``prioritizeExclusiveDevices``: MetaXLink zones first, smallest zone that holds the request.

    HAMi groups the candidates by ``LinkZone`` in a Go map (random order) and sorts the zones by size
    with an unstable sort; we order zones by first appearance among the candidates and sort stably,
    so equal-sized zones go in candidate order. Cards with no zone (<= 0) come last.
    """
    zones: dict[int, list[tuple[DeviceUsage, int]]] = {}
    for item in candidates:
        zones.setdefault(link_zone(item[0].custom_info), []).append(item)
    linked = sorted((group for zone, group in zones.items() if zone > 0), key=len)
    unlinked = [item for zone, group in zones.items() if zone <= 0 for item in group]
    for group in linked:
        if len(group) >= nums:
            return group[:nums]
    picked: list[tuple[DeviceUsage, int]] = []
    for group in linked:
        for item in group:
            picked.append(item)
            if len(picked) >= nums:
                return picked
    for item in unlinked:
        picked.append(item)
        if len(picked) >= nums:
            return picked
    return candidates[:nums]


def score_exclusive(exclusive: list[ContainerDevice], previous: Sequence[DeviceUsage]) -> int:
    """``scoreExclusiveDevices``: 10 x link score of the chosen cards - what the idle cards lose."""
    # only sGPU registrations carry an int32 LinkZone; HAMi's ``.(int32)`` assertion reads any
    # other vendor's JSON custominfo (float64) as zone 0
    zones = {dev.id: link_zone(dev.custom_info) if dev.type == METAX_SGPU else 0 for dev in previous}
    allocated = [(device.uuid, zones.get(device.uuid, 0)) for device in exclusive]
    chosen_ids = {uuid for uuid, _ in allocated}
    available: list[tuple[str, int]] = []
    rest: list[tuple[str, int]] = []
    for dev in previous:
        if dev.used == 0:
            entry = (dev.id, zones[dev.id])
            available.append(entry)
            if dev.id not in chosen_ids:
                rest.append(entry)
    allocated_score = link_score(allocated)
    loss = link_score(available) - allocated_score - link_score(rest)
    return 10 * allocated_score - loss


def neutral_score(
    pod_devices: Sequence[Sequence[ContainerDevice]],
    previous: Sequence[DeviceUsage],
    policy: str,
    annotations: Mapping[str, str],
    topology_aware: bool,
) -> float:
    """HAMi's "policy neutral" sGPU score: +-10000 x the online or topology-aware score."""
    weight = -POLICY_NEUTRAL_WEIGHT if policy == "spread" else POLICY_NEUTRAL_WEIGHT
    chosen = [device for container in pod_devices for device in container]
    if annotations.get(APP_CLASS) == ONLINE and chosen:
        return f32(weight * score_online(chosen, previous))
    exclusive = [device for device in chosen if device.usedcores == 100]
    if not exclusive or not _topology_aware(annotations, topology_aware):
        return 0.0
    return f32(weight * score_exclusive(exclusive, previous))


def _topology_aware(annotations: Mapping[str, str], configured: bool) -> bool:
    """``metax-tech.com/sgpu-topology-aware`` when it parses as a Go bool, else the config's."""
    flag = _GO_BOOLS.get(annotations.get(TOPOLOGY_AWARE, ""))
    if TOPOLOGY_AWARE in annotations and flag is not None:
        return flag
    return configured is True

"""Vastai accelerators (HAMi ``pkg/device/vastai``): JSON registration, whole-device sharing.

``hami.io/node-va-register`` is a ``[]DeviceInfo``; HAMi forces ``devcore`` to 100. A request is
``vastaitech.com/va: N`` devices. At v2.10 the Fit checks neither memory nor cores: walking the list
from the end it checks health, type, UUID selection, the split count and mutex, and records 0 MiB.

Die mode (the first device's ``custominfo.DeviceStrategy`` is ``die``: each device is one die of a
physical card named by ``custominfo.AIC``): Fit collects *every* acceptable die, then keeps the first
one (a request for one) or the best combination (whole AIC groups, largest first; HAMi sorts the
groups with a stable sort after a Go map walk, we keep first-seen order for equal groups). Under the
mutex policy an idle die on a card whose other die is in use also conflicts. ``ScoreNode`` rewards a
die-mode container whose dies share one card: the sum over containers of ``largest AIC group /
dies``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from ..policy import f32
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, uuid_check
from .fit_loop import Rejections, collected_count
from .node_codecs import whole_devices
from .registry import CUSTOMINFO_HELP, Backend, ProfileFields, VendorDescriptor, render_json
from .request_rules import count_request

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = ["DESCRIPTOR", "VastaiConfig", "VastaiVendor", "VASTAI", "VASTAI_REGISTER", "best_combination"]

VASTAI = "Vastai"
VASTAI_REGISTER = "hami.io/node-va-register"
VASTAI_USE_UUID = "vastaitech.com/use-gpuuuid"
VASTAI_NOUSE_UUID = "vastaitech.com/nouse-gpuuuid"


@dataclass(slots=True, frozen=True)
class VastaiConfig:
    """The ``vastai:`` block of HAMi's device config."""

    resource_count_name: str = "vastaitech.com/va"


def _info(dev: DeviceUsage) -> Mapping | None:
    return dev.custom_info if isinstance(dev.custom_info, Mapping) else None


def _aic(info: Mapping | None) -> str | None:
    """``aicID``: the physical card of a die, when its custom info names one as a string."""
    value = info.get("AIC") if info is not None else None
    return value if isinstance(value, str) else None


def _die_mode(devices: Sequence[DeviceUsage]) -> bool:
    """``isDieMode``: decided by the first device handed to Fit."""
    info = _info(devices[0]) if devices else None
    return info is not None and info.get("DeviceStrategy") == "die"


def best_combination(
    nums: int, chosen: Sequence[ContainerDevice], aics: Mapping[str, str | None]
) -> list[ContainerDevice]:
    """``computeBestCombination``: dies grouped by card, the largest groups first, up to ``nums``.

    ``aics`` maps a die's UUID to its card; dies without one are left out, as HAMi does.
    """
    groups: dict[str, list[ContainerDevice]] = {}
    for device in chosen:
        aic = aics.get(device.uuid)
        if aic is not None:
            groups.setdefault(aic, []).append(device)
    result: list[ContainerDevice] = []
    for group in sorted(groups.values(), key=len, reverse=True):
        for device in group:
            result.append(device)
            if len(result) == nums:
                return result
    return result


class VastaiVendor(Vendor):
    exists_by = "vastai_backend"  # a backend only from the release that brought it
    common_word = VASTAI
    config_class = VastaiConfig
    resource_fields = ("resource_count_name",)
    register_key = VASTAI_REGISTER

    def node_reads(self) -> NodeReads:
        return NodeReads(registers=(VASTAI_REGISTER,))

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        return whole_devices(annotations, VASTAI_REGISTER, VASTAI), {}

    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        return count_request(resources, self.config.resource_count_name, VASTAI)

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """HAMi v2.10's Vastai Fit; not ``common_fit`` because of die mode (see the module docstring):
        the walk, then in die mode the best combination of the dies it collected."""
        die_mode = _die_mode(devices)
        occupied = _occupied_cards(devices) if policy.mutex and die_mode else set()
        reject = Rejections()
        collected, done = self._walk(
            devices, request, pod.annotations, policy.mutex, die_mode, occupied, reject
        )
        if done:
            return FitOutcome(True, collected, "", reject.device_reasons)
        if die_mode and len(collected) >= request.nums:
            return FitOutcome(True, _best_dies(collected, request.nums, devices), "", reject.device_reasons)
        if collected:
            reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = collected_count(
                self.release_rules, collected
            )
        return FitOutcome(False, collected, R.gen_reason(reject.counts, len(devices)), reject.device_reasons)

    def _walk(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        annotations: Mapping[str, str],
        mutex: bool,
        die_mode: bool,
        occupied: set,
        reject: Rejections,
    ) -> tuple[list[ContainerDevice], bool]:
        """The devices from the end, each rejected by its first failing check (``_reason``); whole
        devices stop once enough were collected (done), dies are all collected."""
        nums = request.nums
        collected: list[ContainerDevice] = []
        for dev in reversed(devices):
            why = self._reason(dev, request, annotations, mutex, occupied)
            if why:
                reject(dev, why)
                continue
            if nums > 0:
                if not die_mode:
                    nums -= 1
                collected.append(ContainerDevice(dev.index, dev.id, VASTAI, 0, request.coresreq))
            if nums == 0 and not die_mode:
                return collected, True
        return collected, False

    def _reason(
        self,
        dev: DeviceUsage,
        request: ContainerDeviceRequest,
        annotations: Mapping[str, str],
        mutex: bool,
        occupied: set,
    ) -> str:
        if not dev.health:
            return R.CARD_NOT_HEALTH
        if request.type != VASTAI:
            return R.CARD_TYPE_MISMATCH
        if not uuid_check(self.release_rules)(annotations, dev.id, VASTAI_USE_UUID, VASTAI_NOUSE_UUID):
            return R.CARD_UUID_MISMATCH
        if dev.count <= dev.used:
            return R.CARD_TIME_SLICING_EXHAUSTED
        if mutex and (dev.used > 0 or (occupied and _aic(_info(dev)) in occupied)):
            return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
        return ""

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """HAMi's Vastai ``ScoreNode``: per die-mode container, its largest same-card share of dies.

        A chosen device without custom info, of another strategy, or without an ``AIC`` scores the
        whole node 0, as in HAMi (the chosen devices' custom info is the registered one).
        """
        infos = {dev.id: _info(dev) for dev in previous}
        score = 0.0
        for container in pod_devices:
            counts: dict[str, int] = {}
            for device in container:
                info = infos.get(device.uuid)
                if info is None:
                    return 0.0
                strategy = info.get("DeviceStrategy")
                if isinstance(strategy, str) and strategy != "die":
                    return 0.0
                if "AIC" not in info:
                    return 0.0
                aic = _aic(info)
                if aic is not None:
                    counts[aic] = counts.get(aic, 0) + 1
            total = sum(counts.values())
            if total:
                score = f32(score + f32(f32(max(counts.values())) / f32(total)))
        return score


def _occupied_cards(devices: list[DeviceUsage]) -> set:
    """Die mode under mutex: the cards (``AIC``) with a die in use; each of their dies conflicts."""
    occupied = {_aic(_info(d)) for d in devices if d.used > 0}
    occupied.discard(None)
    return occupied


def _best_dies(
    collected: list[ContainerDevice], nums: int, devices: list[DeviceUsage]
) -> list[ContainerDevice]:
    """Die mode with enough dies: all when exactly enough, the first for one, else the best
    combination (largest same-card groups first)."""
    if len(collected) <= nums:
        return collected
    if nums == 1:
        return collected[:1]
    return best_combination(nums, collected, {d.id: _aic(_info(d)) for d in devices})


PROFILE = ProfileFields(
    label="Vastai",
    codec="json",
    help="hami.io/node-va-register JSON; HAMi forces devcore 100",
    render=render_json,
    extras={"custominfo": CUSTOMINFO_HELP},
    fixed={"devcore": 100},
)

DESCRIPTOR = VendorDescriptor(
    block="vastai",
    order=100,
    config_class=VastaiConfig,
    backends=(Backend(VastaiVendor, lambda word: PROFILE),),
)

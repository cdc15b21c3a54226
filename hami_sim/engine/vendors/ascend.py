"""Huawei Ascend NPUs (HAMi v2.10.0 ``pkg/device/ascend``): one backend per chip.

Each ``vnpus:`` entry of the device config is its own vendor with ``commonWord`` = e.g.
``Ascend910B3``: JSON registration ``hami.io/node-register-<cw>``, requests ``huawei.com/<cw>``
devices, ``huawei.com/<cw>-memory`` MiB (x ``memoryFactor``; none = 100 % of the NPU) and
``huawei.com/<cw>-core`` (a percentage, read into ``Coresreq``), read by ``ascend_requests``: v2.10's
scheduler takes the memory as written (rounding it up to a vNPU template is the admission
webhook's), v2.9's rounded a hard-sliced request up to its template.

Fit (v2.10): a pod annotated ``huawei.com/vnpu-mode: hami-core`` (soft slicing) needs a node whose
``hami-vnpu-core`` annotation is ``"true"`` (absent: the config's ``hamiVnpuCore``), else
``ModeNotFit``; its cores are then a percentage of the NPU (device ``Totalcore`` taken as 100). Each
device, last first, is rejected by its first failing check: ``CardNotHealth``, type, UUID lists
(``hami.io/use-<cw>-uuid``, shared ``CheckUUID``), split count, mutex, memory, cores, exclusive use,
used-up cores. ``hami.io/device-cordon`` is not read (NVIDIA's only in v2.10).

Topology: on Ascend910* nodes whose every device carries ``custominfo.NetworkID``, Fit collects
every fitting device and picks the largest same-network groups. Ascend910C requests of more than one
NPU always take whole 2-NPU modules (with or without NetworkID) and fail unless exactly ``Nums`` NPUs
come out (``AllocatedCardsInsufficientRequest`` counted over ``Nums``). Before v2.10 (#2369,
``HamiRules.ascend_910c_modules`` off) modules were sought only under NetworkID topology when more
NPUs than asked fit, and whatever whole modules came out were taken, too few or one too many;
otherwise the NPUs were taken like any chip's; v2.8 (before #1610, ``ascend_910c_pairs``) never
sought modules. v2.8 has no hami-vnpu-core either (``ascend_vnpu_core``): no mode gate, no ``-core``.

Node score (``ScoreNode``, Ascend910* chips only): for each container, the share of its NPUs in its
largest NetworkID group (1.0 when all share one network), summed over containers and weighted x10
(``Ascend910NetworkWeight``); 0 as soon as a chosen NPU has no ``custominfo`` or no NetworkID.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import reasons as R
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from ..policy import f32
from .ascend_chips import DEFAULT_ASCEND_CONFIGS, AscendConfig, VnpuTemplate
from .ascend_requests import ascend_request
from .base import FitOutcome, NodeReads, PriorDevices, ResourceGetter, Vendor, uuid_check
from .fit_loop import FitRules, Rejections, collected_count, core_reason, memory_request
from .node_codecs import json_devices
from .registry import CUSTOMINFO_HELP, Backend, ProfileFields, Row, VendorDescriptor, render_json
from .selection import UuidCheck

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "DESCRIPTOR",
    "VnpuTemplate",
    "AscendConfig",
    "AscendVendor",
    "DEFAULT_ASCEND_CONFIGS",
    "ascend_vendors",
]

ASCEND_910_PREFIX = "Ascend910"
ASCEND_910C = "Ascend910C"
NETWORK_ID = "NetworkID"
NETWORK_WEIGHT = 10  # HAMi Ascend910NetworkWeight
VNPU_MODE = "huawei.com/vnpu-mode"  # pod annotation: soft slicing asked
VNPU_MODE_HAMI_CORE = "hami-core"
NODE_HAMI_CORE = "hami-vnpu-core"  # node annotation: "true" = the node runs hami-vnpu-core


def _network_id(dev: DeviceUsage) -> float | None:
    info = dev.custom_info
    if not isinstance(info, dict):
        return None
    value = info.get(NETWORK_ID)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


class AscendVendor(Vendor):
    """One chip's backend, named by the chip (``config.common_word``)."""

    config_class = AscendConfig
    resource_fields = ("resource_name", "resource_memory_name", "resource_core_name")

    def __init__(self, config: AscendConfig) -> None:  # a chip is always configured
        chip = self.common_word = config.common_word
        if chip == ASCEND_910C:  # a chip of the chart's list from v2.9.0 on
            self.exists_by = "ascend_910c_backend"
        self.register_key = f"hami.io/node-register-{chip}"
        self.rules = FitRules(f"hami.io/use-{chip}-uuid", f"hami.io/no-use-{chip}-uuid")
        super().__init__(config)

    # -- registration: the node's hami-vnpu-core switch travels with its devices ----------------------
    def node_reads(self) -> NodeReads:
        """The chip's registration; ``hami-vnpu-core`` fills each device's custom info."""
        return NodeReads(registers=(self.register_key,), annotations={NODE_HAMI_CORE: "custom_info"})

    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        """``GetNodeDevices``; a node annotation ``hami-vnpu-core`` (HAMi's ``VNPUNodeSelectorAnnotation``,
        which Fit reads from the node object) is recorded on every device, so Fit sees it."""
        devices = json_devices(annotations, self.register_key, self.common_word, "no device found on node")
        switch = annotations.get(NODE_HAMI_CORE)
        if switch is not None:
            on = switch == "true"
            devices = [replace(d, custom_info={**(d.custom_info or {}), NODE_HAMI_CORE: on}) for d in devices]
        return devices, {}

    # -- requests ----------------------------------------------------------------------------------
    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """``GenerateResourceRequests`` under the release's rules (``ascend_requests``)."""
        return ascend_request(self.config, resources, self.release_rules)

    # -- fit -----------------------------------------------------------------------------------------
    def _node_hami_core(self, devices: Sequence[DeviceUsage]) -> bool:
        """The node's ``hami-vnpu-core`` annotation when it has one, else the config's ``hamiVnpuCore``."""
        for dev in devices:
            info = dev.custom_info
            if isinstance(info, dict) and NODE_HAMI_CORE in info:
                return bool(info[NODE_HAMI_CORE])
        return bool(self.config.hami_vnpu_core)

    def _hami_core(self, pod: PodView) -> bool:
        """Whether the pod asks hami-core soft slicing; v2.8 has none (#1771, #1812), so it never does."""
        return self.release_rules.ascend_vnpu_core and pod.annotations.get(VNPU_MODE) == VNPU_MODE_HAMI_CORE

    def _mode_not_fit(
        self, devices: Sequence[DeviceUsage], request: ContainerDeviceRequest, hami_core: bool
    ) -> bool:
        """The node mode gate: v2.10 (#2029, #2035) gates hami-core pods only, anywhere; before, a
        request for part of a card had to match the node's mode, both ways."""
        node_hami_core = self._node_hami_core(devices)
        if self.release_rules.ascend_mode_agnostic:
            return hami_core and not node_hami_core
        per_card = devices[0].totalmem if devices else 0
        partial = 0 < request.memreq < per_card and request.nums > 0
        return partial and hami_core != node_hami_core

    def _topology(self, devices: Sequence[DeviceUsage]) -> bool:
        """NetworkID topology: an Ascend910* chip whose every device carries ``custominfo.NetworkID``."""
        return self.common_word.startswith(ASCEND_910_PREFIX) and all(
            isinstance(dev.custom_info, dict) and NETWORK_ID in dev.custom_info for dev in devices
        )

    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """v2.10 Ascend ``Fit``: soft-slicing mode check, the per-device loop, then 910C whole modules
        or NetworkID topology. ``hami.io/device-cordon`` is NVIDIA's only (not read here)."""
        rules = self.release_rules
        hami_core = self._hami_core(pod)
        if rules.ascend_vnpu_core and self._mode_not_fit(devices, request, hami_core):
            return FitOutcome(False, [], R.gen_reason({R.MODE_NOT_FIT: 1}, len(devices)))
        origin = request.nums
        is_910c = self.common_word == ASCEND_910C and origin > 1
        pairs = is_910c and rules.ascend_910c_modules
        topology = self._topology(devices)
        collect_all = pairs or topology
        reject = Rejections()
        collected = self._walk(devices, request, pod, policy, hami_core, collect_all, reject)
        if not collect_all and len(collected) == origin:
            return FitOutcome(True, collected, "", reject.device_reasons)
        if pairs:
            return _fit_modules(collected, origin, reject)
        if topology and len(collected) >= origin:
            modules = is_910c and rules.ascend_910c_pairs and len(collected) > origin  # v2.9
            return FitOutcome(
                True, _topology_pick(collected, origin, devices, modules), "", reject.device_reasons
            )
        if collected:
            reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = collected_count(
                self.release_rules, collected
            )
        return FitOutcome(False, [], R.gen_reason(reject.counts, len(devices)), reject.device_reasons)

    def _walk(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        policy: GpuPolicy,
        hami_core: bool,
        collect_all: bool,
        reject: Rejections,
    ) -> list[ContainerDevice]:
        """The device loop, last device first: each device is rejected by its first failing check
        (health, type, UUID lists, split count, mutex, memory, cores against 100 in soft mode, whole
        card on a used NPU, cores used up), else collected; it stops at ``Nums`` unless collecting all."""
        keys = _Keys(
            self.common_word, self.rules.use_uuid, self.rules.nouse_uuid, uuid_check(self.release_rules)
        )
        nums = request.nums
        coresreq = min(request.coresreq, 100)
        collected: list[ContainerDevice] = []
        for dev in reversed(devices):
            memreq = memory_request(request, dev)
            total_core = 100 if hami_core else dev.totalcore
            why = _device_reason(dev, request, pod, policy, keys, memreq, coresreq, total_core)
            if why:
                reject(dev, why)
                continue
            if nums > 0:
                if not collect_all:
                    nums -= 1
                collected.append(ContainerDevice(dev.index, dev.id, request.type, memreq, coresreq))
            if nums == 0 and not collect_all:
                break
        return collected

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """HAMi's Ascend ``ScoreNode``: NetworkID cohesion of each container's NPUs, x10 (float32)."""
        if not self.common_word.startswith(ASCEND_910_PREFIX):
            return 0.0
        by_id = {dev.id: dev for dev in previous}
        score = 0.0
        for container in pod_devices:
            if not container:
                continue
            counts: dict[int, int] = {}
            for chosen in container:
                dev = by_id.get(chosen.uuid)
                info = dev.custom_info if dev is not None else None
                if not isinstance(info, dict) or NETWORK_ID not in info:
                    return 0.0
                value = info[NETWORK_ID]
                # Go decodes JSON numbers as float64; any other JSON value is skipped, not counted
                if isinstance(value, int | float) and not isinstance(value, bool):
                    key = int(value)
                    counts[key] = counts.get(key, 0) + 1
            total = sum(counts.values())
            if total == 0:
                continue
            score = f32(score + f32(f32(max(counts.values())) / f32(total)))
        return f32(score * NETWORK_WEIGHT)


class _Keys(NamedTuple):
    """What a device is matched against: the request type and the UUID lists, as the release reads them."""

    word: str
    use_uuid: str
    nouse_uuid: str
    uuid_allows: UuidCheck


def _device_reason(
    dev: DeviceUsage,
    request: ContainerDeviceRequest,
    pod: PodView,
    policy: GpuPolicy,
    keys: _Keys,
    memreq: int,
    coresreq: int,
    total_core: int,
) -> str:
    """The first v2.10 Ascend check ``dev`` fails, "" when it fits (``total_core`` is 100 for
    hami-core pods: cores are then a percentage of the NPU)."""
    if not dev.health:
        return R.CARD_NOT_HEALTH
    if request.type != keys.word:
        return R.CARD_TYPE_MISMATCH
    if not keys.uuid_allows(pod.annotations, dev.id, keys.use_uuid, keys.nouse_uuid):
        return R.CARD_UUID_MISMATCH
    if dev.count <= dev.used:
        return R.CARD_TIME_SLICING_EXHAUSTED
    if policy.mutex and dev.used > 0:
        return R.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT
    if dev.totalmem - dev.usedmem < memreq:
        return R.CARD_INSUFFICIENT_MEMORY
    return core_reason(dev, coresreq, total_core)


def _best_network(
    collected: list[ContainerDevice], origin: int, by_id: dict[str, DeviceUsage]
) -> list[ContainerDevice]:
    """``computeBestCombination``: exactly enough devices are all taken and one device is the first;
    otherwise fill from the NetworkID groups with most fitting devices (groups of equal size in order
    of first appearance: HAMi's map order is random, hami-sim's sort is stable)."""
    if len(collected) == origin:
        return collected
    if origin == 1:
        return collected[:1]
    groups: dict[float, list[ContainerDevice]] = {}
    for cd in collected:
        net = _network_id(by_id[cd.uuid])
        if net is not None:
            groups.setdefault(int(net), []).append(cd)
    result: list[ContainerDevice] = []
    for group in sorted(groups.values(), key=len, reverse=True):
        for cd in group:
            result.append(cd)
            if len(result) == origin:
                return result
    return result


def _topology_pick(
    collected: list[ContainerDevice], origin: int, devices: list[DeviceUsage], modules: bool
) -> list[ContainerDevice]:
    """Under NetworkID topology: v2.9's 910C whole modules found (however many NPUs they hold), else
    the largest NetworkID groups."""
    if modules:
        return _best_modules(collected, origin)
    return _best_network(collected, origin, {dev.id: dev for dev in devices})


def _fit_modules(collected: list[ContainerDevice], origin: int, reject: Rejections) -> FitOutcome:
    """Ascend910C, more than one NPU: whole modules covering exactly ``origin`` NPUs, else
    ``AllocatedCardsInsufficientRequest`` counted over ``origin``."""
    chosen = _best_modules(collected, origin)
    if len(chosen) != origin:
        reject.counts[R.ALLOCATED_CARDS_INSUFFICIENT_REQUEST] = len(chosen)
        return FitOutcome(False, [], R.gen_reason(reject.counts, origin), reject.device_reasons)
    return FitOutcome(True, chosen, "", reject.device_reasons)


def _best_modules(collected: list[ContainerDevice], origin: int) -> list[ContainerDevice]:
    """``computeBestCombination910C``: whole modules only (the NPU pair ``idx // 2`` with both NPUs
    fitting), in order of first appearance, until ``origin`` NPUs are covered; the caller rejects a
    result of any other size (an odd ``origin`` can never be met)."""
    modules: dict[int, list[ContainerDevice]] = {}
    for cd in collected:
        modules.setdefault(cd.idx // 2, []).append(cd)
    result: list[ContainerDevice] = []
    remaining = origin
    for module in modules.values():
        if remaining <= 0:
            break
        if len(module) == 2:
            result.extend(module)
            remaining -= 2
    return result


def ascend_vendors(configs: tuple[AscendConfig, ...] = DEFAULT_ASCEND_CONFIGS) -> list[AscendVendor]:
    return [AscendVendor(c) for c in configs]


def _check_row(row: Row, extra: Mapping[str, Any]) -> dict[str, str]:
    """The NetworkID a row gives its NPUs must be a number (topology mode groups NPUs by it)."""
    info = extra.get("custominfo")
    if isinstance(info, Mapping) and NETWORK_ID in info:
        nid = info[NETWORK_ID]
        if isinstance(nid, bool) or not isinstance(nid, int | float):
            return {
                "extra": f"extra.custominfo.NetworkID must be a number (the Ascend topology network id), got {nid!r}"
            }
    return {}


def _profile(word: str) -> ProfileFields:
    return ProfileFields(
        label=word.replace("Ascend", "Ascend ", 1),
        device_noun="NPU",
        codec="json",
        help=f"hami.io/node-register-{word} JSON; custominfo NetworkID for topology",
        render=render_json,
        extras={"custominfo": CUSTOMINFO_HELP},
        check_row=_check_row,
        count_field="resource_name",
    )


DESCRIPTOR = VendorDescriptor(
    block="ascend",
    order=120,
    config_class=AscendConfig,
    backends=(Backend(AscendVendor, _profile),),
    chips=DEFAULT_ASCEND_CONFIGS,
)

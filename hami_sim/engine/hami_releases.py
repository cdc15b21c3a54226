"""The HAMi releases hami-sim follows, and the scheduler rules that differ between them.

A cluster runs one HAMi release; ``HAMI_VERSION`` (a setting, ``EngineConfig.hami_release``) names
it. Between v2.8.3, v2.9.0 and v2.10.0 some device rules changed. Each such rule is one field of
:class:`HamiRules`, and every change of it is one :data:`CHANGES` row naming the release that
brought it and the HAMi pull request, so the engine, the docs and an "upgrade" comparison read one
table. A :class:`HamiRules` is resolved once per simulator, never per node.

To ask "release A, with only rule R as B has it", take ``dataclasses.replace(rules_for(A),
R=getattr(rules_for(B), R))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

__all__ = [
    "SUPPORTED_RELEASES", "DEFAULT_RELEASE", "PATCHES", "INIT_IGNORED", "INIT_SUMMED", "INIT_APART", "HamiReleaseError",
    "HamiRules", "RuleChange", "CHANGES", "parse_release", "rules_for", "rule_differences"
]  # fmt: skip

SUPPORTED_RELEASES: tuple[str, ...] = ("2.8", "2.9", "2.10")
DEFAULT_RELEASE = "2.10"
#: the exact tag of each release whose rules (and Go tests) hami-sim follows
PATCHES: dict[str, str] = {"2.8": "v2.8.3", "2.9": "v2.9.0", "2.10": "v2.10.0"}

# init containers' device requests (``HamiRules.init_containers``)
INIT_IGNORED = "ignored"  # not read: only the app containers ask for devices
INIT_SUMMED = "summed"  # fitted one after another with the app containers, usage adding up
INIT_APART = "apart"  # each alone on the node; the node keeps max(app usage, init peak)


class HamiReleaseError(ValueError):
    """A HAMi release hami-sim does not follow; ``str()`` lists the ones it does."""


@dataclass(frozen=True, slots=True)
class HamiRules:
    """The rules of one HAMi release, where they differ between releases (:data:`CHANGES`).

    Every field but ``release`` is a rule; its value is what the engine does under that release.
    """

    release: str = DEFAULT_RELEASE
    init_containers: str = INIT_APART
    scoring_weights: bool = True  # hami.io/device-scoring-weights weighs the device score
    policy_combinations: bool = True  # gpu-scheduler-policy may chain policies with commas
    # a device's score counts only requests of its own type, one slot each (False: every request)
    typed_device_score: bool = True
    iluvatar_from_last: bool = True  # Iluvatar walks the cards from the last (False: first)
    # device counts are checked per type; a MIG request may take several instances of one GPU
    count_by_type: bool = True
    # AMD cards are shared as vGPU slices (False: whole MI300X cards counted in capacity)
    amd_vgpu: bool = True
    enflame_drs: bool = True  # Enflame vGCUs are DRS slices (False: GCUs shared by percentage)
    # the backends a release has (a pod asking only for another release's is no HAMi pod)
    vastai_backend: bool = True
    biren_backend: bool = True
    # an Ascend pod without huawei.com/vnpu-mode goes on any node (False: partial ones match modes)
    ascend_mode_agnostic: bool = True
    mutex_policy: bool = True  # "mutex" is a GPU policy: only unused cards
    score_first_sort: bool = True  # without numa-bind, cards sort by score (False: NUMA first)
    device_cordon: bool = True  # NVIDIA skips the GPUs hami.io/device-cordon lists
    unhealthy_skipped: bool = True  # every backend skips unhealthy devices (False: NVIDIA, sGPU)
    # AllocatedCardsInsufficientRequest and NumaNotFit count the devices collected (False: 1)
    insufficient_counts_devices: bool = True
    # NVIDIA requests: gpumem-percentage 0 is unset, out-of-range values clamped or refused
    nvidia_request_checks: bool = True
    # the other vendors refuse requests past int32 (False: the values narrowed as written)
    request_range_guards: bool = True
    # Ascend910C requests of several NPUs take exactly as many NPUs, in whole 2-NPU modules
    ascend_910c_modules: bool = True
    # under NetworkID topology, such a request looks for whole modules (False: network groups)
    ascend_910c_pairs: bool = True
    # Ascend's hami-vnpu-core soft slicing: -core, vnpu-mode and the node's mode are read
    ascend_vnpu_core: bool = True
    # Ascend memory is taken as asked (False: rounded up to a vNPU template without -core)
    ascend_memory_as_asked: bool = True
    kunlun_uuid_selection: bool = True  # Kunlun reads the use/nouse UUID lists (False: ignored)


@dataclass(frozen=True, slots=True)
class RuleChange:
    """A rule that differs between two releases: its :class:`HamiRules` field, what changed and the
    HAMi pull request that changed it (the newest one, when it changed twice; 0: a commit)."""

    name: str
    description: str
    pr: int


@dataclass(frozen=True, slots=True)
class _Change:
    since: str  # the release that brought it (and every later one keeps it)
    rule: str
    value: Any
    pr: int  # 0: the change came as a commit, not a pull request
    description: str
    commit: str = ""

    @property
    def ref(self) -> str:
        return f"#{self.pr}" if self.pr else f"commit {self.commit}"


#: The value of every rule in v2.8.3, the oldest release followed.
_BASELINE: dict[str, Any] = {
    "init_containers": INIT_IGNORED,
    "scoring_weights": False,
    "ascend_mode_agnostic": False,
    "vastai_backend": False,
    "biren_backend": False,
    "amd_vgpu": False,
    "enflame_drs": False,
    "count_by_type": False,
    "typed_device_score": False,
    "iluvatar_from_last": False,
    "policy_combinations": False,
    "mutex_policy": False,
    "score_first_sort": False,
    "device_cordon": False,
    "unhealthy_skipped": False,
    "insufficient_counts_devices": False,
    "nvidia_request_checks": False,
    "request_range_guards": False,
    "ascend_memory_as_asked": False,
    "ascend_910c_modules": False,
    "ascend_910c_pairs": False,
    "ascend_vnpu_core": False,
    "kunlun_uuid_selection": False,
}

CHANGES: tuple[_Change, ...] = (
    _Change(
        "2.9",
        "init_containers",
        INIT_SUMMED,
        1650,
        "init containers' devices are counted, fitted before the app containers on the same cards "
        "and added to their usage",
    ),
    _Change(
        "2.10",
        "init_containers",
        INIT_APART,
        1773,
        "each init container is fitted alone (they run one after another); the node keeps the larger "
        "of the app containers' usage and the init containers' peak",
    ),
    _Change(
        "2.9",
        "typed_device_score",
        True,
        1700,
        "a card's score counts only the container's requests of its own type, one slot each, and a "
        "memory percentage as that share of the card (a card without slots, cores or memory scores 0, "
        "#1820); before, every request's device count and cores counted on every card and a "
        "percentage below 100 counted as no memory",
    ),
    _Change(
        "2.9",
        "vastai_backend",
        True,
        1645,
        "the Vastai backend (vastaitech.com/va) exists; before, HAMi managed no Vastai device and a pod "
        "asking for one was no HAMi pod",
    ),
    _Change(
        "2.9",
        "iluvatar_from_last",
        True,
        1631,
        "Iluvatar's Fit walks the policy-sorted cards from the last, as the other backends do; before, "
        "it walked them from the first, so binpack and spread chose each other's card",
    ),
    _Change(
        "2.10",
        "count_by_type",
        True,
        2724,
        "a container asking more devices than the node has of that type fails NodeInsufficientDevice "
        "before any Fit (#2105), except a MIG request, which may take several instances of one GPU "
        "(#2724); before, the count was checked against every device of the node, whatever its type, "
        "and a MIG request for more instances than the node has GPUs failed",
    ),
    _Change(
        "2.10",
        "amd_vgpu",
        True,
        2290,
        "AMD cards are shared: the hami.io/node-amd-register registration lists each card's memory and "
        "compute units, and amd.com/gpumem and amd.com/gpucores ask for a slice; before, capacity "
        "amd.com/gpu counted whole MI300X cards and every container took whole cards",
    ),
    _Change(
        "2.10",
        "enflame_drs",
        True,
        1872,
        "Enflame vGCUs are DRS slices: the enflame.com/gcu-drs-capacity registration lists each "
        "GCU's slices and profiles, and enflame.com/drs-gcu or memory and cores ask for a profile; "
        "before, capacity enflame.com/gcu-count counted GCUs, each shared by percentage "
        "(enflame.com/vgcu GCUs of enflame.com/vgcu-percentage each)",
    ),
    _Change(
        "2.10",
        "biren_backend",
        True,
        1711,
        "the Biren backend (birentech.com/gpu) exists; before, HAMi managed no Biren device and a pod "
        "asking for one was no HAMi pod",
    ),
    _Change(
        "2.10",
        "ascend_mode_agnostic",
        True,
        2035,
        "an Ascend pod without huawei.com/vnpu-mode may land on a hami-core node too, and a hami-core "
        "pod needs a hami-core node whatever it asks (#2029); before, only a request for part of a "
        "card was gated, and both ways: ModeNotFit for a pod whose mode was not the node's",
    ),
    _Change(
        "2.10",
        "scoring_weights",
        True,
        2469,
        "the pod annotation hami.io/device-scoring-weights (slot, core, memory) weighs each device's "
        "score; before, the three parts always counted equally and the annotation was not read",
    ),
    _Change(
        "2.10",
        "policy_combinations",
        True,
        2621,
        "hami.io/gpu-scheduler-policy may list several policies with commas (sort keys in the order "
        "written, plus topology-aware and mutex); before, the value was one policy and anything but "
        "binpack sorted as spread",
    ),
    _Change(
        "2.10",
        "mutex_policy",
        True,
        2011,
        "the mutex GPU policy gives a container only cards no one uses; before, mutex sorted as spread",
    ),
    _Change(
        "2.10",
        "score_first_sort",
        True,
        2011,
        "without numa-bind, cards sort by score and NUMA node only breaks ties; before, cards sorted "
        "by NUMA node first under every policy",
    ),
    _Change(
        "2.10",
        "device_cordon",
        True,
        2298,
        "NVIDIA's Fit skips the GPUs listed in the node annotation hami.io/device-cordon "
        "(CardCordoned); before, the annotation was not read",
    ),
    _Change(
        "2.10",
        "unhealthy_skipped",
        True,
        2260,
        "every backend's Fit skips an unhealthy device (CardNotHealth), Ascend's since #2241; before, "
        "only NVIDIA and MetaX sGPU did, and the others could choose an unhealthy device",
    ),
    _Change(
        "2.10",
        "insufficient_counts_devices",
        True,
        2238,
        "AllocatedCardsInsufficientRequest and NumaNotFit count the devices collected before the "
        "walk gave up; before, they counted 1 (the number of device types collected)",
    ),
    _Change(
        "2.10",
        "nvidia_request_checks",
        True,
        2156,
        "NVIDIA requests: gpumem-percentage 0 or below reads as unset, above 100 as 100 (#1997), and "
        "a memory request that does not fit int32 asks for nothing; before, the values counted as "
        "written (0% asked no memory, 150% more than the card)",
    ),
    _Change(
        "2.10",
        "request_range_guards",
        True,
        2388,
        "Iluvatar, Cambricon and Mthreads (#2285), Hygon and MetaX sGPU (#2388) and Ascend (#2601) "
        "give no request for a container whose memory is not a plain integer (Ascend: is negative) "
        "or does not fit int32 once scaled, and Hygon, MetaX sGPU, Ascend and Mthreads (#2134) none "
        "for a count or cores outside int32 or a count of 0; before, the values were narrowed to int32 as written, so 16Gi of memory (read as "
        "bytes) wrapped to 0 and asked neither memory nor the whole card, and a value that was not "
        "an integer was ignored",
    ),
    _Change(
        "2.9",
        "ascend_vnpu_core",
        True,
        1771,
        "Ascend soft slicing (hami-vnpu-core): the huawei.com/<chip>-core resource asks a share of "
        "an NPU's cores and keeps the memory as asked, and a pod's huawei.com/vnpu-mode must match "
        "the node's hami-vnpu-core mode (#1812); before, cores were not read, every memory was "
        "rounded up to a vNPU template and neither mode was read",
    ),
    _Change(
        "2.9",
        "ascend_910c_pairs",
        True,
        1610,
        "on a NetworkID node where more Ascend910C NPUs fit than asked, whole 2-NPU modules are "
        "taken; before, the largest NetworkID groups, as for every 910 chip",
    ),
    _Change(
        "2.10",
        "ascend_910c_modules",
        True,
        2369,
        "an Ascend910C request of several NPUs takes whole 2-NPU modules and fails "
        "(AllocatedCardsInsufficientRequest) unless exactly as many NPUs come out, with or without "
        "NetworkID; before, modules were sought only on a NetworkID node where more NPUs fit than "
        "asked, and the modules found were taken even when they held fewer NPUs (or one more); "
        "otherwise any NPUs were taken, split modules included",
    ),
    _Change(
        "2.10",
        "kunlun_uuid_selection",
        True,
        2577,
        "Kunlunxin XPUs and vXPUs honour the hami.io/use-xpu-uuid, baidu.com/use-gpuuuid and nouse "
        "lists (CardUuidMismatch); before, the lists were not read",
    ),
    _Change(
        "2.10",
        "ascend_memory_as_asked",
        True,
        0,
        "Ascend's scheduler takes a container's memory as asked; before, a container asking memory "
        "but no -core (hard slicing) asked the vNPU template the memory rounds up to (the whole card "
        "past the largest template, no memory past the card)",
        commit="7a9fbb76",
    ),
)

_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def _order(release: str) -> int:
    return SUPPORTED_RELEASES.index(release)


def parse_release(text: str) -> str:
    """``"2.9"``, ``"2.9.0"``, ``"v2.9.0"`` or ``"v2.8.3"`` -> ``"2.9"`` / ``"2.8"``.

    A patch names its minor's release (hami-sim follows one patch per minor, :data:`PATCHES`).
    Raises :class:`HamiReleaseError` (a ``ValueError``) naming the supported releases otherwise."""
    match = _RELEASE.fullmatch(text.strip()) if isinstance(text, str) else None
    release = f"{match[1]}.{match[2]}" if match else ""
    if release not in SUPPORTED_RELEASES:
        supported = ", ".join(f"{r} ({PATCHES[r]})" for r in SUPPORTED_RELEASES)
        raise HamiReleaseError(f"HAMi release {text!r} is not supported: hami-sim follows {supported}")
    return release


def rules_for(release: str) -> HamiRules:
    """The rules of ``release`` (any form :func:`parse_release` reads): v2.8.3's with every change
    up to that release applied."""
    name = parse_release(release)
    values = dict(_BASELINE)
    for change in CHANGES:
        if _order(change.since) <= _order(name):
            values[change.rule] = change.value
    return HamiRules(release=name, **values)


def _rules(value: HamiRules | str) -> HamiRules:
    return value if isinstance(value, HamiRules) else rules_for(value)


def rule_differences(a: HamiRules | str, b: HamiRules | str) -> tuple[RuleChange, ...]:
    """The rules whose value differs between ``a`` and ``b`` (releases or rule sets), in
    :class:`HamiRules` field order, each with the changes between the two releases that made it."""
    first, second = _rules(a), _rules(b)
    low, high = sorted((_order(first.release), _order(second.release)))
    out: list[RuleChange] = []
    for f in fields(HamiRules):
        if f.name == "release" or getattr(first, f.name) == getattr(second, f.name):
            continue
        steps = [c for c in CHANGES if c.rule == f.name and low < _order(c.since) <= high]
        steps = steps or [c for c in CHANGES if c.rule == f.name]  # a mixed rule set
        text = "; ".join(f"v{c.since}: {c.description} ({c.ref})" for c in steps)
        out.append(RuleChange(f.name, text, steps[-1].pr))
    return tuple(out)

"""The table of HAMi rule changes between the releases hami-sim follows (v2.8.3, v2.9.0, v2.10.0).

Data only: :data:`BASELINE` holds every rule's value in v2.8.3, and each :data:`CHANGES` row one
change of one rule, with the release that brought it and the HAMi pull request (or commit). The
rules themselves, and how a release's values are resolved from this table, are ``hami_releases``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["INIT_IGNORED", "INIT_SUMMED", "INIT_APART", "Change", "BASELINE", "CHANGES"]

# init containers' device requests (``HamiRules.init_containers``)
INIT_IGNORED = "ignored"  # not read: only the app containers ask for devices
INIT_SUMMED = "summed"  # fitted one after another with the app containers, usage adding up
INIT_APART = "apart"  # each alone on the node; the node keeps max(app usage, init peak)


@dataclass(frozen=True, slots=True)
class Change:
    """One change of one rule: the release that brought it, the rule's new value, and where it came
    from (``rule_differences`` words it as ``v<since>: <description> (#<pr>)``)."""

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
BASELINE: dict[str, Any] = {
    "init_containers": INIT_IGNORED,
    "scoring_weights": False,
    "ascend_mode_agnostic": False,
    "vastai_backend": False,
    "biren_backend": False,
    "ascend_910c_backend": False,
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
    "uuid_lists_both": False,
    "type_lists_trimmed": False,
    "graph_reason_over_devices": False,
    "neuron_core_shapes": False,
    "topology_zero_scores": False,
    "mig_profiles": False,
    "mig_default_geometries": "v2.8.3",
}

CHANGES: tuple[Change, ...] = (
    Change(
        "2.9",
        "init_containers",
        INIT_SUMMED,
        1650,
        "init containers' devices are counted, fitted before the app containers on the same cards "
        "and added to their usage",
    ),
    Change(
        "2.10",
        "init_containers",
        INIT_APART,
        1773,
        "each init container is fitted alone (they run one after another); the node keeps the larger "
        "of the app containers' usage and the init containers' peak",
    ),
    Change(
        "2.9",
        "typed_device_score",
        True,
        1700,
        "a card's score counts only the container's requests of its own type, one slot each, and a "
        "memory percentage as that share of the card (a card without slots, cores or memory scores 0, "
        "#1820); before, every request's device count and cores counted on every card and a "
        "percentage below 100 counted as no memory",
    ),
    Change(
        "2.9",
        "vastai_backend",
        True,
        1645,
        "the Vastai backend (vastaitech.com/va) exists; before, HAMi managed no Vastai device and a pod "
        "asking for one was no HAMi pod",
    ),
    Change(
        "2.9",
        "iluvatar_from_last",
        True,
        1631,
        "Iluvatar's Fit walks the policy-sorted cards from the last, as the other backends do; before, "
        "it walked them from the first, so binpack and spread chose each other's card",
    ),
    Change(
        "2.10",
        "count_by_type",
        True,
        2724,
        "a container asking more devices than the node has of that type fails NodeInsufficientDevice "
        "before any Fit (#2105), except a MIG request, which may take several instances of one GPU "
        "(#2724); before, the count was checked against every device of the node, whatever its type, "
        "and a MIG request for more instances than the node has GPUs failed",
    ),
    Change(
        "2.10",
        "amd_vgpu",
        True,
        2290,
        "AMD cards are shared: the hami.io/node-amd-register registration lists each card's memory and "
        "compute units, and amd.com/gpumem and amd.com/gpucores ask for a slice; before, capacity "
        "amd.com/gpu counted whole MI300X cards and every container took whole cards",
    ),
    Change(
        "2.10",
        "enflame_drs",
        True,
        1872,
        "Enflame vGCUs are DRS slices: the enflame.com/gcu-drs-capacity registration lists each "
        "GCU's slices and profiles, and enflame.com/drs-gcu or memory and cores ask for a profile; "
        "before, capacity enflame.com/gcu-count counted GCUs, each shared by percentage "
        "(enflame.com/vgcu GCUs of enflame.com/vgcu-percentage each)",
    ),
    Change(
        "2.10",
        "biren_backend",
        True,
        1711,
        "the Biren backend (birentech.com/gpu) exists; before, HAMi managed no Biren device and a pod "
        "asking for one was no HAMi pod",
    ),
    Change(
        "2.10",
        "ascend_mode_agnostic",
        True,
        2035,
        "an Ascend pod without huawei.com/vnpu-mode may land on a hami-core node too, and a hami-core "
        "pod needs a hami-core node whatever it asks (#2029); before, only a request for part of a "
        "card was gated, and both ways: ModeNotFit for a pod whose mode was not the node's",
    ),
    Change(
        "2.10",
        "scoring_weights",
        True,
        2469,
        "the pod annotation hami.io/device-scoring-weights (slot, core, memory) weighs each device's "
        "score; before, the three parts always counted equally and the annotation was not read",
    ),
    Change(
        "2.10",
        "policy_combinations",
        True,
        2621,
        "hami.io/gpu-scheduler-policy may list several policies with commas (sort keys in the order "
        "written, plus topology-aware and mutex); before, the value was one policy and anything but "
        "binpack sorted as spread",
    ),
    Change(
        "2.10",
        "mutex_policy",
        True,
        2011,
        "the mutex GPU policy gives a container only cards no one uses; before, mutex sorted as spread",
    ),
    Change(
        "2.10",
        "score_first_sort",
        True,
        2011,
        "without numa-bind, cards sort by score and NUMA node only breaks ties; before, cards sorted "
        "by NUMA node first under every policy",
    ),
    Change(
        "2.10",
        "device_cordon",
        True,
        2298,
        "NVIDIA's Fit skips the GPUs listed in the node annotation hami.io/device-cordon "
        "(CardCordoned); before, the annotation was not read",
    ),
    Change(
        "2.10",
        "unhealthy_skipped",
        True,
        2260,
        "every backend's Fit skips an unhealthy device (CardNotHealth), Ascend's since #2241; before, "
        "only NVIDIA and MetaX sGPU did, and the others could choose an unhealthy device",
    ),
    Change(
        "2.10",
        "insufficient_counts_devices",
        True,
        2238,
        "AllocatedCardsInsufficientRequest and NumaNotFit count the devices collected before the "
        "walk gave up; before, they counted 1 (the number of device types collected)",
    ),
    Change(
        "2.10",
        "nvidia_request_checks",
        True,
        2156,
        "NVIDIA requests: gpumem-percentage 0 or below reads as unset, above 100 as 100 (#1997), and "
        "a memory request that does not fit int32 asks for nothing; before, the values counted as "
        "written (0% asked no memory, 150% more than the card)",
    ),
    Change(
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
    Change(
        "2.9",
        "ascend_vnpu_core",
        True,
        1771,
        "Ascend soft slicing (hami-vnpu-core): the huawei.com/<chip>-core resource asks a share of "
        "an NPU's cores and keeps the memory as asked, and a pod's huawei.com/vnpu-mode must match "
        "the node's hami-vnpu-core mode (#1812); before, cores were not read, every memory was "
        "rounded up to a vNPU template and neither mode was read",
    ),
    Change(
        "2.9",
        "ascend_910c_pairs",
        True,
        1610,
        "on a NetworkID node where more Ascend910C NPUs fit than asked, whole 2-NPU modules are "
        "taken; before, the largest NetworkID groups, as for every 910 chip",
    ),
    Change(
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
    Change(
        "2.10",
        "kunlun_uuid_selection",
        True,
        2577,
        "Kunlunxin XPUs and vXPUs honour the hami.io/use-xpu-uuid, baidu.com/use-gpuuuid and nouse "
        "lists (CardUuidMismatch); before, the lists were not read",
    ),
    Change(
        "2.10",
        "ascend_memory_as_asked",
        True,
        0,
        "Ascend's scheduler takes a container's memory as asked; before, a container asking memory "
        "but no -core (hard slicing) asked the vNPU template the memory rounds up to (the whole card "
        "past the largest template, no memory past the card)",
        commit="7a9fbb76",
    ),
    Change(
        "2.10",
        "uuid_lists_both",
        True,
        2045,
        "every backend's use and nouse UUID lists both apply (a device in both is refused, #1965), "
        "their entries are trimmed and a blank list is no constraint; before, a present use list "
        "alone decided (the nouse list unread), entries had to match as written and an empty use "
        "list matched no device",
    ),
    Change(
        "2.10",
        "type_lists_trimmed",
        True,
        2435,
        "NVIDIA's and Hygon's use and nouse card-type lists skip a blank value (#2045) and empty "
        "entries, trimmed, and Hygon reads both lists; before, an empty entry matched every card "
        "(an empty nouse-gputype refused them all) and Hygon read the use list alone when present",
    ),
    Change(
        "2.10",
        "graph_reason_over_devices",
        True,
        2292,
        "when Kunlunxin's XPU or vXPU board search or AWS Neuron's contiguous-device search finds "
        "nothing, NumaNotFit counts over the node's devices (1/8 NumaNotFit); before, over the "
        "number of reasons, so always 1/1",
    ),
    Change(
        "2.10",
        "neuron_core_shapes",
        True,
        2674,
        "an aws.amazon.com/neuroncore request asks one device's cores when it fits one device, else "
        "whole devices, and nothing when it is 0 or below, odd above the device's cores or past "
        "int32; an aws.amazon.com/neuron count past int32 asks nothing; before, C cores asked C/2 "
        "devices of 2 cores (3 cores: one device of 2) and C below 2 one core of one device",
    ),
    Change(
        "2.10",
        "topology_zero_scores",
        True,
        2160,
        "topology-aware NVIDIA requests of several GPUs take the best-linked subset even when every "
        "subset scores 0; before, only a subset scoring above 0 was taken, so with none the "
        "container fitted holding no GPU; a one-GPU request's lowest-scoring GPU is chosen whatever "
        "its total, where before a total of exactly -1 meant none yet and the next GPU walked "
        "replaced it",
    ),
    Change(
        "2.10",
        "mig_profiles",
        True,
        2378,
        "a MIG-mode GPU offers the profiles its registration lists (migProfiles), each instance taking "
        "a free slice placement, and a pod's placements are kept in hami.io/vgpu-mig-allocations; "
        "before, a MIG GPU followed one geometry of the scheduler config's knownMigGeometries for its "
        "model (the first whose template fits the first instance), every later instance took a free "
        "slot of that geometry, a refusal read CardNotFoundCustomFilterRule, and an allocated "
        "instance was named by a [geometry-position] suffix on the GPU UUID of the allocation "
        "annotation, which live usage read back",
    ),
    Change(
        "2.9",
        "mig_default_geometries",
        "v2.9.0",
        1847,
        "the chart's default knownMigGeometries give an A100 80GB's MIG instances the memory the GPU "
        "reports (1g.10gb 9728 MiB, 2g.20gb 19968, 3g.40gb 40192; the whole GPU 7g.80gb at 98% of "
        "the cores); before, 10240, 20480 and 40960 MiB, and 7g.79gb at 100%",
    ),
    Change(
        "2.9",
        "ascend_910c_backend",
        True,
        1610,
        "the chart's device config lists the Ascend910C chip (huawei.com/Ascend910C, its memory and "
        "core names), so its nodes register NPUs and its pods are HAMi's; before, the chart had no "
        "910C entry: a pod asking for huawei.com/Ascend910C asked HAMi for nothing",
    ),
)

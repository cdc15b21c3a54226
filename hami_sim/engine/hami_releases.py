"""The HAMi releases hami-sim follows, and the scheduler rules that differ between them.

A cluster runs one HAMi release; ``HAMI_VERSION`` (a setting, ``EngineConfig.hami_release``) names
it. Between v2.8.3, v2.9.0 and v2.10.0 some device rules changed. Each such rule is one field of
:class:`HamiRules`, and every change of it is one :data:`CHANGES` row (the data, in ``hami_changes``)
naming the release that brought it and the HAMi pull request, so the engine, the docs and an
"upgrade" comparison read one table. A :class:`HamiRules` is resolved once per simulator, never per
node.

To ask "release A, with only rule R as B has it", take ``dataclasses.replace(rules_for(A),
R=getattr(rules_for(B), R))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from .hami_changes import BASELINE, CHANGES, INIT_APART, INIT_IGNORED, INIT_SUMMED

__all__ = [
    "SUPPORTED_RELEASES", "DEFAULT_RELEASE", "PATCHES", "INIT_IGNORED", "INIT_SUMMED", "INIT_APART", "HamiReleaseError",
    "HamiRules", "RuleChange", "CHANGES", "parse_release", "rules_for", "rule_differences"
]  # fmt: skip

SUPPORTED_RELEASES: tuple[str, ...] = ("2.8", "2.9", "2.10")
DEFAULT_RELEASE = "2.10"
#: the exact tag of each release whose rules (and Go tests) hami-sim follows
PATCHES: dict[str, str] = {"2.8": "v2.8.3", "2.9": "v2.9.0", "2.10": "v2.10.0"}


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
    ascend_910c_backend: bool = True  # the chart's device config lists the Ascend910C chip
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
    # a pod's use and nouse UUID lists both apply, trimmed, a blank one no constraint (False: the
    # use list alone when present, entries as written, an empty one matching no device)
    uuid_lists_both: bool = True
    # NVIDIA's and Hygon's card-type lists skip blank values and empty entries, trimmed (False: an
    # empty entry matches every card, entries as written; Hygon reads the use list alone when present)
    type_lists_trimmed: bool = True
    # Kunlunxin's and AWS Neuron's failed board search counts over the node's devices (False: over 1)
    graph_reason_over_devices: bool = True
    # AWS Neuron core requests take whole-device shapes or none (False: C cores ask C/2 devices)
    neuron_core_shapes: bool = True
    # topology-aware NVIDIA picks a best subset even when every one scores 0 (False: none, it fits empty;
    # and a single GPU whose summed score is exactly -1 is replaced by the next GPU walked)
    topology_zero_scores: bool = True
    # MIG GPUs give registered profiles at free placements (False: config geometries, UUID suffixes)
    mig_profiles: bool = True
    # the chart whose default knownMigGeometries a MIG GPU follows when no geometries are configured
    # (read only while ``mig_profiles`` is False; ``vendors.nvidia_mig_defaults``)
    mig_default_geometries: str = "v2.9.0"


@dataclass(frozen=True, slots=True)
class RuleChange:
    """A rule that differs between two releases: its :class:`HamiRules` field, what changed and the
    HAMi pull request that changed it (the newest one, when it changed twice; 0: a commit)."""

    name: str
    description: str
    pr: int


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
    values = dict(BASELINE)
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

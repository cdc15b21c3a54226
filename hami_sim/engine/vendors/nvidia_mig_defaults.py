"""The MIG geometries a default HAMi v2.8.3 / v2.9.0 install knows (``knownMigGeometries``).

HAMi's scheduler has no geometry list of its own: it reads the ``nvidia.knownMigGeometries`` block
of its device config, which the Helm chart renders into the ``hami-scheduler-device`` ConfigMap. A
cluster installed with the chart's defaults therefore knows the models below. The facts are
NVIDIA's MIG profiles per GPU model (profile name, memory in MiB, the share of the GPU's cores, how
many instances one geometry holds), as those two chart releases list them; they differ in one
model: the A100 80GB, whose instance memory the v2.9.0 chart lowered to what the GPU reports.

Every seven-slice GPU below offers the same four geometries: seven 1-slice instances; one 1-slice
and three 2-slice instances; two 3-slice instances; or the whole GPU. The A30 offers four, two or
one instance. Which list a simulator takes when nothing else configures one is the release's rule
``HamiRules.mig_default_geometries`` (the chart tag naming it).
"""

from __future__ import annotations

import functools

from .nvidia_mig_templates import MigGeometries, MigTemplate, TemplateMig

__all__ = ["DEFAULT_GEOMETRIES", "default_geometries", "template_mig"]

#: one instance kind of a model: (profile name, memory MiB, cores %)
Profile = tuple[str, int, int]


def _seven_slice(
    models: tuple[str, ...], one: Profile, two: Profile, three: Profile, seven: Profile
) -> MigGeometries:
    """A seven-slice GPU: 7 x one; 1 x one + 3 x two; 2 x three; 1 x seven (in that order)."""

    def t(profile: Profile, count: int) -> MigTemplate:
        name, memory, core = profile
        return MigTemplate(name, memory, core, count)

    return MigGeometries(models, ((t(one, 7),), (t(one, 1), t(two, 3)), (t(three, 2),), (t(seven, 1),)))


_A30 = MigGeometries(
    ("A30",),
    (
        (MigTemplate("1g.6gb", 6144, 25, 4),),
        (MigTemplate("2g.12gb", 12288, 50, 2),),
        (MigTemplate("4g.24gb", 24576, 100, 1),),
    ),
)
_A100_40 = _seven_slice(
    ("A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB"),
    ("1g.5gb", 5120, 14),
    ("2g.10gb", 10240, 28),
    ("3g.20gb", 20480, 42),
    ("7g.40gb", 40960, 100),
)
_A100_80_MODELS = ("A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB")
#: v2.8.3's chart: the A100 80GB's instances at their nominal sizes
_A100_80_V283 = _seven_slice(
    _A100_80_MODELS,
    ("1g.10gb", 10240, 14),
    ("2g.20gb", 20480, 28),
    ("3g.40gb", 40960, 42),
    ("7g.79gb", 80896, 100),
)
#: v2.9.0's chart: the memory the GPU reports for each instance, the whole GPU 98% of the cores
_A100_80_V290 = _seven_slice(
    _A100_80_MODELS,
    ("1g.10gb", 9728, 14),
    ("2g.20gb", 19968, 28),
    ("3g.40gb", 40192, 42),
    ("7g.80gb", 80896, 98),
)
_LATER = (
    _seven_slice(
        ("H100-PCIE-80GB", "H100-SXM5-80GB"),
        ("1g.10gb", 10240, 14),
        ("2g.20gb", 20480, 28),
        ("3g.40gb", 40960, 42),
        ("7g.80gb", 81920, 100),
    ),
    _seven_slice(
        ("H100-PCIE-94GB", "H100-SXM5-94GB"),
        ("1g.12gb", 12288, 14),
        ("2g.24gb", 24576, 28),
        ("3g.47gb", 48128, 42),
        ("7g.94gb", 96256, 100),
    ),
    _seven_slice(
        ("H20", "H100 on GH200"),
        ("1g.12gb", 12288, 14),
        ("2g.24gb", 24576, 28),
        ("3g.48gb", 49152, 42),
        ("7g.96gb", 98304, 100),
    ),
    _seven_slice(
        ("H200 NVL", "H200-SXM5"),
        ("1g.18gb", 18432, 14),
        ("2g.35gb", 35840, 28),
        ("3g.71gb", 72704, 42),
        ("7g.141gb", 144384, 100),
    ),
    _seven_slice(
        ("B200",),
        ("1g.23gb", 23552, 14),
        ("2g.45gb", 46080, 28),
        ("3g.90gb", 92160, 42),
        ("7g.180gb", 184320, 100),
    ),
)

#: the chart tag -> the geometries its default device config lists, in the chart's order (a GPU
#: takes the first entry one of whose model names its type contains)
DEFAULT_GEOMETRIES: dict[str, tuple[MigGeometries, ...]] = {
    "v2.8.3": (_A30, _A100_40, _A100_80_V283, *_LATER),
    "v2.9.0": (_A30, _A100_40, _A100_80_V290, *_LATER),
}


def default_geometries(tag: str) -> tuple[MigGeometries, ...]:
    """The geometries of chart ``tag``'s default device config (none for a tag not listed)."""
    return DEFAULT_GEOMETRIES.get(tag, ())


@functools.lru_cache(maxsize=16)
def template_mig(configured: tuple[MigGeometries, ...] | None, default_tag: str) -> TemplateMig:
    """The MIG rules for the configured geometries, or (None: none configured) chart
    ``default_tag``'s; one instance per config, so its per-model lookups are kept."""
    return TemplateMig(default_geometries(default_tag) if configured is None else configured)

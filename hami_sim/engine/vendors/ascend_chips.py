"""Huawei Ascend chips as HAMi v2.10.0's device config lists them (``vnpus:``): one ``AscendConfig``
per chip (its CommonWord, memory, AI cores and vNPU templates), with the Helm chart's defaults.

``ascend.py`` builds one backend per entry; the templates are only read by ``trim_memory``, the
admission webhook's rounding, which the scheduler (and so hami-sim) does not apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["AscendConfig", "DEFAULT_ASCEND_CONFIGS", "VnpuTemplate"]


@dataclass(slots=True, frozen=True)
class VnpuTemplate:
    """A vNPU template: name, memory (MiB), AI cores."""

    name: str
    memory: int
    ai_core: int = 0


@dataclass(slots=True, frozen=True)
class AscendConfig:
    """One ``vnpus:`` entry (Helm defaults below)."""

    common_word: str
    chip_name: str
    memory_allocatable: int
    memory_capacity: int
    ai_core: int = 0
    templates: tuple[VnpuTemplate, ...] = ()
    memory_factor: int = 1
    #: HAMi's ``vnpus.hamiVnpuCore`` (one flag for every chip there): nodes without a
    #: ``hami-vnpu-core`` annotation support soft slicing
    hami_vnpu_core: bool = False
    resource_name: str = ""
    resource_memory_name: str = ""
    resource_core_name: str = ""
    sorted_templates: tuple[VnpuTemplate, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cw = self.common_word
        if not self.resource_name:
            object.__setattr__(self, "resource_name", f"huawei.com/{cw}")
        if not self.resource_memory_name:
            object.__setattr__(self, "resource_memory_name", f"huawei.com/{cw}-memory")
        if not self.resource_core_name:
            object.__setattr__(self, "resource_core_name", f"huawei.com/{cw}-core")
        # HAMi sorts the templates by memory at start-up
        object.__setattr__(self, "sorted_templates", tuple(sorted(self.templates, key=lambda t: t.memory)))

    def trim_memory(self, memory: int) -> tuple[int, str]:
        """``trimMemory``: the template (or whole card) HAMi's admission webhook rounds a memory limit
        up to (hard slicing). The scheduler reads the limit as written, so hami-sim, which takes pods
        as they reach the scheduler, does not apply it to requests."""
        for template in self.sorted_templates:
            if memory <= template.memory:
                return template.memory, template.name
        if memory <= self.memory_capacity:
            return self.memory_allocatable, ""
        return 0, ""


def _t(*items: tuple[str, int, int]) -> tuple[VnpuTemplate, ...]:
    return tuple(VnpuTemplate(n, m, c) for n, m, c in items)


DEFAULT_ASCEND_CONFIGS: tuple[AscendConfig, ...] = (
    AscendConfig(
        "Ascend910A",
        "910A",
        32768,
        32768,
        30,
        _t(("vir02", 2184, 2), ("vir04", 4369, 4), ("vir08", 8738, 8), ("vir16", 17476, 16)),
    ),
    AscendConfig(
        "Ascend910B2",
        "910B2",
        65536,
        65536,
        24,
        _t(("vir03_1c_8g", 8192, 3), ("vir06_1c_16g", 16384, 6), ("vir12_3c_32g", 32768, 12)),
    ),
    AscendConfig(
        "Ascend910B3", "910B3", 65536, 65536, 20, _t(("vir05_1c_16g", 16384, 5), ("vir10_3c_32g", 32768, 10))
    ),
    AscendConfig(
        "Ascend910B4-1",
        "910B4-1",
        65536,
        65536,
        20,
        _t(("vir05_1c_8g", 8192, 5), ("vir10_3c_16g", 16384, 10)),
    ),
    AscendConfig(
        "Ascend910B4", "910B4", 32768, 32768, 20, _t(("vir05_1c_8g", 8192, 5), ("vir10_3c_16g", 16384, 10))
    ),
    # no templates: v2.9.0's chart gives 910C none, so its scheduler rounds a hard-sliced memory up
    # to the whole NPU; v2.10.0's chart lists vir05_1c_16g and vir10_3c_32g for the admission
    # webhook alone (its scheduler takes memory as asked and never reads them)
    AscendConfig("Ascend910C", "Ascend910", 65536, 65536, 20),
    AscendConfig(
        "Ascend310P",
        "310P3",
        21527,
        24576,
        8,
        _t(("vir01", 3072, 1), ("vir02", 6144, 2), ("vir04", 12288, 4)),
    ),
)

"""Device vendors. ``default_vendors`` builds the set a simulator uses, in HAMi's registration order.

One module per HAMi vendor family (``pkg/device/<vendor>``); each class implements ``base.Vendor``.
Ascend and Iluvatar are configured per chip, so they contribute one vendor per chip.
"""

from __future__ import annotations

from .amd import AmdConfig, AmdVendor
from .ascend import DEFAULT_ASCEND_CONFIGS, AscendConfig, AscendVendor, VnpuTemplate, ascend_vendors
from .awsneuron import AwsNeuronConfig, AwsNeuronVendor
from .base import FitOutcome, ResourceGetter, Vendor
from .biren import BirenConfig, BirenVendor
from .cambricon import CambriconConfig, CambriconVendor
from .enflame import EnflameConfig, EnflameDrsVendor, EnflameGcuVendor
from .hygon import HygonConfig, HygonVendor
from .iluvatar import DEFAULT_ILUVATAR_CHIPS, IluvatarConfig, IluvatarVendor, iluvatar_vendors
from .kunlun import KunlunConfig, KunlunVendor, KunlunVxpuVendor
from .metax import MetaxConfig, MetaxGpuVendor, MetaxSgpuVendor
from .mthreads import MthreadsConfig, MthreadsVendor
from .nvidia import NvidiaConfig, NvidiaVendor
from .vastai import VastaiConfig, VastaiVendor

__all__ = [
    "FitOutcome",
    "ResourceGetter",
    "Vendor",
    "NvidiaConfig",
    "NvidiaVendor",
    "AmdConfig",
    "AmdVendor",
    "AscendConfig",
    "AscendVendor",
    "VnpuTemplate",
    "DEFAULT_ASCEND_CONFIGS",
    "AwsNeuronConfig",
    "AwsNeuronVendor",
    "BirenConfig",
    "BirenVendor",
    "CambriconConfig",
    "CambriconVendor",
    "EnflameConfig",
    "EnflameDrsVendor",
    "EnflameGcuVendor",
    "HygonConfig",
    "HygonVendor",
    "IluvatarConfig",
    "IluvatarVendor",
    "DEFAULT_ILUVATAR_CHIPS",
    "KunlunConfig",
    "KunlunVendor",
    "KunlunVxpuVendor",
    "MetaxConfig",
    "MetaxGpuVendor",
    "MetaxSgpuVendor",
    "MthreadsConfig",
    "MthreadsVendor",
    "VastaiConfig",
    "VastaiVendor",
    "default_vendors",
    "all_vendor_names",
]


def default_vendors(
    nvidia: NvidiaConfig | None = None,
    *,
    nvidia_only: bool = False,
    ascend: tuple[AscendConfig, ...] = DEFAULT_ASCEND_CONFIGS,
    iluvatar_chips: tuple[str, ...] = DEFAULT_ILUVATAR_CHIPS,
) -> list[Vendor]:
    """Every HAMi v2.10 backend with Helm-default resource names (``nvidia_only`` for NVIDIA alone).

    A vendor whose registration (annotation or capacity) is absent from a node contributes no
    devices and costs one dictionary lookup, so enabling all of them is cheap.
    """
    vendors: list[Vendor] = [NvidiaVendor(nvidia)]
    if nvidia_only:
        return vendors
    vendors += [CambriconVendor(), HygonVendor()]
    vendors += iluvatar_vendors(iluvatar_chips)
    vendors += [
        MthreadsVendor(),
        MetaxGpuVendor(),
        MetaxSgpuVendor(),
        EnflameGcuVendor(),
        EnflameDrsVendor(),
        KunlunVendor(),
        KunlunVxpuVendor(),
        AwsNeuronVendor(),
        AmdVendor(),
    ]
    vendors += ascend_vendors(ascend)
    vendors += [VastaiVendor(), BirenVendor()]
    return vendors


def all_vendor_names() -> list[str]:
    """The ``CommonWord`` of every default vendor, in registration order."""
    return [v.common_word for v in default_vendors()]

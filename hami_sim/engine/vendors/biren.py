"""Biren GPUs (HAMi ``pkg/device/biren``): JSON registration, whole-device (count-only) sharing.

``hami.io/node-biren-register`` is a ``[]DeviceInfo``; HAMi forces ``devcore`` to 100 (only for
scoring). ``birentech.com/gpu: N`` asks for N devices; Fit (the common loop, walking the list from the
end) only checks health, UUID selection, the split count (``count``) and mutex, recording 0 MiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from .common import FitRules, WholeDeviceVendor
from .registry import CUSTOMINFO_HELP, Backend, ProfileFields, VendorDescriptor, render_json

__all__ = ["DESCRIPTOR", "BirenConfig", "BirenVendor", "BIREN", "BIREN_REGISTER"]

BIREN = "Biren"
BIREN_REGISTER = "hami.io/node-biren-register"


@dataclass(slots=True, frozen=True)
class BirenConfig:
    """The ``biren:`` block of HAMi's device config."""

    resource_count_name: str = "birentech.com/gpu"


class BirenVendor(WholeDeviceVendor[BirenConfig]):
    common_word = BIREN
    config_class = BirenConfig
    register_key = BIREN_REGISTER
    rules = FitRules(
        "birentech.com/use-gpuuuid",
        "birentech.com/nouse-gpuuuid",
        check_memory_and_cores=False,
        record_memory=False,
    )


PROFILE = ProfileFields(
    label="Biren",
    codec="json",
    help="hami.io/node-biren-register JSON; HAMi forces devcore 100",
    render=render_json,
    extras={"custominfo": CUSTOMINFO_HELP},
    fixed={"devcore": 100},
)

DESCRIPTOR = VendorDescriptor(
    block="biren", order=110, config_class=BirenConfig, backends=(Backend(BirenVendor, lambda word: PROFILE),)
)

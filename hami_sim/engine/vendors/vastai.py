"""Vastai accelerators (HAMi ``pkg/device/vastai``): JSON registration, whole-device sharing.

``hami.io/node-va-register`` is a ``[]DeviceInfo``; HAMi forces ``devcore`` to 100. A request is
``vastaitech.com/va: N`` devices, each taking 100 % of a device's memory (so a device is shared only
when it registers no memory); the Fit is the NVIDIA-style loop walking the list from the front.
"""

from __future__ import annotations

from dataclasses import dataclass

from .common import FitRules, WholeDeviceVendor

__all__ = ["VastaiConfig", "VastaiVendor", "VASTAI", "VASTAI_REGISTER"]

VASTAI = "Vastai"
VASTAI_REGISTER = "hami.io/node-va-register"


@dataclass(slots=True, frozen=True)
class VastaiConfig:
    """The ``vastai:`` block of HAMi's device config."""

    resource_count_name: str = "vastaitech.com/va"


class VastaiVendor(WholeDeviceVendor[VastaiConfig]):
    common_word = VASTAI
    config_class = VastaiConfig
    register_key = VASTAI_REGISTER
    # the NVIDIA-style memory/core checks, walking the list from the front
    rules = FitRules("vastaitech.com/use-gpuuuid", "vastaitech.com/nouse-gpuuuid", forward=True)

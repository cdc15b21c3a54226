"""Device vendors. ``default_vendors`` builds the set a simulator uses, in HAMi's registration order."""

from __future__ import annotations

from .base import FitOutcome, ResourceGetter, Vendor
from .nvidia import NvidiaConfig, NvidiaVendor

__all__ = ["FitOutcome", "ResourceGetter", "Vendor", "NvidiaConfig", "NvidiaVendor", "default_vendors"]


def default_vendors(nvidia: NvidiaConfig | None = None) -> list[Vendor]:
    return [NvidiaVendor(nvidia)]

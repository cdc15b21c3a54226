"""Choices of the profiles app (NetBox style: one place for every enumerated value)."""

from __future__ import annotations

from django.db import models

from hami_sim.engine.vendors import default_word, profile_fields

__all__ = ["InventorySource", "Vendor", "vendor_choices", "DriftKind", "Severity"]


class InventorySource(models.TextChoices):
    """Where a template node's devices come from: annotation, profile, or both in turn (docs/profiles.md)."""

    ANNOTATION_FIRST = "annotation-first", "annotation first, else profile"
    PROFILE_ONLY = "profile-only", "profile only"
    ANNOTATION_ONLY = "annotation-only", "annotation only"


def vendor_choices() -> list[tuple[str, str]]:
    """(CommonWord, label) of every backend of the engine's vendor registry, in HAMi's order.

    A callable, so the model field, the filters and the API follow the registry (a vendor added
    there is a profile choice without a change here); its value is no part of the database schema.
    """
    return [(word, spec.label) for word, spec in profile_fields().items()]


class _VendorChoices:
    """``Vendor.choices`` / ``.values`` / ``.labels`` read live from the registry (TextChoices-like)."""

    @property
    def default(self) -> str:
        """The vendor of a profile that names none: the registry's first backend (HAMi's order)."""
        return default_word()

    @property
    def choices(self) -> list[tuple[str, str]]:
        return vendor_choices()

    @property
    def values(self) -> list[str]:
        return [word for word, _ in vendor_choices()]

    @property
    def labels(self) -> list[str]:
        return [label for _, label in vendor_choices()]


#: Device vendors a profile can describe: the engine vendor's ``common_word`` (HAMi CommonWord), one
#: entry per backend of ``hami_sim.engine.vendors.default_vendors()`` (Ascend and Iluvatar per chip)
Vendor = _VendorChoices()


class DriftKind(models.TextChoices):
    """The drift taxonomy: static differences, dynamic health, and registration problems."""

    MISMATCH = "mismatch", "mismatch"
    DEGRADATION = "degradation", "degradation"
    UNREGISTERED = "unregistered", "unregistered"
    MALFORMED = "malformed", "malformed"


class Severity(models.TextChoices):
    WARNING = "warning", "warning"
    CRITICAL = "critical", "critical"

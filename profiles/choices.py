"""Choices of the profiles app (NetBox style: one place for every enumerated value)."""

from __future__ import annotations

from django.db import models

__all__ = ["InventorySource", "Vendor", "DriftKind", "Severity"]


class InventorySource(models.TextChoices):
    """Where a template node's devices come from (design.md section 4)."""

    ANNOTATION_FIRST = "annotation-first", "annotation first, else profile"
    PROFILE_ONLY = "profile-only", "profile only"
    ANNOTATION_ONLY = "annotation-only", "annotation only"


class Vendor(models.TextChoices):
    """Device vendors a profile can describe (the engine's ``common_word``)."""

    NVIDIA = "NVIDIA", "NVIDIA"


class DriftKind(models.TextChoices):
    """The drift taxonomy: static differences, dynamic health, and registration problems."""

    MISMATCH = "mismatch", "mismatch"
    DEGRADATION = "degradation", "degradation"
    UNREGISTERED = "unregistered", "unregistered"
    MALFORMED = "malformed", "malformed"


class Severity(models.TextChoices):
    WARNING = "warning", "warning"
    CRITICAL = "critical", "critical"

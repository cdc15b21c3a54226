"""Keep profile caches honest: every group/profile/row change bumps the catalog generation."""

from __future__ import annotations

from django.db.models import F, QuerySet
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .inventory import invalidate
from .models import CatalogVersion, DeviceProfile, DeviceRow, NodeGroup, rows_changed

__all__ = ["bump_generation"]


def bump_generation() -> None:
    """Tell this process at once, and every other process within ``PROFILE_CACHE_CHECK_SECONDS``."""
    invalidate()
    if not CatalogVersion.objects.filter(pk=1).update(generation=F("generation") + 1):
        CatalogVersion.objects.get_or_create(pk=1, defaults={"generation": 1})


@receiver(post_save, sender=NodeGroup)
@receiver(post_delete, sender=NodeGroup)
@receiver(post_save, sender=DeviceProfile)
@receiver(post_delete, sender=DeviceProfile)
def _catalog_changed(sender, **kwargs) -> None:
    if kwargs.get("raw"):
        return
    bump_generation()


@receiver(post_save, sender=DeviceRow)
@receiver(post_delete, sender=DeviceRow)
def _row_changed(sender, instance: DeviceRow, **kwargs) -> None:
    if kwargs.get("raw"):
        return
    bump_generation()
    origin = kwargs.get("origin")
    if origin is not None and not isinstance(origin, (DeviceRow, QuerySet)):
        return  # rows cascading away with their profile or group: no edit of the profile to record
    if isinstance(origin, QuerySet) and origin.model is not DeviceRow:
        return
    rows_changed(instance.profile_id)

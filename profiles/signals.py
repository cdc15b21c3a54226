"""Keep profile caches honest: every group/profile/row change bumps the catalog generation."""

from __future__ import annotations

from django.db.models import F
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from .inventory import invalidate
from .models import CatalogVersion, DeviceProfile, DeviceRow, NodeGroup

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
    DeviceProfile.objects.filter(pk=instance.profile_id).update(version=F("version") + 1, updated_at=timezone.now())
    bump_generation()

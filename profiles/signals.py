"""Keep profile caches honest: every group/profile/row change bumps the catalog generation.

A profile save or delete also re-checks drift for its group's nodes once the transaction commits
(synchronously, bounded to that group; one check per group per ``profile_edit``), so the admin and the
API show the findings an edit opens or resolves at once, not at the next periodic ``check_drift``.
"""

from __future__ import annotations

from django.db.models import F, QuerySet
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .drift import check_group_on_commit
from .inventory import invalidate
from .models import CatalogVersion, DeviceProfile, DeviceRow, NodeGroup, current_edit, rows_changed

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


@receiver(post_save, sender=DeviceProfile)
@receiver(post_delete, sender=DeviceProfile)
def _profile_changed(sender, instance: DeviceProfile, **kwargs) -> None:
    if kwargs.get("raw") or instance.node_group_id is None:
        return
    edit = current_edit()
    if edit is not None:
        edit.groups.add(instance.node_group_id)  # checked once when the edit ends
    else:
        check_group_on_commit(instance.node_group_id)

"""Keep profile caches honest: every group/profile/row change bumps the catalog generation.

Profile and row writes are forwarded to ``profiles.services`` (the one home of versions): a save is
stamped with its version there, a row write snapshots (and versions) its profile, and a profile save
or delete re-checks drift for its group's nodes once the transaction commits (one check per group
per ``profile_edit``), so the admin and the API show the findings an edit opens or resolves at once.
"""

from __future__ import annotations

from django.db.models import F, QuerySet
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver
from simple_history.signals import post_create_historical_record

from .inventory import invalidate
from .models import CatalogVersion, DeviceProfile, DeviceRow, NodeGroup
from .services import history_written, profile_saved, rows_changed, stamp_version

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


@receiver(pre_save, sender=DeviceProfile)
def _profile_saving(sender, instance: DeviceProfile, **kwargs) -> None:
    if kwargs.get("raw"):
        return
    stamp_version(instance)  # every save, the service's or the admin's, versions by the same rules


@receiver(post_save, sender=DeviceProfile)
@receiver(post_delete, sender=DeviceProfile)
def _profile_changed(sender, instance: DeviceProfile, **kwargs) -> None:
    if kwargs.get("raw") or instance.node_group_id is None:
        return
    profile_saved(instance.node_group_id)


@receiver(post_create_historical_record, sender=DeviceProfile.history.model)
def _history_written(sender, instance: DeviceProfile, history_instance, **kwargs) -> None:
    history_written(instance.pk, history_instance.history_id, history_instance.history_type)  # one per edit

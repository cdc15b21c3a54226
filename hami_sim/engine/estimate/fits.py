"""HAMi fits shared by the node groups whose devices are alike but for their UUIDs.

Groups of one GPU model differ in zones, capacity types and the UUIDs of their cards; when some pods
select a zone their packings differ (``sharing.py`` cannot share them), but a pod shape's device fit
on a node in a given device state is the same in every such group: HAMi's fit reads the devices'
usage and registration, and a UUID only as an identity when neither the pod nor the devices select
by it (``PodContext.uuid_blind``, ``cache.uuid_blind_devices``). So the fits are memoised per
(pod shape, device state) across those groups, and a fit computed on another group's node is given
the reading group's UUIDs (the devices after placing, copied), the same rule the simulator's cache
follows for template nodes (``Relabelled``).
"""

from __future__ import annotations

from ..model import DeviceUsage

__all__ = ["GroupFits", "SharedFits"]

# (reason, devices after placing or None, their signature): what ``Fitter`` memoises
Fit = tuple[str, list[DeviceUsage] | None, tuple]


class SharedFits:
    """Per device key (``sharing.device_key``) and pod key (``PodContext.key``): the fits by device
    signature, each with the UUIDs of the group whose node it was computed on."""

    __slots__ = ("memos",)

    def __init__(self) -> None:
        self.memos: dict[tuple, dict[tuple, tuple[Fit, tuple[str, ...]]]] = {}

    def memo(self, devices: tuple, pod_key: bytes) -> dict[tuple, tuple[Fit, tuple[str, ...]]]:
        key = (devices, pod_key)
        found = self.memos.get(key)
        if found is None:
            found = self.memos[key] = {}
        return found


class GroupFits:
    """One group's view of the shared fits: its UUIDs, and the fits of other groups relabelled."""

    __slots__ = ("store", "devices", "ids", "maps")

    def __init__(self, store: SharedFits, devices: tuple, ids: tuple[str, ...]) -> None:
        self.store = store
        self.devices = devices
        self.ids = ids
        self.maps: dict[tuple[str, ...], dict[str, str]] = {}  # another group's UUIDs -> ours

    def memo(self, pod_key: bytes) -> dict[tuple, tuple[Fit, tuple[str, ...]]]:
        return self.store.memo(self.devices, pod_key)

    def own(self, fit: Fit, owner: tuple[str, ...]) -> Fit:
        """``fit`` (computed on a node of the group with UUIDs ``owner``) as this group has it."""
        after = fit[1]
        if owner is self.ids or after is None or owner == self.ids:
            return fit
        ids = self.maps.get(owner)
        if ids is None:
            ids = self.maps[owner] = dict(zip(owner, self.ids, strict=True))
        relabelled = []
        for dev in after:
            copy = dev.copy()
            copy.id = ids.get(dev.id, dev.id)
            relabelled.append(copy)
        return fit[0], relabelled, fit[2]

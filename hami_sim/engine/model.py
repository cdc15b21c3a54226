"""Engine dataclasses: what a node registers, the scheduler's working view of it, and requests.

Slotted dataclasses because the extender builds thousands of them per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .annotations import RegistrationTemplate

from .names import pod_key

__all__ = [
    "MigPlacement",
    "MigProfile",
    "DeviceInfo",
    "DeviceUsage",
    "ContainerDeviceRequest",
    "ContainerDevice",
    "PodRequests",
    "PodView",
    "NodeState",
    "InventoryError",
]


@dataclass(slots=True, frozen=True)
class MigPlacement:
    """A MIG placement: the slice range ``[start, start+size)`` a profile instance occupies."""

    start: int
    size: int

    def overlaps(self, other: MigPlacement) -> bool:
        return self.start < other.start + other.size and other.start < self.start + self.size


@dataclass(slots=True, frozen=True)
class MigProfile:
    """A MIG profile a device offers (v2.10 ``migProfiles``)."""

    name: str
    memory_mb: int
    core: int
    slice_count: int
    placements: tuple[MigPlacement, ...] = ()


@dataclass(slots=True)
class DeviceInfo:
    """One registered device, as decoded from a registration annotation (HAMi ``DeviceInfo``)."""

    id: str
    index: int = 0
    count: int = 0
    devmem: int = 0
    devcore: int = 0
    type: str = ""
    numa: int = 0
    mode: str = ""
    health: bool = False
    mig_profiles: tuple[MigProfile, ...] = ()
    device_vendor: str = ""
    custom_info: dict | None = None
    #: the registration template it was decoded with (``annotations.RegistrationTemplate``): the
    #: devices of one registration share it, and with it every field but ``id``; None when decoded
    #: field by field. Not content (left out of equality): a device is never changed after decoding.
    template: RegistrationTemplate | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class DeviceUsage:
    """The scheduler's working view of one device (HAMi ``DeviceUsage``), mutated by placements."""

    id: str
    index: int
    count: int
    totalmem: int
    totalcore: int
    type: str
    numa: int
    mode: str
    health: bool
    vendor: str
    mig_profiles: tuple[MigProfile, ...] = ()
    used: int = 0
    usedmem: int = 0
    usedcores: int = 0
    # MIG placements held on this device: (profile name, placement)
    mig_in_use: list[tuple[str, MigPlacement]] = field(default_factory=list)
    score: float = 0.0
    # vendor-specific registration data (Ascend NetworkID, Enflame DRS profiles, AWS instance type);
    # read-only: shared between copies, never mutated by Fit
    custom_info: dict | None = None
    # HAMi ``PodInfos``: one entry per pod holding this device, with the pod annotations a vendor rule
    # reads from it (``Vendor.pod_info_annotations``: MetaX sGPU's app class). Pods carrying none of
    # them are left out, since no v2.10.0 rule can tell them from no pod (``used`` counts every pod).
    # Empty on templates; filled from live usage and by placements. A tuple: shared between copies.
    pod_infos: tuple[Mapping[str, str], ...] = ()

    @classmethod
    def from_info(cls, info: DeviceInfo) -> DeviceUsage:
        return cls(
            info.id,
            info.index,
            info.count,
            info.devmem,
            info.devcore,
            info.type,
            info.numa,
            info.mode,
            info.health,
            info.device_vendor,
            info.mig_profiles,
            0,
            0,
            0,
            [],
            0.0,
            info.custom_info,
        )

    def copy(self) -> DeviceUsage:
        return DeviceUsage(
            self.id,
            self.index,
            self.count,
            self.totalmem,
            self.totalcore,
            self.type,
            self.numa,
            self.mode,
            self.health,
            self.vendor,
            self.mig_profiles,
            self.used,
            self.usedmem,
            self.usedcores,
            list(self.mig_in_use) if self.mig_in_use else [],
            self.score,
            self.custom_info,
            self.pod_infos,
        )


@dataclass(slots=True, frozen=True)
class ContainerDeviceRequest:
    """One container's request for one vendor (HAMi ``ContainerDeviceRequest``)."""

    nums: int
    type: str
    memreq: int
    mem_percentage_req: int
    coresreq: int


@dataclass(slots=True)
class ContainerDevice:
    """A device chosen for a container (HAMi ``ContainerDevice``), with the MIG slot when MIG."""

    idx: int
    uuid: str
    type: str
    usedmem: int
    usedcores: int
    mig_profile: str = ""
    mig_placement: MigPlacement | None = None


@dataclass(slots=True, frozen=True)
class PodRequests:
    """A pod's device requests: one ``{vendor: request}`` per container, init containers first."""

    containers: tuple[dict[str, ContainerDeviceRequest], ...]
    init_count: int

    @property
    def has_requests(self) -> bool:
        return any(self.containers)


@dataclass(slots=True)
class PodView:
    """What the engine needs of a pod: identity, annotations and parsed device requests.

    Lives here, beside the requests it carries, so that both ``requests.py`` (which builds it) and
    the vendors (whose Fit reads it) import it from below instead of from each other.
    """

    name: str
    namespace: str
    uid: str
    annotations: dict[str, str]
    requests: PodRequests
    owner: str = ""

    @property
    def key(self) -> str:
        """The pod's id in sessions and estimates: ``metadata.uid``, else ``<namespace>/<name>``."""
        return pod_key(self.uid, self.namespace, self.name)


@dataclass(slots=True)
class NodeState:
    """A node's devices as the scheduler sees them, plus what Fit reads from the node."""

    name: str
    devices: list[DeviceUsage]
    pair_scores: dict[str, dict[str, int]] = field(default_factory=dict)
    cordoned: frozenset[str] = frozenset()

    def copy(self) -> NodeState:
        return NodeState(self.name, [d.copy() for d in self.devices], self.pair_scores, self.cordoned)


class InventoryError(ValueError):
    """A registration annotation exists but cannot be used; ``str()`` is the operator-facing reason."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"malformed {key}: {detail}")
        self.key = key
        self.detail = detail

"""Engine dataclasses: what a node registers, the scheduler's working view of it, and requests.

Slotted dataclasses because the extender builds thousands of them per call.

**What a fit reads.** Each type declares the fields a fit depends on (``FIT_READS``) and the fields
it does not, each with the reason (``NOT_READ``); every cache key over these types is derived from
the declarations (``SHAPE`` below, the pod key in ``simulate``, the device-score key in ``policy``,
the estimator's usage signature, the registration template in ``registration_templates``, the gRPC expander's
packing key), and ``tests/engine/test_fit_reads.py`` fails when a field is in neither.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from .cache_entries import Entry
    from .registration_templates import RegistrationTemplate

from .frozen import EMPTY, slot_init
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
    "Inventory",
    "InventoryError",
    "positional",
]

_T = TypeVar("_T")


@dataclass(slots=True, frozen=True)
class MigPlacement:
    """A MIG placement: the slice range ``[start, start+size)`` a profile instance occupies."""

    FIT_READS: ClassVar[tuple[str, ...]] = ("start", "size")
    NOT_READ: ClassVar[Mapping[str, str]] = {}

    start: int
    size: int

    def overlaps(self, other: MigPlacement) -> bool:
        return self.start < other.start + other.size and other.start < self.start + self.size


@dataclass(slots=True, frozen=True)
class MigProfile:
    """A MIG profile a device offers (v2.10 ``migProfiles``)."""

    FIT_READS: ClassVar[tuple[str, ...]] = ("name", "memory_mb", "core", "slice_count", "placements")
    NOT_READ: ClassVar[Mapping[str, str]] = {}

    name: str
    memory_mb: int
    core: int
    slice_count: int
    placements: tuple[MigPlacement, ...] = ()


@dataclass(slots=True, frozen=True)
class DeviceInfo:
    """One registered device, as decoded from a registration annotation (HAMi ``DeviceInfo``).

    Frozen: cached inventories share it with every request. Built by ``frozen.slot_init`` (below):
    the generated frozen ``__init__`` costs ~2.3 us against ~0.45 us for a writable one, ``slot_init``
    ~1.3 us, and a cold CA call can decode thousands (most are rebuilt from a registration template
    instead, ``registration_templates``). A decoder that adjusts a device builds a new one (``dataclasses.replace``).
    """

    FIT_READS: ClassVar[tuple[str, ...]] = (
        "id", "index", "count", "devmem", "devcore", "type", "numa", "mode", "health", "mig_profiles",
        "device_vendor", "custom_info",
    )  # fmt: skip
    NOT_READ: ClassVar[Mapping[str, str]] = {
        "template": "how it was decoded (one registration's devices share it), not what it registers",
    }
    #: what a verdict on a node depends on when it cannot depend on UUIDs (``cache.uuid_free_shape``):
    #: every field read but the UUID and the vendor data (a device that has any is never shared)
    SHAPE: ClassVar[tuple[str, ...]]

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
    custom_info: Mapping[str, Any] | None = None  # a ``FrozenDict`` (``slot_init`` freezes any other)
    #: the registration template it was decoded with (``registration_templates.RegistrationTemplate``): the
    #: devices of one registration share it, and with it every field but ``id``; None when decoded
    #: field by field. Not content (left out of equality): a device is never changed after decoding.
    template: RegistrationTemplate | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class DeviceUsage:
    """The scheduler's working view of one device (HAMi ``DeviceUsage``), mutated by placements."""

    FIT_READS: ClassVar[tuple[str, ...]] = (
        "id", "index", "count", "totalmem", "totalcore", "type", "numa", "mode", "health", "vendor",
        "mig_profiles", "used", "usedmem", "usedcores", "mig_in_use", "custom_info", "pod_infos",
    )  # fmt: skip
    NOT_READ: ClassVar[Mapping[str, str]] = {
        "score": "an output: computed for each container from the fields read (``policy.device_score``)",
    }
    #: what ``policy.device_score`` reads (its memo's key)
    SCORE_READS: ClassVar[tuple[str, ...]] = (
        "type",
        "count",
        "totalcore",
        "totalmem",
        "used",
        "usedcores",
        "usedmem",
    )
    #: what a placement changes (the estimator's usage signature); the rest comes from the registration
    PLACEMENT_CHANGES: ClassVar[tuple[str, ...]] = (
        "used", "usedmem", "usedcores", "mig_in_use", "custom_info", "pod_infos",
    )  # fmt: skip

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
    custom_info: Mapping[str, Any] | None = None
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

    FIT_READS: ClassVar[tuple[str, ...]] = ("nums", "type", "memreq", "mem_percentage_req", "coresreq")
    NOT_READ: ClassVar[Mapping[str, str]] = {}

    nums: int
    type: str
    memreq: int
    mem_percentage_req: int
    coresreq: int


@dataclass(slots=True, frozen=True)
class ContainerDevice:
    """A device chosen for a container (HAMi ``ContainerDevice``), with the MIG slot when MIG.

    Frozen: cached verdicts hand one to every request (a MIG placement is a new one, ``Vendor.placed``).
    """

    FIT_READS: ClassVar[tuple[str, ...]] = (
        "idx", "uuid", "type", "usedmem", "usedcores", "mig_profile", "mig_placement",
    )  # fmt: skip
    NOT_READ: ClassVar[Mapping[str, str]] = {}

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

    FIT_READS: ClassVar[tuple[str, ...]] = ("containers", "init_count")
    NOT_READ: ClassVar[Mapping[str, str]] = {}

    containers: tuple[Mapping[str, ContainerDeviceRequest], ...]  # read-only: a parsed pod is shared
    init_count: int

    @property
    def has_requests(self) -> bool:
        return any(self.containers)


@dataclass(slots=True, frozen=True)
class PodView:
    """What the engine needs of a pod: identity, annotations and parsed device requests.

    Lives here, beside the requests it carries, so that both ``requests.py`` (which builds it) and
    the vendors (whose Fit reads it) import it from below instead of from each other.
    """

    #: (the pod key, ``simulate.PodContext.key``, is derived from these)
    FIT_READS: ClassVar[tuple[str, ...]] = ("annotations", "requests")
    NOT_READ: ClassVar[Mapping[str, str]] = {
        "name": "identity: no rule or reason names the pod, so pods that differ only in it share verdicts",
        "namespace": "identity (as name)",
        "uid": "identity (as name)",
        "owner": "the controller, read by the estimator's grouping only",
    }

    name: str
    namespace: str
    uid: str
    annotations: Mapping[str, str]  # read-only (``MappingProxyType``): a parsed pod is shared
    requests: PodRequests
    owner: str = ""

    @property
    def key(self) -> str:
        """The pod's id in sessions and estimates: ``metadata.uid``, else ``<namespace>/<name>``."""
        return pod_key(self.uid, self.namespace, self.name)


@dataclass(slots=True)
class NodeState:
    """A node's devices as the scheduler sees them, plus what Fit reads from the node."""

    FIT_READS: ClassVar[tuple[str, ...]] = ("devices", "pair_scores", "cordoned")
    NOT_READ: ClassVar[Mapping[str, str]] = {
        "name": "identity: no reason names the node (verdicts are shared between nodes)",
    }

    name: str
    devices: list[DeviceUsage]
    pair_scores: Mapping[str, Mapping[str, int]] = field(default_factory=lambda: EMPTY)  # shared, read-only
    cordoned: frozenset[str] = frozenset()

    def copy(self) -> NodeState:
        return NodeState(self.name, [d.copy() for d in self.devices], self.pair_scores, self.cordoned)


DeviceInfo.__init__ = slot_init(DeviceInfo, frozen=("custom_info",))  # type: ignore[method-assign]
DeviceInfo.SHAPE = tuple(f for f in DeviceInfo.FIT_READS if f not in ("id", "custom_info"))


@dataclass(slots=True, frozen=True, weakref_slot=True)
class Inventory:
    """A node's device inventory as registered, where it came from, and why there is none when
    there is none. Decoded once per registration and shared by every request naming it (frozen);
    ``entry`` is the filter-path cache's record of it (``cache.Entry``: its verdicts), None when
    not cached."""

    FIT_READS: ClassVar[tuple[str, ...]] = ("devices", "pair_scores", "cordoned")
    NOT_READ: ClassVar[Mapping[str, str]] = {
        "node_group": "where the answer is attributed (copied onto each verdict)",
        "source": "where the devices came from (copied onto each verdict)",
        "error": "an inventory with an error is never fit (its error is the answer)",
        "key": "its identity (a digest or a process-unique key), not content",
        "entry": "the cache's record of it",
    }

    # a tuple, or a registration template's devices built when read (``registration_templates.RebuiltDevices``)
    devices: Sequence[DeviceInfo] = ()
    # read-only (``FrozenDict``: sessions write it out with orjson, which refuses a mapping proxy)
    pair_scores: Mapping[str, Mapping[str, int]] = field(default_factory=lambda: EMPTY)
    cordoned: frozenset[str] = frozenset()
    node_group: str | None = None
    source: str = "annotation"  # "annotation" | "profile" | "none"
    error: str = ""  # non-empty: unresolvable (FailedAndUnresolvableNodes)
    key: bytes = b""
    entry: Entry | None = field(default=None, compare=False, repr=False)

    def state(self, name: str) -> NodeState:
        return NodeState(
            name, [DeviceUsage.from_info(d) for d in self.devices], self.pair_scores, self.cordoned
        )


class InventoryError(ValueError):
    """A registration annotation exists but cannot be used; ``str()`` is the operator-facing reason."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"malformed {key}: {detail}")
        self.key = key
        self.detail = detail


def positional(cls: type[_T]) -> Callable[..., _T]:
    """A constructor of the frozen, slotted dataclass ``cls`` from all its fields in order, setting
    each slot directly: a frozen ``__init__`` goes through ``object.__setattr__`` per field (a
    ContainerDevice costs ~0.9 us, about half saved), and a cold CA call builds several for each of
    thousands of nodes (``Inventory``, relabelled verdicts, sightings). The values are taken as
    given (no defaults, no ``__post_init__``), so the instance equals ``cls(*values)``; code
    generated once, as ``dataclasses`` does for ``__init__``."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    assert all(f.init for f in fields) and not hasattr(cls, "__post_init__")
    names = [f.name for f in fields]
    env: dict[str, object] = {"_new": object.__new__, "_cls": cls}
    env.update({f"_set_{n}": getattr(cls, n).__set__ for n in names})
    body = "".join(f"    _set_{n}(o, {n})\n" for n in names)
    exec(f"def build({', '.join(names)}):\n    o = _new(_cls)\n{body}    return o\n", env)  # noqa: S102
    return env["build"]  # type: ignore[return-value]

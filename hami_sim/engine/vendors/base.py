"""The device-vendor interface (HAMi's ``device.Devices``), one implementation per vendor module.

``fit.py`` and ``simulate.py`` only talk to this interface: adding a vendor never touches them.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from ..hami_releases import HamiRules
from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState
from .reads import NodeReads
from .selection import check_type, check_uuid, type_allows, uuid_check

if TYPE_CHECKING:
    from ..allocations import NodeUsage, PodAllocation
    from ..model import PodView
    from ..policy import GpuPolicy
    from .nvidia_mig import MigAllocation

__all__ = [
    "FitOutcome",
    "NodeReads",
    "PriorDevices",
    "Reservations",
    "UuidIdentity",
    "Vendor",
    "ResourceGetter",
    "go_parse_bool",
    "check_uuid",
    "check_type",
    "uuid_check",
    "type_allows",
]

#: HAMi's ``allocated``: per earlier container of the pod, the devices this vendor gave it
PriorDevices: TypeAlias = Sequence[Sequence[ContainerDevice]]

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


def go_parse_bool(value: str | None) -> bool:
    """Go ``strconv.ParseBool`` true values; anything else (including errors) is false."""
    return value in _GO_TRUE


@dataclass(slots=True)
class FitOutcome:
    """What a vendor's Fit answers: success with chosen devices, or HAMi's aggregated reason."""

    ok: bool
    devices: list[ContainerDevice]
    reason: str = ""
    # the first rule that rejected each device (for decision records; HAMi only counts them)
    device_reasons: dict[str, str] = field(default_factory=dict)


class ResourceGetter:
    """Reads a container's resources as HAMi does: ``limits[name]`` first, else ``requests[name]``."""

    __slots__ = ("limits", "requests")

    def __init__(self, limits: Mapping[str, object], requests: Mapping[str, object]) -> None:
        self.limits = limits
        self.requests = requests

    def get(self, name: str) -> object | None:
        value = self.limits.get(name)
        if value is None:
            value = self.requests.get(name)
        return value

    def names(self) -> set[str]:
        return set(self.limits) | set(self.requests)


class Vendor(ABC):
    """One HAMi device backend (HAMi's ``device.Devices``), written as one class per backend.

    A backend class derives from this one directly and reads top to bottom: its config and
    ``resource_fields``, ``node_reads`` (the one declaration of what it reads from a node, from
    which the simulator's ``registration_sources``, ``inventory_annotations`` and ``inventory_key``
    are derived, never written by hand), ``node_devices`` (its registration codec),
    ``container_request`` (its request rules) and ``fit``. Behaviour several backends share is
    delegated to the small rule objects and functions of ``node_codecs``, ``request_rules`` and
    ``fit_loop``, not inherited. The rest of HAMi's interface (usage, scoring) has defaults.
    """

    #: the request/device Type key (HAMi ``CommonWord``), e.g. ``NVIDIA``
    common_word: str = ""
    #: the pod annotation HAMi writes this vendor's allocation to (``device.SupportDevices``);
    #: empty means v2.10.0's default for chips named by CommonWord (``allocated_key``)
    allocated_annotation: str = ""
    #: the pod annotations this backend's rules read from the pods already on a device (HAMi's
    #: ``DeviceUsage.PodInfos``); kept in ``DeviceUsage.pod_infos`` (at v2.10.0 only MetaX sGPU reads any)
    pod_info_annotations: tuple[str, ...] = ()
    #: the config block class (a frozen dataclass of HAMi device-config fields, Helm defaults)
    config_class: type = type(None)
    #: the config fields holding pod resource names (``resource_names``); ``drop_unset_names``: an
    #: empty name means "not configured" (HAMi's ``ResourceNames`` reports every name otherwise)
    resource_fields: tuple[str, ...] = ()
    drop_unset_names: bool = False
    #: where a UUID is only an identity (``fit_ignores_uuids``); None: never assumed
    uuids: UuidIdentity | None = None
    #: what this backend's pods reserve on a device beside the allocated annotation, and how live
    #: usage counts it (``Reservations``; NVIDIA: MIG placements); None: nothing
    reservations: Reservations | None = None
    #: whether a node may advertise this backend's memory and cores names as the sum of its cards
    #: (the blind spot's aggregate capacity, ``blindspot.aggregate``); NVIDIA's alone at v2.10.0
    sums_capacity: bool = False

    #: the HAMi release's rules this backend follows (``under``); v2.10.0's unless given
    release_rules: HamiRules = HamiRules()
    #: the ``HamiRules`` field saying whether a release has this backend at all ("": every release)
    exists_by: str = ""
    #: whether this backend's Fit skipped unhealthy devices before every backend's did (#2260):
    #: NVIDIA's and MetaX sGPU's (``fit_devices``)
    health_always_checked: bool = False

    def __init__(self, config: Any = None) -> None:
        self.config: Any = config if config is not None else self.config_class()
        #: what this backend reads from a node (``node_reads``), fixed once configured
        self.reads: NodeReads = self.node_reads()

    def fit_devices(self, devices: list[DeviceUsage]) -> list[DeviceUsage]:
        """The devices as this backend's Fit reads them under its release: before v2.10 (#2260,
        Ascend's #2241) most backends never read a device's health, so an unhealthy device takes
        pods like a healthy one (a healthy-marked copy; usage is still counted on the original)."""
        if self.health_always_checked or self.release_rules.unhealthy_skipped:
            return devices
        if all(dev.health for dev in devices):
            return devices
        out = []
        for dev in devices:
            if not dev.health:
                dev = dev.copy()
                dev.health = True
            out.append(dev)
        return out

    def release_reservations(self) -> Reservations | None:
        """``reservations`` as this backend's release counts them (NVIDIA: its release's MIG rules)."""
        return self.reservations

    def under(self, rules: HamiRules) -> Vendor | None:
        """This backend following a release's ``rules``: itself when it already does, else a copy
        (a simulator resolves its release once, so no Fit asks which release is in force); None
        when the release has no such backend (``exists_by``)."""
        if self.exists_by and not getattr(rules, self.exists_by):
            return None
        if rules == self.release_rules:
            return self
        twin = copy.copy(self)
        twin.release_rules = rules
        return twin

    # -- what it reads from a node: one declaration, three derived views -------------------------
    @abstractmethod
    def node_reads(self) -> NodeReads:
        """The node sources this backend reads (registration, capacity, labels, name)."""

    def registration_sources(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """(annotation keys, ``status.capacity`` names) whose presence makes this vendor read a node;
        None: every node (``NodeReads.sources``)."""
        return self.reads.sources()

    def inventory_annotations(self) -> tuple[str, ...] | None:
        """The annotation keys that are all ``inventory_key`` reads, or None (``NodeReads``)."""
        return self.reads.annotation_keys()

    def inventory_key(self, annotations: Mapping[str, str], node: Mapping) -> tuple:
        """What ``node_devices`` reads from the node that a fit depends on (``NodeReads.key``)."""
        return self.reads.key(self.common_word, annotations, node)

    # -- HAMi's Devices interface ------------------------------------------------------------------
    def resource_names(self) -> frozenset[str]:
        """Every pod resource name this vendor manages (CA must ignore them: ``ignoredByScheduler``)."""
        names = (getattr(self.config, name) for name in self.resource_fields)
        return frozenset(n for n in names if n) if self.drop_unset_names else frozenset(names)

    def allocated_key(self) -> str:
        """The pod annotation that carries this vendor's allocation (live usage reads it)."""
        return self.allocated_annotation or f"hami.io/{self.common_word}-devices-allocated"

    @abstractmethod
    def node_devices(
        self, annotations: Mapping[str, str], node: Mapping
    ) -> tuple[list[DeviceInfo], dict[str, dict[str, int]]]:
        """``GetNodeDevices``: devices and pair scores; ``[]`` when the node has none of this vendor.

        Raises ``InventoryError`` when the registration exists but is unusable.
        """

    @abstractmethod
    def container_request(self, resources: ResourceGetter) -> ContainerDeviceRequest | None:
        """``GenerateResourceRequests`` for one container; None when it asks nothing of this vendor."""

    @abstractmethod
    def fit(
        self,
        devices: list[DeviceUsage],
        request: ContainerDeviceRequest,
        pod: PodView,
        node: NodeState,
        policy: GpuPolicy,
        allocated: PriorDevices = (),
    ) -> FitOutcome:
        """``Fit``: choose devices from ``devices`` (sorted by policy) or explain why not.

        One signature for every vendor, as HAMi's ``Fit(devices, request, pod, nodeInfo, allocated)``:
        ``allocated`` is what this vendor already gave the pod's earlier containers of the same phase
        (init containers among themselves, app containers among themselves), one list per container.
        The engine always passes it; only vendors whose ``CustomFilterRule`` reads it look at it.
        """

    def binds_numa(self, annotations: Mapping[str, str]) -> bool:
        """Whether the pod's annotations ask this vendor for single-NUMA placement.

        The simulator puts the ``numa`` GPU policy first when any vendor says so (NVIDIA's
        ``nvidia.com/numa-bind``), so it never has to name a vendor's annotation itself.
        """
        return False

    def is_mig_request(
        self, request: ContainerDeviceRequest, devices: list[DeviceUsage], pod: PodView
    ) -> bool:
        """Whether one device may supply several of the request's devices (NVIDIA MIG)."""
        return False

    def add_usage(self, dev: DeviceUsage, chosen: ContainerDevice) -> str | None:
        """``AddResourceUsage``: account the chosen slice on the device; an error text on failure."""
        dev.used += 1
        dev.usedmem += chosen.usedmem
        dev.usedcores += chosen.usedcores
        return None

    def placed(self, dev: DeviceUsage, chosen: ContainerDevice) -> ContainerDevice:
        """``chosen`` as ``add_usage`` placed it on ``dev``: HAMi's AddResourceUsage rewrites the
        container device (NVIDIA MIG: the profile's memory and cores and its slot); ours are frozen
        (cached verdicts share them), so a vendor that rewrites returns a new one. Default: as is."""
        return chosen

    def add_pod_usage(self, dev: DeviceUsage, chosen: ContainerDevice, pod: PodView) -> str | None:
        """``AddResourceUsage(pod, ...)``: ``add_usage`` for backends that also read the pod.

        ``fit_in_devices`` calls this; the default delegates to ``add_usage`` so vendors that only
        count usage override that one. A backend that changes ``custom_info`` (shared read-only
        between copies) must replace the dict, never mutate it.
        """
        return self.add_usage(dev, chosen)

    def holding_limits(self, count: int, memory: int, cores: int) -> dict[str, str]:
        """Container limits that ask again for what a pod holds on ``count`` of this backend's
        devices, at most ``memory`` MiB and ``cores`` on one: how the blind spot re-places the pods
        of a node it drains. Empty: this backend's holdings are not re-asked (the pod is left out)."""
        return {}

    def score_node(
        self,
        pod_devices: Sequence[Sequence[ContainerDevice]],
        previous: Sequence[DeviceUsage],
        policy: str,
        pod: PodView,
    ) -> float:
        """``ScoreNode``: what HAMi's ``OverrideScore`` adds to the node score (float32).

        ``pod_devices``: this vendor's devices per container (init containers first, HAMi's
        ``PodSingleDevice``); ``previous``: every device of the node before the app containers were
        placed (``SnapshotDevice``); ``policy``: the node scheduler policy. 0 unless the vendor's
        HAMi backend scores nodes (MetaX, MetaX sGPU, Kunlunxin, Ascend 910).
        """
        return 0.0

    # -- where a UUID is only an identity (``uuids``) ----------------------------------------------
    def fit_ignores_uuids(self, annotations: Mapping[str, str]) -> bool:
        """Whether this vendor's Fit, usage accounting and reasons, for a pod with ``annotations``,
        use a device's UUID only as an identity on the devices ``uuid_blind_device`` accepts
        (``UuidIdentity``). False unless the backend declares ``uuids``."""
        uuids = self.uuids
        return uuids is not None and not any(key in annotations for key in uuids.selection)

    def uuid_blind_device(self, dev: DeviceInfo) -> bool:
        """The device side of ``fit_ignores_uuids`` (``UuidIdentity.device``)."""
        return self.uuids is not None and self.uuids.device(dev)


@dataclass(frozen=True, slots=True)
class UuidIdentity:
    """Where a backend's Fit, usage accounting and reasons use a device's UUID only as an identity
    (compared for equality, never listed or printed).

    ``selection``: the pod annotations that select devices by UUID (with any of them the pod's
    verdict depends on UUIDs); ``device``: whether a device's UUID is only an identity (must not
    read the UUID itself). When every device of a node and every request of the pod say so, a
    zero-usage verdict is the same on any node whose devices differ only in their UUIDs, so the
    simulator fits one such node and relabels the chosen devices for the others (the templates of
    one node group). The node side (cordons and pair scores name UUIDs) is the simulator's to check.
    """

    selection: tuple[str, ...]
    device: Callable[[DeviceInfo], bool]


class Reservations(Protocol):
    """A backend's rule for what its pods reserve beside their allocated annotation, as HAMi's
    ``getNodesUsage`` counts it (``allocations`` calls it through ``vendors.reservation_rules``).
    At v2.10.0 only NVIDIA has one: MIG placements (``nvidia_mig.MigReservations``)."""

    @property
    def annotation(self) -> str:
        """The pod annotation holding the reservations."""

    def decode(self, text: str) -> tuple[MigAllocation, ...]:
        """The reservations in the annotation's text; none when HAMi ignores them."""

    def count(self, usage: NodeUsage, pod: PodAllocation, registered: Mapping[str, str]) -> None:
        """Count one pod's reservations on a node's devices (``registered``: UUID -> mode)."""

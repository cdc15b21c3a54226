"""The device-vendor interface (HAMi's ``device.Devices``), one implementation per vendor module.

``fit.py`` and ``simulate.py`` only talk to this interface: adding a vendor never touches them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from ..model import ContainerDevice, ContainerDeviceRequest, DeviceInfo, DeviceUsage, NodeState

if TYPE_CHECKING:
    from ..model import PodView
    from ..policy import GpuPolicy

__all__ = [
    "FitOutcome",
    "PriorDevices",
    "Vendor",
    "ResourceGetter",
    "go_parse_bool",
    "check_uuid",
    "check_type",
]

#: HAMi's ``allocated``: per earlier container of the pod, the devices this vendor gave it
PriorDevices: TypeAlias = Sequence[Sequence[ContainerDevice]]

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


def go_parse_bool(value: str | None) -> bool:
    """Go ``strconv.ParseBool`` true values; anything else (including errors) is false."""
    return value in _GO_TRUE


def check_uuid(annotations: Mapping[str, str], dev_id: str, use_key: str, nouse_key: str) -> bool:
    """``CheckUUID``: comma lists of exact IDs; an empty or blank value means no constraint."""
    if use_key not in annotations and nouse_key not in annotations:
        return True
    use = annotations.get(use_key, "")
    if use.strip() and dev_id not in {p.strip() for p in use.split(",")}:
        return False
    nouse = annotations.get(nouse_key, "")
    return not (nouse.strip() and dev_id in {p.strip() for p in nouse.split(",")})


def check_type(annotations: Mapping[str, str], card_type: str, use_key: str, nouse_key: str) -> bool:
    """``device.CheckType``: upper-cased substring match of the card type against each listed entry.

    A list constrains when its value is not blank; entries are trimmed and an empty entry matches
    nothing, so a use list made only of commas (``","``) rejects every card, while ``""`` or ``"  "``
    is no constraint.
    """
    upper = card_type.upper()

    def listed(value: str) -> bool:
        return any(entry and entry.upper() in upper for entry in (p.strip() for p in value.split(",")))

    use = annotations.get(use_key)
    if use is not None and use.strip() and not listed(use):
        return False
    nouse = annotations.get(nouse_key)
    return not (nouse is not None and nouse.strip() and listed(nouse))


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
    """One HAMi device backend: registration, request parsing, Fit, usage accounting."""

    #: the request/device Type key (HAMi ``CommonWord``), e.g. ``NVIDIA``
    common_word: str = ""
    #: the pod annotation HAMi writes this vendor's allocation to (``device.SupportDevices``);
    #: empty means v2.10.0's default for chips named by CommonWord (``allocated_key``)
    allocated_annotation: str = ""
    #: the pod annotations this backend's rules read from the pods already on a device (HAMi's
    #: ``DeviceUsage.PodInfos``); kept in ``DeviceUsage.pod_infos`` (at v2.10.0 only MetaX sGPU reads any)
    pod_info_annotations: tuple[str, ...] = ()

    def allocated_key(self) -> str:
        """The pod annotation that carries this vendor's allocation (live usage reads it)."""
        return self.allocated_annotation or f"hami.io/{self.common_word}-devices-allocated"

    @abstractmethod
    def resource_names(self) -> frozenset[str]:
        """Every pod resource name this vendor manages (CA must ignore them: ``ignoredByScheduler``)."""

    @abstractmethod
    def inventory_key(self, annotations: Mapping[str, str], node: Mapping) -> tuple:
        """What ``node_devices`` reads from the node, for caching parsed inventories."""

    def inventory_annotations(self) -> tuple[str, ...] | None:
        """The annotation keys ``inventory_key`` reads, when they are all it reads (and it returns
        nothing else that varies): the simulator then keys a node's inventory by their values alone,
        without calling ``inventory_key`` per node. None, the default: ``inventory_key`` is called.
        A subclass that overrides one of the two overrides both (tests/vendors check it)."""
        return None

    def registration_sources(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """(annotation keys, ``status.capacity`` names) whose presence makes this vendor read a node.

        Lets the simulator skip vendors a node does not register for (most nodes carry one or two
        of the ~25 backends). None, the default, means "always read the node".
        """
        return None

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

    def fit_ignores_uuids(self, annotations: Mapping[str, str]) -> bool:
        """Whether this vendor's Fit, usage accounting and reasons, for a pod with ``annotations``,
        use a device's UUID only as an identity (compared for equality, never listed or printed)
        on the devices ``uuid_blind_device`` accepts.

        When every device of a node and every request of the pod say so, a zero-usage verdict is
        the same on any node whose devices differ only in their UUIDs, so the simulator fits one
        such node and relabels the chosen devices for the others (the templates of one node group).
        The node side (cordons and pair scores name UUIDs) is the simulator's to check. False
        unless a vendor's rules have been read for it.
        """
        return False

    def uuid_blind_device(self, dev: DeviceInfo) -> bool:
        """The device side of ``fit_ignores_uuids``: whether ``dev``'s UUID is only an identity.
        Must not read the UUID itself: the answer holds for every device with the same other fields."""
        return False

    def binds_numa(self, annotations: Mapping[str, str]) -> bool:
        """Whether the pod's annotations ask this vendor for single-NUMA placement.

        The simulator puts the ``numa`` GPU policy first when any vendor says so (NVIDIA's
        ``nvidia.com/numa-bind``), so it never has to name a vendor's annotation itself.
        """
        return False

    def is_mig_request(
        self, request: ContainerDeviceRequest, devices: list[DeviceUsage], pod: PodView
    ) -> bool:
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

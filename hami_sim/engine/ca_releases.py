"""The Cluster Autoscaler releases hami-sim follows, and what differs between them.

CA's README recommends the CA minor made for the cluster's Kubernetes minor, so operators run every
CA minor from 1.32 to the newest. ``CA_VERSION`` (a setting) names the one the cluster runs; this module turns it into a
:class:`CARelease` that says, for that exact release, which gRPC expander fields CA sends, whether
its binpacking estimator retries the other new nodes after a hostname-spread failure, how it orders
equivalence groups, its default expander, whether ``--enable-dynamic-resource-allocation`` is locked
on, whether an empty expander answer is reported on the pods and which scheduler-config apiVersion
its ``--scheduler-config-file`` loader decodes.

Every fact is a :data:`CHANGES` row naming the CA release that introduced it and the file of
``kubernetes/autoscaler`` (tag ``cluster-autoscaler-<version>``) it was read from, so the table in
docs/cluster-autoscaler.md and this code come from one place. Facts that changed in a patch release
(the retry was backported to 1.33.1, the two-field wire form arrived in 1.34.2) are keyed by patch,
which is why a version is always resolved to a full ``1.x.y``: a bare minor means the patch we pin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "CAVersionError",
    "Wire",
    "Minor",
    "Change",
    "CARelease",
    "MINORS",
    "CHANGES",
    "NEWEST",
    "DEFAULT_VERSION",
    "SUPPORTED",
    "parse_ca_version",
    "ca_release",
    "releases",
]


class CAVersionError(ValueError):
    """A CA version hami-sim does not follow; ``str()`` says which ones it does."""


class Wire(StrEnum):
    """Which fields of ``expander.proto`` CA's gRPC expander client fills
    (``expander/grpcplugin/grpc_client.go``)."""

    # BestOptionsRequest.nodeMap = 2 (map<string, k8s.io.api.core.v1.Node>), Option.pod = 4
    OBJECTS = "objects"
    # both the above and nodeBytesMap = 3 (map<string, bytes>), Option.podBytes = 5
    BOTH = "both"
    # only nodeBytesMap = 3 and Option.podBytes = 5 (each a protobuf-encoded Node / Pod)
    BYTES = "bytes"

    @property
    def sends_objects(self) -> bool:
        return self is not Wire.BYTES

    @property
    def sends_bytes(self) -> bool:
        return self is not Wire.OBJECTS


@dataclass(frozen=True)
class Minor:
    """One CA minor: the newest patch we know (and pin in deploy/), and the ``k8s.io/kubernetes``
    module that patch builds its scheduler framework from (``cluster-autoscaler/go.mod``)."""

    minor: int
    latest_patch: int
    kubernetes: str

    @property
    def pinned(self) -> str:
        return f"1.{self.minor}.{self.latest_patch}"


# Newest tag cluster-autoscaler-1.<minor>.<patch> in kubernetes/autoscaler for each minor.
MINORS: tuple[Minor, ...] = (
    Minor(32, 7, "v1.32.12"),
    Minor(33, 6, "v1.33.13"),
    Minor(34, 5, "v1.34.9"),
    Minor(35, 2, "v1.35.6"),
    Minor(36, 1, "v1.36.2"),
)
_BY_MINOR = {m.minor: m for m in MINORS}


@dataclass(frozen=True)
class CARelease:
    """What one exact CA release does, where hami-sim's answers depend on it."""

    major: int
    minor: int
    patch: int
    # gRPC expander request fields CA fills
    wire: Wire = Wire.OBJECTS
    # binpacking: after the last new node fails a pod on topology spread with a
    # kubernetes.io/hostname constraint, try the other new nodes before adding one
    hostname_retry: bool = False
    # binpacking: equivalence groups ordered by the pod's full requests (init containers, sidecars,
    # overhead: PodRequests) over the template's allocatable; False: the sum of the regular
    # containers' requests only
    order_by_pod_requests: bool = False
    # binpacking: once CA's limiter refuses a node, later equivalence groups try only the nodes
    # added so far (the answer is the same; CA just stops asking)
    stop_after_limit: bool = False
    # --max-binpacking-time: once it has passed (checked after each node group), no further node
    # group is binpacked and the expander chooses among the groups done; False: only logged
    binpacking_time_stops: bool = False
    # --expander default
    default_expander: str = "random"
    # --enable-dynamic-resource-allocation: default on and any other value fatal at start
    dra_locked_on: bool = False
    # --fastpath-binpacking-enabled exists (default false; hami-sim follows the full binpacking)
    fastpath_flag: bool = False
    # an expander chain that leaves no option is logged at the default level ("Expander filtered out
    # all options") and written on the pods as NotTriggerScaleUp; False: only the gRPC client's
    # --v=4 line "GRPC returned nil bestOptions", and no event on the pods
    empty_answer_reported: bool = False
    # what --scheduler-config-file must declare (utils/scheduler ConfigFromPath decodes with
    # kube-scheduler's scheme, whose only served version is v1 from Kubernetes 1.29 on)
    scheduler_api_version: str = "kubescheduler.config.k8s.io/v1"

    @property
    def version(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    @property
    def kubernetes(self) -> str:
        """The Kubernetes minor this CA is made for (CA's README recommends matching the cluster's)."""
        return f"{self.major}.{self.minor}"

    @property
    def image(self) -> str:
        return f"registry.k8s.io/autoscaling/cluster-autoscaler:v{self.version}"

    def __str__(self) -> str:
        return self.version


@dataclass(frozen=True)
class Change:
    """CA behaviour that changed in ``since`` (and stays so in every later release)."""

    since: tuple[int, int, int]
    attribute: str
    value: object
    source: str  # path in kubernetes/autoscaler at tag cluster-autoscaler-<since>
    summary: str


_FLAGS_133 = "cluster-autoscaler/config/flags/flags.go"
CHANGES: tuple[Change, ...] = (
    Change(
        (1, 33, 0),
        "default_expander",
        "least-waste",
        _FLAGS_133,
        "--expander defaults to least-waste (1.32: random, in main.go)",
    ),
    Change(
        (1, 33, 0),
        "order_by_pod_requests",
        True,
        "cluster-autoscaler/estimator/decreasing_pod_orderer.go",
        "equivalence groups are ordered by the pod's full requests (PodRequests: init containers, "
        "sidecars, overhead), not the sum of the regular containers",
    ),
    Change(
        (1, 33, 0),
        "stop_after_limit",
        True,
        "cluster-autoscaler/estimator/binpacking_estimator.go",
        "once the limiter refuses a node, later equivalence groups only try the nodes added so far "
        "(same answers)",
    ),
    Change(
        (1, 33, 1),
        "hostname_retry",
        True,
        "cluster-autoscaler/estimator/binpacking_estimator.go",
        "when the last new node fails a pod on a kubernetes.io/hostname topology spread constraint, "
        "the other new nodes are tried before a node is added (1.34.0 on master, backported to 1.33.1)",
    ),
    Change(
        (1, 34, 2),
        "wire",
        Wire.BOTH,
        "cluster-autoscaler/expander/grpcplugin/grpc_client.go",
        "the gRPC expander request carries nodeMap=2/pod=4 and nodeBytesMap=3/podBytes=5",
    ),
    Change(
        (1, 35, 0),
        "wire",
        Wire.BYTES,
        "cluster-autoscaler/expander/grpcplugin/grpc_client.go",
        "the gRPC expander request carries only nodeBytesMap=3 and podBytes=5",
    ),
    Change(
        (1, 35, 0),
        "dra_locked_on",
        True,
        "cluster-autoscaler/config/flags/flags.go",
        "--enable-dynamic-resource-allocation defaults to true and false is fatal at start",
    ),
    Change(
        (1, 35, 0),
        "binpacking_time_stops",
        True,
        "cluster-autoscaler/processors/binpacking/time_limiter.go",
        "past --max-binpacking-time no further node group is binpacked: the scale-up goes on with the "
        "options computed so far (1.32 to 1.34 only log it)",
    ),
    Change(
        (1, 36, 0),
        "fastpath_flag",
        True,
        "cluster-autoscaler/config/flags/flags.go",
        "--fastpath-binpacking-enabled (default false) may estimate one equivalence group "
        "arithmetically; hami-sim follows the default full binpacking",
    ),
    Change(
        (1, 36, 0),
        "empty_answer_reported",
        True,
        "cluster-autoscaler/core/scaleup/orchestrator/orchestrator.go",
        "an expander chain that leaves no option logs 'Expander filtered out all options' and marks "
        "the pods 'expansion options filtered out and no longer considered' (NotTriggerScaleUp); "
        "1.32 to 1.35 return no event and log only the gRPC client's --v=4 line",
    ),
)

NEWEST = MINORS[-1]
DEFAULT_VERSION = NEWEST.pinned
SUPPORTED = f"1.{MINORS[0].minor} to 1.{NEWEST.minor}"

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_ca_version(value: object) -> CARelease:
    """``"1.34"``, ``"1.34.5"`` or ``"v1.34.5"`` -> that release (a bare minor: the patch we pin).

    Raises :class:`CAVersionError` for anything else, for a minor outside the supported range and
    for a patch newer than the newest we know (its behaviour is unknown: use the bare minor)."""
    text = value.strip() if isinstance(value, str) else ""
    match = _VERSION.fullmatch(text)
    if not match:
        raise CAVersionError(
            f"CA version {value!r} is not a version like '1.{NEWEST.minor}' or '{DEFAULT_VERSION}'"
        )
    major, minor = int(match[1]), int(match[2])
    known = _BY_MINOR.get(minor) if major == 1 else None
    if known is None:
        raise CAVersionError(
            f"Cluster Autoscaler {major}.{minor} is not supported: hami-sim follows CA {SUPPORTED} "
            f"(CA's README recommends the CA minor of the cluster's Kubernetes minor)"
        )
    patch = known.latest_patch if match[3] is None else int(match[3])
    if patch > known.latest_patch:
        raise CAVersionError(
            f"Cluster Autoscaler {major}.{minor}.{patch} is newer than the releases hami-sim knows "
            f"(newest 1.{minor} patch: {known.pinned}); set '1.{minor}' to follow {known.pinned}"
        )
    return ca_release((major, minor, patch))


def ca_release(version: tuple[int, int, int] | str) -> CARelease:
    """The behaviour of one exact release: the 1.32 baseline with every change up to it applied."""
    if isinstance(version, str):
        return parse_ca_version(version)
    changed: dict[str, Any] = {c.attribute: c.value for c in CHANGES if c.since <= version}
    return CARelease(*version, **changed)


def releases() -> list[CARelease]:
    """The pinned release of each supported minor, oldest first (the docs' table)."""
    return [ca_release((1, m.minor, m.latest_patch)) for m in MINORS]

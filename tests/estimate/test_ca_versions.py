"""The estimate follows the CA release named by ``CA_VERSION`` (``hami_sim/engine/ca_releases.py``).

CA's rows from ``estimator/binpacking_estimator_test.go`` (tag ``cluster-autoscaler-1.36.1``, the
topology rows of TestBinpackingEstimate), restated by us, answered as each release's estimator answers
them: the snapshot holds CA's "oldnode" (100m, 100Mi, 10 pods, zone-jupiter) beside the template
(1000m, 5000Mi, 10 pods, zone-mars). From 1.33.1 CA retries the other nodes after the last new node
fails a pod on a ``kubernetes.io/hostname`` spread constraint; its filter skips only that last node,
so the retry also fills "oldnode", and CA counts it in the option's node count."""

from __future__ import annotations

import pytest

from hami_sim.engine.ca_releases import (
    DEFAULT_VERSION,
    CAVersionError,
    Wire,
    parse_ca_version,
    releases,
)
from hami_sim.engine.estimate import ClusterNode, GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _zoned(name: str, millicores: int, memory: str, zone: str) -> dict:
    return ca_node(name, millicores, memory, labels={HOSTNAME: name, ZONE: zone})


def _spread(p: dict, key: str, skew: int, min_domains: int) -> dict:
    """CA's ``WithMaxSkew(maxSkew, key, minDomains)``: DoNotSchedule, app=estimatee."""
    p["metadata"]["labels"] = {"app": "estimatee"}
    p["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": skew,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "estimatee"}},
            "minDomains": min_domains,
        }
    ]
    return p


OLD_NODE = ClusterNode(_zoned("oldnode", 100, "100Mi", "zone-jupiter"))

# row name, pod (millicores, memory bytes), key, maxSkew, minDomains, pods
ROWS = {
    "hostname maxSkew=2 forces 2 pods/node": ((200, 200), HOSTNAME, 2, 1, 8),
    "hostname maxSkew=2, pods small enough for oldnode": ((20, 100), HOSTNAME, 2, 1, 8),
    "zonal maxSkew=2 only allows 2 pods to schedule": ((20, 100), ZONE, 2, 1, 8),
    "hostname maxSkew=1 minDomains=3, a large scale-up": ((20, 100), HOSTNAME, 1, 3, 12),
}

CASES = [
    # row, CA version, (nodes, pods, pods the retry put on oldnode)
    # CA's own rows (1.36.1's expectations; 1.32's for the same rows without the retry)
    ("hostname maxSkew=2 forces 2 pods/node", "1.32", (4, 8, 0)),
    ("hostname maxSkew=2 forces 2 pods/node", "1.36", (4, 8, 0)),
    ("zonal maxSkew=2 only allows 2 pods to schedule", "1.32", (1, 2, 0)),
    ("zonal maxSkew=2 only allows 2 pods to schedule", "1.36", (1, 2, 0)),
    ("hostname maxSkew=1 minDomains=3, a large scale-up", "1.32", (12, 12, 0)),
    ("hostname maxSkew=1 minDomains=3, a large scale-up", "1.33.0", (12, 12, 0)),
    ("hostname maxSkew=1 minDomains=3, a large scale-up", "1.33.1", (3, 12, 4)),
    ("hostname maxSkew=1 minDomains=3, a large scale-up", "1.34", (3, 12, 4)),
    ("hostname maxSkew=1 minDomains=3, a large scale-up", "1.35", (3, 12, 4)),
    ("hostname maxSkew=1 minDomains=3, a large scale-up", "1.36", (3, 12, 4)),
    # 1.32's row (20m pods): CA 1.33.1 made them 200m, because with the retry oldnode takes three
    ("hostname maxSkew=2, pods small enough for oldnode", "1.32", (4, 8, 0)),
    ("hostname maxSkew=2, pods small enough for oldnode", "1.36", (2, 8, 3)),
]


@pytest.mark.parametrize(("row", "version", "expected"), CASES, ids=[f"{c[0]} @{c[1]}" for c in CASES])
def test_topology_rows_per_release(row, version, expected):
    (millicores, memory), key, skew, min_domains, count = ROWS[row]
    pending = [PendingPods(_spread(ca_pod("e", millicores, memory), key, skew, min_domains), count)]
    template = _zoned("template", 1000, "5000Mi", "zone-mars")
    result = estimate(
        Simulator(),
        pending,
        [GroupTemplate("g", template)],
        limits=ScaleUpLimits(max_nodes_per_scale_up=0),
        cluster=[OLD_NODE],
        ca=parse_ca_version(version),
    )
    [option] = result.options
    on_old = len(option.on_existing.get("oldnode", []))
    assert (option.node_count, len(option.scheduled), on_old) == expected
    assert result.ca_version == parse_ca_version(version).version


def test_retry_without_existing_nodes_adds_three_nodes():
    """With no other node in the snapshot the retry alone keeps the answer at 3 new nodes."""
    pod = _spread(ca_pod("e", 20, 100), HOSTNAME, 1, 3)
    template = _zoned("template", 1000, "5000Mi", "zone-mars")
    answers = {}
    for version in ("1.32", "1.36"):
        result = estimate(
            Simulator(),
            [PendingPods(pod, 12)],
            [GroupTemplate("g", template)],
            limits=ScaleUpLimits(max_nodes_per_scale_up=0),
            ca=parse_ca_version(version),
        )
        answers[version] = (result.options[0].node_count, len(result.options[0].nodes))
    assert answers == {"1.32": (7, 7), "1.36": (3, 3)}


def _with_init(p: dict, millicores: int) -> dict:
    p["spec"]["initContainers"] = [
        {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": f"{millicores}m"}}}
    ]
    return p


@pytest.mark.parametrize(("version", "scheduled"), [("1.32", "app"), ("1.33", "init"), ("1.36", "init")])
def test_group_order_follows_the_release(version, scheduled):
    """CA 1.33 orders equivalence groups by the pod's full request (an init container's 900m
    counts); 1.32 by the app containers only. One node of 1000m holds only the first group."""
    pending = [
        PendingPods(ca_pod("app", 500, 1000), 1),
        PendingPods(_with_init(ca_pod("init", 100, 1000), 900), 1),
    ]
    result = estimate(
        Simulator(),
        pending,
        [GroupTemplate("g", ca_node("t", 1000, "5000Mi"))],
        limits=ScaleUpLimits(max_nodes_per_scale_up=1),
        ca=parse_ca_version(version),
    )
    assert result.options[0].scheduled == [f"default/{scheduled}#0"]


def test_default_is_the_newest_release():
    result = estimate(
        Simulator(), [PendingPods(ca_pod("e", 10, 10), 1)], [GroupTemplate("g", ca_node("t", 1000, "1Gi"))]
    )
    assert result.ca_version == DEFAULT_VERSION == releases()[-1].version


VERSIONS = [
    # CA_VERSION, release, wire form, hostname retry, default expander, DRA locked on
    ("1.32", "1.32.7", Wire.OBJECTS, False, "random", False),
    ("v1.32.1", "1.32.1", Wire.OBJECTS, False, "random", False),
    ("1.33.0", "1.33.0", Wire.OBJECTS, False, "least-waste", False),
    ("1.33", "1.33.6", Wire.OBJECTS, True, "least-waste", False),
    ("1.34.1", "1.34.1", Wire.OBJECTS, True, "least-waste", False),
    ("1.34", "1.34.5", Wire.BOTH, True, "least-waste", False),
    ("1.35.0", "1.35.0", Wire.BYTES, True, "least-waste", True),
    ("1.36", "1.36.1", Wire.BYTES, True, "least-waste", True),
]


@pytest.mark.parametrize(("value", "version", "wire", "retry", "expander", "dra"), VERSIONS)
def test_release_facts(value, version, wire, retry, expander, dra):
    release = parse_ca_version(value)
    assert (release.version, release.wire, release.hostname_retry) == (version, wire, retry)
    assert (release.default_expander, release.dra_locked_on) == (expander, dra)
    assert release.scheduler_api_version == "kubescheduler.config.k8s.io/v1"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1.31", "hami-sim follows CA 1.32 to 1.36"),
        ("1.37.0", "hami-sim follows CA 1.32 to 1.36"),
        ("2.0", "not supported"),
        ("1.36.9", "set '1.36' to follow 1.36.1"),
        ("latest", "not a version like"),
        ("", "not a version like"),
    ],
)
def test_unsupported_versions_are_refused_with_the_range(value, message):
    with pytest.raises(CAVersionError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_ca_version(value)

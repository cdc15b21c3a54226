"""The filters CA's scale-up simulation runs (kube-scheduler's plugins), with HAMi's device fit on top:
NodePorts, NodeResourcesFit on extended resources and sidecars, InterPodAffinity (required terms,
counting pods placed earlier in the same estimate) and PodTopologySpread (DoNotSchedule)."""

from __future__ import annotations

import copy

import pytest

from hami_sim.engine.estimate import ClusterNode, GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.scaleup import daemon_set_pod
from hami_sim.engine.scheduler_filters import pod_demand
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _zoned(
    name: str, millicores: int = 1000, memory: str = "5000Mi", zone: str = "zone-mars", **status
) -> dict:
    tmpl = ca_node(name, millicores, memory, labels={HOST: name, ZONE: zone})
    for key, value in status.items():
        tmpl["status"]["allocatable"][key] = tmpl["status"]["capacity"][key] = value
    return tmpl


def _run(template: dict, pending: list[PendingPods], cluster: list[ClusterNode] = (), daemons=()):  # type: ignore[assignment]
    group = GroupTemplate("g", template, daemon_pods=tuple(daemons))
    limits = ScaleUpLimits(max_nodes_per_scale_up=0)
    return estimate(Simulator(), pending, [group], limits=limits, cluster=list(cluster)).options[0]


def _labelled(p: dict, **labels) -> dict:
    p["metadata"]["labels"] = labels
    return p


def _term(key: str, **match) -> dict:
    return {"topologyKey": key, "labelSelector": {"matchLabels": match}}


def _affinity(p: dict, kind: str, *terms: dict) -> dict:
    p["spec"].setdefault("affinity", {})[kind] = {
        "requiredDuringSchedulingIgnoredDuringExecution": list(terms)
    }
    return p


# -- NodePorts ------------------------------------------------------------------------------------------


def _ports(p: dict, *ports: dict) -> dict:
    p["spec"]["containers"][0]["ports"] = list(ports)
    return p


PORT_CASES = [
    # name, first pod's port, second pod's port, pods per node
    ("same port and protocol: one per node", {"hostPort": 80}, {"hostPort": 80}, 1),
    ("another port: both fit", {"hostPort": 80}, {"hostPort": 81}, 2),
    ("same port, UDP vs TCP: both fit", {"hostPort": 80, "protocol": "UDP"}, {"hostPort": 80}, 2),
    (
        "same port on two host IPs: both fit",
        {"hostPort": 80, "hostIP": "10.0.0.1"},
        {"hostPort": 80, "hostIP": "10.0.0.2"},
        2,
    ),
    ("0.0.0.0 covers every address", {"hostPort": 80}, {"hostPort": 80, "hostIP": "10.0.0.2"}, 1),
    ("a container port without hostPort holds nothing", {"containerPort": 80}, {"containerPort": 80}, 2),
]


@pytest.mark.parametrize(("name", "first", "second", "per_node"), PORT_CASES, ids=[c[0] for c in PORT_CASES])
def test_host_ports(name, first, second, per_node):
    """kube-scheduler's nodeports tests (``TestNodePorts``), in our words: two pods, room for both."""
    pending = [
        PendingPods(_ports(ca_pod("a", 100, 100), first)),
        PendingPods(_ports(ca_pod("b", 100, 100), second)),
    ]
    option = _run(_zoned("t"), pending)
    assert [len(n.pods) for n in option.nodes] == ([2] if per_node == 2 else [1, 1])


def test_daemon_set_host_port_blocks_every_fresh_node():
    """A DaemonSet pod holding hostPort 9100 is on every new node: a pending pod on 9100 fits none."""
    ds = {
        "metadata": {"name": "exporter", "namespace": "mon"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 9100, "hostPort": 9100}]}]}
            }
        },
    }
    option = _run(
        _zoned("t"),
        [PendingPods(_ports(ca_pod("a", 100, 100), {"hostPort": 9100}), 2)],
        daemons=[daemon_set_pod(ds)],
    )
    assert option.node_count == 0
    assert set(option.unschedulable.values()) == {
        "node(s) didn't have free ports for the requested pod ports"
    }


# -- NodeResourcesFit: extended resources and sidecars ---------------------------------------------------


def _extended(p: dict, **resources: str) -> dict:
    p["spec"]["containers"][0]["resources"].setdefault("limits", {}).update(resources)
    return p


EXTENDED_CASES = [
    # name, template, pod's extended resources, count, nodes, scheduled, reason
    (
        "a template without it holds none",
        _zoned("t"),
        {"example.com/foo": "1"},
        2,
        0,
        0,
        "Insufficient example.com/foo",
    ),
    (
        "two per node where the template has 2",
        _zoned("t", **{"example.com/foo": "2"}),
        {"example.com/foo": "1"},
        4,
        2,
        4,
        "",
    ),
    (
        "hugepages count like extended resources",
        _zoned("t", **{"hugepages-2Mi": "4Mi"}),
        {"hugepages-2Mi": "2Mi"},
        4,
        2,
        4,
        "",
    ),
    ("HAMi's own resources are judged by HAMi, not NodeResourcesFit", gpu_node("a10"), {}, 4, 1, 4, ""),
]


@pytest.mark.parametrize(
    ("name", "template", "extended", "count", "nodes", "scheduled", "reason"),
    EXTENDED_CASES,
    ids=[c[0] for c in EXTENDED_CASES],
)
def test_extended_resources(name, template, extended, count, nodes, scheduled, reason):
    device = {"gpu_count": 1, "gpumem": 5000} if not extended else {}
    p = _extended(ca_pod("x", 100, 100, **device), **extended)
    option = _run(template, [PendingPods(p, count)])
    assert (option.node_count, len(option.scheduled)) == (nodes, scheduled)
    if reason:
        assert set(option.unschedulable.values()) == {reason}


def _container(name: str, millicores: int, sidecar: bool = False) -> dict:
    c = {"name": name, "resources": {"requests": {"cpu": f"{millicores}m", "memory": "1Mi"}}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


SIDECAR_CASES = [
    # name, app containers, init containers (name, millicores, sidecar), cpu kube-scheduler counts
    ("plain init: the larger of init and app", [500], [("init", 900, False)], 900),
    ("a sidecar adds to the app containers", [500], [("proxy", 300, True)], 800),
    ("an init after a sidecar runs beside it", [500], [("proxy", 300, True), ("migrate", 900, False)], 1200),
    ("an init before a sidecar runs alone", [500], [("migrate", 900, False), ("proxy", 300, True)], 900),
    ("two sidecars and a small init", [500], [("a", 100, True), ("b", 200, True), ("init", 100, False)], 800),
]


@pytest.mark.parametrize(("name", "apps", "inits", "cpu"), SIDECAR_CASES, ids=[c[0] for c in SIDECAR_CASES])
def test_sidecar_requests(name, apps, inits, cpu):
    """kube-scheduler's ``PodRequests`` (component-helpers ``TestPodResourceRequests``, sidecar rows)."""
    p = {
        "spec": {
            "containers": [_container(f"app{i}", m) for i, m in enumerate(apps)],
            "initContainers": [_container(n, m, s) for n, m, s in inits],
        }
    }
    assert pod_demand(p).cpu == cpu


def test_sidecars_decide_how_many_pods_a_node_holds():
    """app 500m + sidecar 300m = 800m: two per 1600m node (counting the app alone would say three)."""
    p = ca_pod("s", 500, 100)
    p["spec"]["initContainers"] = [_container("proxy", 300, sidecar=True)]
    option = _run(_zoned("t", 1600), [PendingPods(p, 6)])
    assert [len(n.pods) for n in option.nodes] == [2, 2, 2]


# -- InterPodAffinity ---------------------------------------------------------------------------------------


def _web(count: int, *terms_by_kind: tuple[str, dict]) -> PendingPods:
    p = _labelled(ca_pod("web", 100, 100), app="web")
    for kind, term in terms_by_kind:
        _affinity(p, kind, term)
    return PendingPods(p, count)


AFFINITY_CASES = [
    # name, pending, cluster, nodes, scheduled, reason of the rest
    (
        "anti-affinity to itself on hostname: one per node",
        [_web(4, ("podAntiAffinity", _term(HOST, app="web")))],
        [],
        4,
        4,
        "",
    ),
    (
        "anti-affinity to itself on zone: one in the template's zone",
        [_web(4, ("podAntiAffinity", _term(ZONE, app="web")))],
        [],
        1,
        1,
        "node(s) didn't satisfy existing pods anti-affinity rules",  # the placed pod's own term, first
    ),
    (
        "anti-affinity on a key the node lacks never conflicts",
        [_web(4, ("podAntiAffinity", _term("rack", app="web")))],
        [],
        1,
        4,
        "",
    ),
    (
        "affinity to itself: the first pod may go anywhere",
        [_web(4, ("podAffinity", _term(ZONE, app="web")))],
        [],
        1,
        4,
        "",
    ),
    (
        "affinity to pods nobody runs: nothing fits",
        [_web(2, ("podAffinity", _term(ZONE, app="db")))],
        [],
        0,
        0,
        "node(s) didn't match pod affinity rules",
    ),
    (
        "affinity to a pod on an existing node of the same zone",
        [_web(2, ("podAffinity", _term(ZONE, app="db")))],
        [ClusterNode(_zoned("old"), (_labelled(ca_pod("db", 10, 10), app="db"),))],
        1,
        2,
        "",
    ),
    (
        "affinity to a pod in another zone",
        [_web(2, ("podAffinity", _term(ZONE, app="db")))],
        [ClusterNode(_zoned("old", zone="zone-jupiter"), (_labelled(ca_pod("db", 10, 10), app="db"),))],
        0,
        0,
        "node(s) didn't match pod affinity rules",
    ),
    (
        "an existing pod's anti-affinity keeps matching pods out of its zone",
        [_web(2)],
        [
            ClusterNode(
                _zoned("old"),
                (
                    _affinity(
                        _labelled(ca_pod("db", 10, 10), app="db"), "podAntiAffinity", _term(ZONE, app="web")
                    ),
                ),
            )
        ],
        0,
        0,
        "node(s) didn't satisfy existing pods anti-affinity rules",
    ),
    (
        "anti-affinity to a pod on an existing node of the zone",
        [_web(2, ("podAntiAffinity", _term(ZONE, app="db")))],
        [ClusterNode(_zoned("old"), (_labelled(ca_pod("db", 10, 10), app="db"),))],
        0,
        0,
        "node(s) didn't match pod anti-affinity rules",
    ),
]


@pytest.mark.parametrize(
    ("name", "pending", "cluster", "nodes", "scheduled", "reason"),
    AFFINITY_CASES,
    ids=[c[0] for c in AFFINITY_CASES],
)
def test_inter_pod_affinity(name, pending, cluster, nodes, scheduled, reason):
    option = _run(_zoned("t"), copy.deepcopy(pending), cluster)
    assert (option.node_count, len(option.scheduled)) == (nodes, scheduled)
    if reason:
        assert set(option.unschedulable.values()) == {reason}


def test_anti_affinity_namespaces():
    """A term without namespaces covers the pod's own namespace; ``namespaces`` and a
    ``kubernetes.io/metadata.name`` namespace selector name others."""
    db = _labelled(ca_pod("db", 10, 10), app="db")
    db["metadata"]["namespace"] = "data"
    cluster = [ClusterNode(_zoned("old"), (db,))]
    plain = _web(1, ("podAntiAffinity", _term(ZONE, app="db")))
    listed = _web(1, ("podAntiAffinity", {**_term(ZONE, app="db"), "namespaces": ["data"]}))
    selected = _web(
        1,
        (
            "podAntiAffinity",
            {
                **_term(ZONE, app="db"),
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "data"}},
            },
        ),
    )
    assert len(_run(_zoned("t"), [plain], cluster).scheduled) == 1
    assert len(_run(_zoned("t"), [listed], cluster).scheduled) == 0
    assert len(_run(_zoned("t"), [selected], cluster).scheduled) == 0


def test_affinity_follows_pods_placed_earlier_in_the_estimate():
    """The bigger db pods are packed first (one per node, host anti-affinity); the web pods, with
    hostname affinity to db, go to those nodes and never to a node of their own."""
    db = _affinity(_labelled(ca_pod("db", 600, 100), app="db"), "podAntiAffinity", _term(HOST, app="db"))
    web = _affinity(_labelled(ca_pod("web", 100, 100), app="web"), "podAffinity", _term(HOST, app="db"))
    option = _run(_zoned("t"), [PendingPods(web, 6), PendingPods(db, 3)])
    assert option.node_count == 3
    for n in option.nodes:
        assert sum(pid.startswith("default/db") for pid in n.pods) == 1
    assert len(option.scheduled) == 3 + 6


def test_anti_affinity_between_groups_placed_in_one_estimate():
    """web refuses nodes holding db (hostname): with db first on every node, web needs its own."""
    db = _labelled(ca_pod("db", 600, 100), app="db")
    web = _affinity(_labelled(ca_pod("web", 100, 100), app="web"), "podAntiAffinity", _term(HOST, app="db"))
    option = _run(_zoned("t"), [PendingPods(web, 2), PendingPods(db, 2)])
    assert [sorted({pid.split("#")[0] for pid in n.pods}) for n in option.nodes] == [
        ["default/db"],
        ["default/db"],
        ["default/web"],
    ]


# -- PodTopologySpread (beyond CA's two rows in test_ca_binpacking.py) -------------------------------------


def _spread(count: int, key: str, when: str = "DoNotSchedule", **device) -> PendingPods:
    p = _labelled(ca_pod("s", 20, 100, **device), app="s")
    p["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "s"}},
        }
    ]
    return PendingPods(p, count)


JUPITER = ClusterNode(_zoned("old", 100, "100Mi", zone="zone-jupiter"))
SPREAD_CASES = [
    # name, pending, cluster, nodes, scheduled
    ("no other domain: the zone takes them all", [_spread(6, ZONE)], [], 1, 6),
    ("an empty zone elsewhere: maxSkew pods in ours", [_spread(6, ZONE)], [JUPITER], 1, 1),
    # CA >= 1.33.1 retries the other nodes, the existing one too, and counts it (1.32: 3 new nodes)
    ("hostname, maxSkew 1, an empty node elsewhere: the retry fills it", [_spread(3, HOST)], [JUPITER], 2, 3),
    (
        "pods already in the other zone raise the minimum",
        [_spread(6, ZONE)],
        [ClusterNode(JUPITER.node, tuple(_labelled(ca_pod(f"o{i}", 1, 1), app="s") for i in range(2)))],
        1,
        3,
    ),
    ("ScheduleAnyway is not a filter", [_spread(6, ZONE, "ScheduleAnyway")], [JUPITER], 1, 6),
    ("a template without the key: missing required label", [_spread(2, "rack")], [], 0, 0),
    ("HAMi device pods spread the same way", [_spread(4, HOST, gpu_count=1, gpumem=1000)], [JUPITER], 4, 4),
]


@pytest.mark.parametrize(
    ("name", "pending", "cluster", "nodes", "scheduled"), SPREAD_CASES, ids=[c[0] for c in SPREAD_CASES]
)
def test_topology_spread(name, pending, cluster, nodes, scheduled):
    template = _zoned("t")
    if "HAMi" in name:
        template = gpu_node("t")
        template["metadata"]["labels"] = {HOST: "t", ZONE: "zone-mars"}
    option = _run(template, pending, cluster)
    assert (option.node_count, len(option.scheduled)) == (nodes, scheduled)


def _tainted(node: dict) -> dict:
    node = copy.deepcopy(node)
    node["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    return node


POLICY_CASES = [
    # name, constraint fields, pod's nodeSelector, the other zone's node, scheduled of 6
    ("minDomains above the domains there are: the minimum is 0", {"minDomains": 2}, None, None, 1),
    (
        "nodeAffinityPolicy Honor: a node the pod may not use is no domain",
        {},
        {"pool": "gpu"},
        JUPITER.node,
        6,
    ),
    ("nodeAffinityPolicy Ignore: it is", {"nodeAffinityPolicy": "Ignore"}, {"pool": "gpu"}, JUPITER.node, 1),
    ("nodeTaintsPolicy Ignore (default): a tainted node is a domain", {}, None, _tainted(JUPITER.node), 1),
    (
        "nodeTaintsPolicy Honor: an untolerated taint keeps it out",
        {"nodeTaintsPolicy": "Honor"},
        None,
        _tainted(JUPITER.node),
        6,
    ),
]


@pytest.mark.parametrize(
    ("name", "fields", "selector", "other", "scheduled"), POLICY_CASES, ids=[c[0] for c in POLICY_CASES]
)
def test_topology_spread_node_inclusion(name, fields, selector, other, scheduled):
    """kube-scheduler's PodTopologySpread: which nodes' domains count (minDomains, node inclusion policies)."""
    pending = _spread(6, ZONE)
    pending.pod["spec"]["topologySpreadConstraints"][0].update(fields)
    template = _zoned("t")
    if selector:
        pending.pod["spec"]["nodeSelector"] = selector
        template["metadata"]["labels"].update(selector)
    option = _run(template, [pending], [ClusterNode(other)] if other else [])
    assert len(option.scheduled) == scheduled

"""CA's pod equivalence groups (``core/scaleup/equivalence/groups_test.go`` and
``utils/utils_test.go``), in our words: which pending pods CA bin-packs as one group."""

from __future__ import annotations

import copy

import pytest

from hami_sim.engine.equivalence_groups import MAX_GROUPS_PER_CONTROLLER, group_pods
from hami_sim.engine.estimate import GroupTemplate, PendingPods, estimate
from hami_sim.engine.simulate import Simulator

from .helpers import ca_node, ca_pod, gpu_node

TOKEN = {
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "path"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    ]
}


def _owned(name: str, owner: str | None, millicores: int = 100, kind: str = "ReplicationController") -> dict:
    p = ca_pod(name, millicores, 200000)
    if owner is None:
        del p["metadata"]["ownerReferences"]
    else:
        p["metadata"]["ownerReferences"] = [
            {"kind": kind, "name": owner, "uid": f"uid-{owner}", "controller": True}
        ]
    return p


def _with_volume(p: dict, volume: dict) -> dict:
    p["spec"]["volumes"] = [volume]
    p["spec"]["containers"][0]["volumeMounts"] = [{"name": volume["name"], "mountPath": "/v"}]
    return p


def _groups(pods: list[dict]) -> list[list[str]]:
    return [group.ids for group in group_pods([(p, [p["metadata"]["name"]]) for p in pods])]


def test_group_schedulable_pods_for_node():
    """groups_test.go TestGroupSchedulablePodsForNode: 9 pods make 6 groups. No controller: alone;
    same controller and spec: together; projected token volumes differ only in name: together;
    flex volumes with different names: apart."""
    pods = [
        _owned("p1", None, 1500),
        _owned("p2_1", "rc1", 3000),
        _owned("p2_2", "rc1", 3000),
        _owned("p3_1", "rc2"),
        _owned("p3_2", "rc2"),
        _with_volume(_owned("p4_1", "rc3"), {"name": "kube-api-access-nz94b", "projected": TOKEN}),
        _with_volume(_owned("p4_2", "rc3"), {"name": "kube-api-access-mo25i", "projected": TOKEN}),
        _with_volume(_owned("p5_1", "rc4"), {"name": "volume-nz94b", "flexVolume": {"driver": "testDriver"}}),
        _with_volume(_owned("p5_2", "rc4"), {"name": "volume-mo25i", "flexVolume": {"driver": "testDriver"}}),
    ]
    assert _groups(pods) == [["p1"], ["p2_1", "p2_2"], ["p3_1", "p3_2"], ["p4_1", "p4_2"], ["p5_1"], ["p5_2"]]


def test_equivalence_group_size_limiting():
    """groups_test.go TestEquivalenceGroupSizeLimiting: 11 pods of one controller with 11 distinct
    labels make 11 groups; once a controller has 10 groups, a further pod is not remembered, so even
    identical later pods each get a group of their own."""
    pods = []
    for i in range(MAX_GROUPS_PER_CONTROLLER + 3):
        p = _owned(f"p{i}", "rc", 3000)
        p["metadata"]["labels"] = {"uniqueLabel": f"l{min(i, MAX_GROUPS_PER_CONTROLLER)}"}
        pods.append(p)
    assert _groups(pods) == [[p["metadata"]["name"]] for p in pods]


def test_equivalence_group_ignores_daemon_sets():
    """groups_test.go TestEquivalenceGroupIgnoresDaemonSets: DaemonSet pods (by owner kind, or CA's
    daemonset-pod annotation) are never grouped."""
    by_kind = [_owned(f"d{i}", "ds", kind="DaemonSet") for i in range(2)]
    by_annotation = [_owned(f"a{i}", "rs") for i in range(2)]
    for p in by_annotation:
        p["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/daemonset-pod"] = "true"
    assert _groups(by_kind + by_annotation) == [["d0"], ["d1"], ["a0"], ["a1"]]


def _spec_variant(change) -> dict:
    p = _owned("b", "rc")
    change(p)
    return p


def _set(path: str, value):
    def change(p: dict) -> None:
        target = p
        *head, last = path.split(".")
        for key in head:
            target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
        target[last] = value

    return change


SEMANTIC = [
    # utils_test.go TestPodSpecSemanticallyEqual, plus what Semantic.DeepEqual treats as equal
    (
        "projected volumes differ only in name",
        _set("spec.volumes", [{"name": "x", "projected": TOKEN}]),
        True,
    ),
    (
        "different env in containers and init containers",
        _set("spec.containers.0.env", [{"name": "foo", "value": "bar"}]),
        True,
    ),
    ("different hostnames", _set("spec.hostname", "bar"), True),
    ("different non-projected volumes", _set("spec.volumes", [{"name": "vol2", "emptyDir": {}}]), False),
    ("different containers", _set("spec.containers.0.image", "foo/baz"), False),
    ("the same quantity written differently", _set("spec.containers.0.resources.requests.cpu", "0.1"), True),
    ("an empty list where the other has none", _set("spec.tolerations", []), True),
    ("different labels", _set("metadata.labels", {"app": "other"}), False),
    (
        "different annotations (HAMi reads them; CA would merge)",
        _set("metadata.annotations", {"a": "b"}),
        False,
    ),
]


@pytest.mark.parametrize(("name", "change", "together"), SEMANTIC, ids=[c[0] for c in SEMANTIC])
def test_pod_spec_semantically_equal(name, change, together):
    a = _owned("a", "rc")
    a["spec"]["volumes"] = [{"name": "kube-api-access-a", "projected": TOKEN}]
    a["spec"]["hostname"] = "foo"
    a["spec"]["containers"][0]["env"] = [{"name": "baz", "value": "foo"}]
    a["spec"]["initContainers"] = [{"name": "init", "env": [{"name": "x", "value": "1"}]}]
    b = copy.deepcopy(a)
    b["metadata"]["name"] = "b"
    b["spec"]["initContainers"][0]["env"] = [{"name": "y", "value": "2"}]
    change(b)
    assert (len(_groups([a, b])) == 1) is together


def test_realistic_replicas_pack_as_plain_replicas():
    """Replicas that differ in token volume, env and hostname are one group: the estimate places them
    exactly as the same number of identical replicas (two 12000 MiB pods per 2-card A10 node)."""
    base = ca_pod("infer", 100, 1000, owner="rs-infer", gpu_count=1, gpumem=12000)
    base["metadata"]["labels"] = {"app": "infer"}
    replicas = []
    for i in range(8):
        p = copy.deepcopy(base)
        p["metadata"].update(name=f"infer-{i}", uid=f"u{i}")
        p["spec"]["hostname"] = f"infer-{i}"
        p["spec"]["volumes"] = [{"name": f"kube-api-access-{i}", "projected": TOKEN}]
        p["spec"]["containers"][0]["env"] = [{"name": "INDEX", "value": str(i)}]
        p["spec"]["containers"][0]["volumeMounts"] = [{"name": f"kube-api-access-{i}", "mountPath": "/t"}]
        replicas.append(PendingPods(p))
    group = [GroupTemplate("a10", gpu_node("a10"))]
    [option] = estimate(Simulator(), replicas, group).options
    [plain] = estimate(Simulator(), [PendingPods(base, 8)], group).options
    assert option.node_count == plain.node_count == 4
    assert [len(n.pods) for n in option.nodes] == [len(n.pods) for n in plain.nodes] == [2, 2, 2, 2]


def test_labels_split_what_one_controller_owns():
    """Two label sets under one controller are two groups, each ordered on its own: the group whose
    first pod comes first in the request is packed first when they tie."""
    a = [_owned(f"a{i}", "rc", 500) for i in range(2)]
    b = [_owned(f"b{i}", "rc", 500) for i in range(2)]
    for p in b:
        p["metadata"]["labels"] = {"track": "canary"}
    pods = [a[0], b[0], a[1], b[1]]
    assert _groups(pods) == [["a0", "a1"], ["b0", "b1"]]
    [option] = estimate(
        Simulator(), [PendingPods(p) for p in pods], [GroupTemplate("g", ca_node("t", 1000, "5000Mi"))]
    ).options
    assert option.scheduled == ["default/a0", "default/a1", "default/b0", "default/b1"]

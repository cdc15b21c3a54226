"""CA's gRPC expander over a real TLS gRPC channel, requests encoded as CA's releases encode them.

``tests/expander/ca_clients.py`` restates each CA release's ``grpc_client.go``: 1.32.x sends the
templates and pods as ``nodeMap = 2`` / ``Option.pod = 4``, 1.34.2+ sends both those and
``nodeBytesMap = 3`` / ``Option.podBytes = 5``, 1.35+ only the latter. Every case is asked as each
release asks it (TLS, CA's 5 s deadline, real grpcio) and must get the same answer.
"""

from __future__ import annotations

import pytest

from simulations.grpcexpander.convert import pod_dict
from simulations.grpcexpander.protos import k8s_core_pb2 as core
from simulations.grpcexpander.service import load_daemon_sets
from tests.expander.ca_clients import (
    NEWEST,
    RELEASES,
    CAClient,
    OptionSpec,
    best_options,
    encode,
)
from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory
from tests.profiles.conftest import A10, H100

pytestmark = [pytest.mark.django_db(transaction=True)]


def q(values: dict) -> dict:
    return {k: core.Quantity(string=str(v)) for k, v in values.items()}


def pod_msg(name: str, gpumem: int, *, owner: str = "rs-1", cpu: int = 0) -> core.Pod:
    limits = {"nvidia.com/gpu": 1, "nvidia.com/gpumem": gpumem}
    requests = {"cpu": cpu} if cpu else {}
    return core.Pod(
        metadata=core.ObjectMeta(
            name=name,
            namespace="ml",
            uid=f"uid-{name}",
            ownerReferences=[core.OwnerReference(kind="ReplicaSet", name=owner, uid=owner, controller=True)],
        ),
        spec=core.PodSpec(
            containers=[
                core.Container(
                    name="c", resources=core.ResourceRequirements(limits=q(limits), requests=q(requests))
                )
            ]
        ),
    )


def node_msg(raw: dict) -> core.Node:
    meta = raw["metadata"]
    return core.Node(
        metadata=core.ObjectMeta(
            name=meta["name"], labels=meta.get("labels") or {}, annotations=meta.get("annotations") or {}
        ),
        status=core.NodeStatus(
            capacity=q(raw["status"]["capacity"]), allocatable=q(raw["status"]["allocatable"])
        ),
    )


def warm_a10(name: str = "template-node-for-gpu-a10-1") -> core.Node:
    """A warm template carrying its registration: 4 x A10 (23028 MiB)."""
    return node_msg(node(name, [gpu(f"GPU-{i}", index=i) for i in range(4)]))


def cold(name: str, labels: dict | None = None) -> core.Node:
    raw = node(name, labels=labels)
    raw["metadata"]["annotations"] = {}
    return node_msg(raw)


def option(group: str, count: int, pods: list[core.Pod]) -> OptionSpec:
    return (group, count, pods)


def pods(n: int, gpumem: int) -> list[core.Pod]:
    return [pod_msg(f"p{i}", gpumem) for i in range(n)]


@pytest.fixture
def groups(db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])


def call(channel, request: bytes) -> list[str]:
    """One BestOptions call with an already-encoded request, as CA makes it; the kept group ids."""
    return best_options(channel, request)


@pytest.fixture
def ask(channel):
    def ask(options, node_map, client: CAClient = NEWEST) -> list[str]:
        return call(channel, encode(client, options, node_map))

    return ask


TEMPLATES = {"gpu-a10": warm_a10(), "gpu-h100": cold("template-node-for-gpu-h100-1")}

CASES = [
    # (what the user sees, options, kept)
    (
        "a 40000 MiB pod never fits an A10 card: that option is dropped",
        [("gpu-a10", 1, 1, 40000), ("gpu-h100", 1, 1, 40000)],
        ["gpu-h100"],
    ),
    (
        "8 of 16 fit 2 x 4 A10, 16 of 16 fit 2 x 8 H100: H100 wins",
        [("gpu-a10", 2, 16, 12000), ("gpu-h100", 2, 16, 12000)],
        ["gpu-h100"],
    ),
    ("a partial option is kept when nothing places more", [("gpu-a10", 2, 16, 12000)], ["gpu-a10"]),
    (
        "equal placements are all kept (ties go to CA's next expander)",
        [("gpu-a10", 2, 4, 12000), ("gpu-h100", 1, 4, 12000)],
        ["gpu-a10", "gpu-h100"],
    ),
    (
        "an option larger than 1000 nodes is judged on 1000, not dropped for its size",
        [("gpu-a10", 5000, 2, 12000)],
        ["gpu-a10"],
    ),
    (
        "nothing fits anywhere: the answer is empty (no scale-up)",
        [("gpu-a10", 3, 2, 90000), ("gpu-h100", 3, 2, 90000)],
        [],
    ),
]


@pytest.mark.parametrize("client", RELEASES, ids=str)
@pytest.mark.parametrize(("why", "spec", "kept"), CASES, ids=[c[0] for c in CASES])
def test_best_options_as_each_ca_release_asks(groups, ask, client, why, spec, kept):
    options = [option(g, count, pods(n, mem)) for g, count, n, mem in spec]
    assert ask(options, TEMPLATES, client) == kept, f"{client}: {why}"


def test_least_gpu_waste_returns_the_single_best(groups, ask, settings):
    settings.EXPANDER_RETURN = "least-gpu-waste"
    # 4 pods of 12000 MiB: all fit both; 1 A10 node is nearly full, 1 H100 node mostly idle
    options = [option("gpu-h100", 1, pods(4, 12000)), option("gpu-a10", 1, pods(4, 12000))]
    assert ask(options, TEMPLATES) == ["gpu-a10"]


def test_the_record_says_why_each_option_won_or_lost(groups, ask):
    from decisions.models import Decision

    ask([option("gpu-a10", 2, pods(16, 12000)), option("gpu-h100", 2, pods(16, 12000))], TEMPLATES)
    lines = {n["group"]: n["reason"] for n in Decision.objects.get(caller="expander").nodes}
    assert lines == {
        "gpu-a10": "places 8/16 pod(s); other options place 16",
        "gpu-h100": "kept: places 16/16 pod(s) on 1 of 2 new node(s), gpu waste 1.706",
    }


MAPPINGS = [
    # (how CA names the group, NodeGroup fields, template labels)
    ("explicit ca_node_group_id", "eks-gpu-h100-1a2b", {"ca_node_group_id": "eks-gpu-h100-1a2b"}, {}),
    ("the template's labels", "asg-7f3e", {}, {"eks.amazonaws.com/nodegroup": "h100-pool"}),
]


@pytest.mark.parametrize(("why", "ca_id", "fields", "labels"), MAPPINGS, ids=[m[0] for m in MAPPINGS])
def test_cold_group_found_by(db, ask, why, ca_id, fields, labels):
    NodeGroupFactory(name="h100-pool", rows=[{**H100, "quantity": 8}], **fields)
    templates = {ca_id: cold("template-node-for-x", labels=labels or None)}
    assert ask([option(ca_id, 1, pods(1, 40000))], templates) == [ca_id], why


def test_pod_decoding_keeps_what_the_device_rules_read():
    msg = pod_msg("p0", 12000)
    msg.spec.nodeSelector["gpu"] = "a10"
    msg.spec.tolerations.add(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")
    decoded = pod_dict(core.Pod.FromString(msg.SerializeToString()))
    assert decoded["spec"]["containers"][0]["resources"] == {
        "limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "12000"}
    }
    assert decoded["metadata"]["ownerReferences"][0]["controller"] is True
    assert decoded["spec"]["nodeSelector"] == {"gpu": "a10"}
    assert decoded["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


# -- DaemonSet overhead: CA's template Node in nodeMap carries no DaemonSet pods ----------------------------
DAEMONSETS = """\
apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: node-exporter, namespace: monitoring}
    spec:
      template:
        spec:
          containers:
            - name: exporter
              resources: {requests: {cpu: "10"}}
  - apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: cpu-only-agent, namespace: kube-system}
    spec:
      template:
        spec:
          nodeSelector: {pool: cpu}
          containers:
            - name: agent
              resources: {requests: {cpu: "30"}}
"""


def cpu_pods(n: int, cpu: int) -> list[core.Pod]:
    return [pod_msg(f"c{i}", 12000, cpu=cpu, owner=f"rs-cpu{cpu}") for i in range(n)]


@pytest.fixture
def ask_with_daemonsets(serve, connect, tmp_path):
    """A server started as `run_expander --daemonsets FILE` starts it: the DaemonSets of the file."""
    path = tmp_path / "daemonsets.yaml"
    path.write_text(DAEMONSETS)
    servers = {False: serve(), True: serve(daemon_pods=load_daemon_sets(str(path)))}

    def ask(options, with_daemonsets: bool) -> list[str]:
        return call(connect(servers[with_daemonsets]), encode(NEWEST, options, TEMPLATES))

    return ask


def test_an_option_that_fits_only_without_daemonset_overhead_is_dropped(groups, ask_with_daemonsets):
    """31 cpus allocatable; node-exporter takes 10 on every new node (the cpu-only agent's selector
    keeps it off GPU nodes): a 25-cpu pod fits a bare template but not a real new node."""
    options = [option("gpu-h100", 1, cpu_pods(1, 25)), option("gpu-a10", 1, cpu_pods(1, 10))]
    assert ask_with_daemonsets(options, with_daemonsets=False) == ["gpu-h100", "gpu-a10"]
    assert ask_with_daemonsets(options, with_daemonsets=True) == ["gpu-a10"]


def test_daemonset_overhead_places_fewer_and_the_record_says_so(groups, ask_with_daemonsets):
    from decisions.models import Decision

    # 3 pods of 10 cpus: all fit 31 cpus, only 2 fit the 21 left after node-exporter
    options = [option("gpu-h100", 1, cpu_pods(3, 10)), option("gpu-a10", 1, cpu_pods(3, 10))]
    assert ask_with_daemonsets(options, with_daemonsets=True) == ["gpu-h100", "gpu-a10"]
    lines = {n["group"]: n["reason"] for n in Decision.objects.get(caller="expander").nodes}
    assert lines["gpu-h100"].startswith("kept: places 2/3 pod(s) on 1 of 1 new node(s)")
    assert lines["gpu-h100"].endswith(
        "(after DaemonSet pods daemonset/monitoring/node-exporter on each new node)"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Deployment\nitems: [{kind: Deployment}]", "expected a list of DaemonSet objects"),
        ("{not yaml", "--daemonsets"),
        ("42", "expected a list of DaemonSet objects"),
    ],
)
def test_run_expander_refuses_a_daemonsets_file_that_is_not_one(tmp_path, text, message):
    from django.core.management import CommandError, call_command

    path = tmp_path / "ds.yaml"
    path.write_text(text)
    with pytest.raises(CommandError, match=message):
        call_command("run_expander", "--bind", "127.0.0.1:0", "--daemonsets", str(path))


# -- what outlives a call: CA repeats its call every scan while the pods stay pending ------------------------
def test_a_repeated_call_sees_an_edited_profile(groups, ask):
    """Packings are kept across calls, keyed by what they depend on: the same request after the
    group's cards changed answers for the new cards, never from the old packing."""
    from profiles.models import DeviceProfile
    from profiles.services import save_profile

    request = [option("gpu-h100", 1, pods(1, 40000))]
    assert ask(request, TEMPLATES) == ["gpu-h100"]
    assert ask(request, TEMPLATES) == ["gpu-h100"]
    profile = DeviceProfile.objects.get(node_group__name="gpu-h100")
    save_profile(profile, rows=[{**A10, "quantity": 8}])  # now 8 x A10: 40000 MiB fits no card
    assert ask(request, TEMPLATES) == []


def test_an_unusable_template_is_kept_alone_unjudged(groups, ask):
    """Options with the same pods are packed together; one whose template the estimator refuses is
    kept as not judged (CA reads an empty answer as no scale-up), the others keep their verdicts."""
    from decisions.models import Decision

    bad = node_msg(node("template-node-for-broken", [gpu("GPU-0")]))
    bad.status.allocatable["cpu"].string = "lots"
    same = pods(2, 12000)
    templates = {**TEMPLATES, "broken": bad}
    assert ask([option("broken", 1, same), option("gpu-a10", 1, same)], templates) == ["broken", "gpu-a10"]
    lines = {n["group"]: n for n in Decision.objects.get(caller="expander").nodes}
    assert lines["broken"]["unresolvable"], lines["broken"]
    assert lines["broken"]["reason"].startswith("kept, not judged: unusable-template:"), lines["broken"]
    assert lines["gpu-a10"]["reason"].startswith("kept: places 2/2")


# -- both wire generations in one request (CA 1.34.2+): the newer fields are read -----------------------------
def test_a_request_with_both_forms_is_read_from_the_newer_fields(groups, channel):
    """CA 1.34.2+ fill nodeMap/pod and nodeBytesMap/podBytes with the same objects; were they ever to
    differ, CA's proto says readers prefer the bytes. Here the old fields say a 12000 MiB pod on an
    H100 template, the new ones a 40000 MiB pod on an A10 template: the new ones decide."""
    from simulations.grpcexpander.protos import expander_pb2 as pb

    request = pb.CABestOptionsRequest()
    for group in ("gpu-a10", "gpu-h100"):
        opt = request.options.add(nodeGroupId=group, nodeCount=1)
        opt.pod.append(pod_msg("p0", 12000))
        opt.podBytes.append(pod_msg("p0", 40000).SerializeToString())
    request.nodeMap["gpu-a10"].CopyFrom(TEMPLATES["gpu-h100"])
    request.nodeBytesMap["gpu-a10"] = TEMPLATES["gpu-a10"].SerializeToString()
    request.nodeMap["gpu-h100"].CopyFrom(TEMPLATES["gpu-h100"])
    request.nodeBytesMap["gpu-h100"] = TEMPLATES["gpu-h100"].SerializeToString()
    assert call(channel, request.SerializeToString()) == ["gpu-h100"]


@pytest.mark.parametrize(
    ("client", "wire"), list(zip(RELEASES, ("objects", "both", "bytes"), strict=True)), ids=str
)
def test_the_record_names_the_wire_form_ca_used(groups, ask, client, wire):
    from decisions.models import Decision

    ask([option("gpu-h100", 1, pods(1, 40000))], TEMPLATES, client)
    assert Decision.objects.get(caller="expander").policies["wire"] == wire


def test_a_wire_form_other_than_ca_versions_is_answered_and_counted(
    groups, ask, settings, caplog, monkeypatch
):
    """CA_VERSION says 1.32.7 (fields 2 and 4) but the request comes as CA 1.36 sends it: the
    expander answers all the same, and counts the mismatch (and warns once) so the operator can fix
    CA_VERSION."""
    from prometheus_client import REGISTRY

    from simulations.grpcexpander import grpc_wire

    monkeypatch.setattr(grpc_wire, "_WARNED", set())

    def mismatches() -> float:
        labels = {"wire": "bytes", "expected": "objects"}
        return REGISTRY.get_sample_value("hami_sim_expander_wire_mismatch_total", labels) or 0.0

    settings.CA_VERSION = "1.32.7"
    before = mismatches()
    with caplog.at_level("WARNING", logger=grpc_wire.log.name):
        for _ in range(2):
            assert ask([option("gpu-h100", 1, pods(1, 40000))], TEMPLATES, NEWEST) == ["gpu-h100"]
    assert mismatches() == before + 2
    warned = [r for r in caplog.records if "wire form" in r.getMessage()]
    assert len(warned) == 1 and "set CA_VERSION" in warned[0].getMessage()
    settings.CA_VERSION = "1.36.1"
    assert ask([option("gpu-h100", 1, pods(1, 40000))], TEMPLATES, NEWEST) == ["gpu-h100"]
    assert mismatches() == before + 2

"""The expander fails open: CA reads an empty answer as "no scale-up", so an option hami-sim cannot
judge is kept (with its reason in the decision record, on the dashboard and in
``hami_sim_expander_unjudged_options_total{reason}``) unless ``EXPANDER_UNJUDGED=drop``. Only options
HAMi's rules prove cannot place their pods are dropped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from simulations.grpcexpander.protos import expander_pb2 as pb
from tests.expander.ca_clients import best_options
from tests.expander.test_grpc_expander import TEMPLATES, cold, node_msg, pod_msg, warm_a10
from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory
from tests.profiles.conftest import A10, H100

pytestmark = [pytest.mark.django_db(transaction=True)]

GARBAGE = b"\x0a\xff\xff"  # a truncated length-delimited field: no Pod, no Node
POD = pod_msg("p0", 12000).SerializeToString()


def _bad_weights() -> bytes:
    """A pod whose hami.io/device-scoring-weights annotation HAMi refuses (two weights of three)."""
    pod = pod_msg("weighted", 12000)
    pod.metadata.annotations["hami.io/device-scoring-weights"] = "slot=1,core=2"
    return pod.SerializeToString()


BAD_WEIGHTS = _bad_weights()


@pytest.fixture
def groups(db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])
    NodeGroupFactory(name="cpu-pool")  # a group without a device profile


def unhealthy_a10() -> bytes:
    """A template CA copied from a running node whose four cards all report unhealthy."""
    devices = [gpu(f"GPU-{i}", index=i, health=False) for i in range(4)]
    return node_msg(node("template-node-for-gpu-a10-1", devices)).SerializeToString()


def unusable_a10() -> bytes:
    bad = warm_a10()
    bad.status.allocatable["cpu"].string = "lots"
    return bad.SerializeToString()


# (cause, node group id, nodeCount, pod bytes, template bytes or None)
CAUSES = [
    ("unknown-group", "nobody", 1, [POD], cold("template-node-for-nobody").SerializeToString()),
    ("no-device-profile", "cpu-pool", 1, [POD], cold("template-node-for-cpu-pool-1").SerializeToString()),
    ("no-template", "ghost", 1, [POD], None),
    ("undecodable-template", "gpu-a10", 1, [POD], GARBAGE),
    ("undecodable-pod", "gpu-a10", 1, [GARBAGE], TEMPLATES["gpu-a10"].SerializeToString()),
    ("unhealthy-device", "gpu-a10", 1, [POD], unhealthy_a10()),
    ("unusable-template", "gpu-a10", 1, [POD], unusable_a10()),
    # the pod's own annotation is at fault, not the template: the reason names it
    ("unusable-pod", "gpu-a10", 1, [BAD_WEIGHTS], TEMPLATES["gpu-a10"].SerializeToString()),
    ("bad-option", "gpu-a10", 0, [POD], TEMPLATES["gpu-a10"].SerializeToString()),
]


def request(options) -> bytes:
    """A CA 1.35+ request (nodeBytesMap, podBytes) from (group, count, pod bytes, template bytes)."""
    msg = pb.CABestOptionsRequest()
    for group, count, pods, template in options:
        msg.options.add(nodeGroupId=group, nodeCount=count, podBytes=pods)
        if template is not None:
            msg.nodeBytesMap[group] = template
    return msg.SerializeToString()


def unjudged(reason: str) -> float:
    return REGISTRY.get_sample_value("hami_sim_expander_unjudged_options_total", {"reason": reason}) or 0.0


@pytest.mark.parametrize(("cause", "group", "count", "pods", "template"), CAUSES, ids=[c[0] for c in CAUSES])
def test_a_lone_option_we_cannot_judge_is_kept_and_says_why(
    groups, channel, cause, group, count, pods, template
):
    from decisions.models import Decision

    before = unjudged(cause)
    assert best_options(channel, request([(group, count, pods, template)])) == [group]
    assert unjudged(cause) == before + 1
    [line] = Decision.objects.get(caller="expander").nodes
    assert line["fits"] and line["unresolvable"], line
    assert line["reason"].startswith(f"kept, not judged: {cause}: "), line
    if cause == "unusable-pod":  # the pod and its annotation named, the decision on record
        assert line["reason"] == (
            "kept, not judged: unusable-pod: pod ml/weighted: invalid hami.io/device-scoring-weights "
            'annotation "slot=1,core=2": expected slot, core, and memory weights'
        ), line


@pytest.mark.parametrize(("cause", "group", "count", "pods", "template"), CAUSES, ids=[c[0] for c in CAUSES])
def test_strict_mode_drops_it(groups, channel, settings, cause, group, count, pods, template):
    from decisions.models import Decision

    settings.EXPANDER_UNJUDGED = "drop"
    assert best_options(channel, request([(group, count, pods, template)])) == []
    [line] = Decision.objects.get(caller="expander").nodes
    assert line["reason"].startswith(f"dropped, not judged: {cause}: "), line


def test_unjudged_options_are_kept_beside_the_best_and_proven_misfits_still_go(groups, channel):
    """A 40000 MiB pod: HAMi's rules prove the A10 group cannot place it (dropped), the H100 group
    places it (kept), and the unknown group is kept as not judged; CA's next expander narrows."""
    big = pod_msg("big", 40000).SerializeToString()
    options = [
        ("gpu-a10", 1, [big], TEMPLATES["gpu-a10"].SerializeToString()),
        ("gpu-h100", 1, [big], TEMPLATES["gpu-h100"].SerializeToString()),
        ("nobody", 1, [big], cold("template-node-for-nobody").SerializeToString()),
    ]
    assert best_options(channel, request(options)) == ["gpu-h100", "nobody"]


def test_an_unhealthy_template_that_still_places_every_pod_is_judged(groups, channel):
    """The doubt matters only when the packing falls short: two healthy cards of four hold both pods."""
    devices = [gpu(f"GPU-{i}", index=i, health=i < 2) for i in range(4)]
    template = node_msg(node("template-node-for-gpu-a10-1", devices)).SerializeToString()
    pods = [pod_msg(f"p{i}", 12000).SerializeToString() for i in range(2)]
    from decisions.models import Decision

    assert best_options(channel, request([("gpu-a10", 1, pods, template)])) == ["gpu-a10"]
    [line] = Decision.objects.get(caller="expander").nodes
    assert line["reason"].startswith("kept: places 2/2") and not line["unresolvable"], line


def test_database_unreachable_when_the_expander_started(tls_files, connect, tmp_path):
    """``run_expander`` started while PostgreSQL is unreachable never loads the node groups: a
    template without a registration cannot be judged (kept), a warm template still is; its
    ``--metrics-bind`` endpoint counts the unjudged option."""
    env = {
        **os.environ,
        "DATABASE_URL": "postgres://hami@127.0.0.1:1/unreachable",
        "DECISION_RECORDING": "off",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    cert, key, _ = tls_files
    with socket.socket() as probe:  # a free port for the metrics endpoint
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    args = ["--bind", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key]
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "run_expander", *args, "--metrics-bind", f"127.0.0.1:{metrics_port}"],
        cwd=env["PYTHONPATH"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "listening on" in line, line
        port = int(line.split("127.0.0.1:", 1)[1].split(" ", 1)[0])
        big = pod_msg("big", 40000).SerializeToString()
        options = [
            ("gpu-a10", 1, [big], TEMPLATES["gpu-a10"].SerializeToString()),  # warm: judged, cannot fit
            ("gpu-h100", 1, [big], TEMPLATES["gpu-h100"].SerializeToString()),  # cold: group unknown
        ]
        assert best_options(connect(port), request(options)) == ["gpu-h100"]
        metrics = (
            urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
        )
        assert 'hami_sim_expander_unjudged_options_total{reason="catalog-unavailable"} 1.0' in metrics
        assert 'hami_sim_expander_requests_total{wire="bytes"} 1.0' in metrics
    finally:
        proc.terminate()
        proc.wait(timeout=10)

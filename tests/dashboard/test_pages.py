"""Dashboard pages over HTTP: login, the overview, the pod page's answer and grid, node group, what-if."""

from __future__ import annotations

import re

import pytest

from decisions.models import CAEvent, Decision
from tests.factories.models import AutoscalerStatusFactory, CAEventFactory, DecisionFactory

pytestmark = [pytest.mark.django_db]

LLM_UID = "6f1c3b0e-0000-4000-8000-000000000001"


def test_login_required_unless_demo_read_only(client, settings, demo_data):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/?next=/")
    settings.DEMO_READ_ONLY = True
    assert client.get("/").status_code == 200
    assert client.get("/decisions/").status_code == 200


def test_overview_lists_groups_decisions_and_runs(client, staff, demo_data, settings):
    from decisions.tasks import prune_decisions, sync_autoscaler_events

    prune_decisions.apply()
    settings.KUBE_SOURCE = "http://127.0.0.1:9"  # nothing listens: the sync fails and says so
    sync_autoscaler_events.apply()
    client.force_login(staff)
    html = client.get("/").content.decode()
    for name in ("gpu-a10", "gpu-h100", "gpu-l4"):
        assert f'href="/node-groups/{name}/"' in html
    assert "warm (2 nodes)" in html and "cold" in html and "no profile" in html
    assert "Filter answers per hour by verdict" in html and "Top failure reasons" in html
    assert "CardInsufficientMemory" in html
    assert "llm-inference-7d9f-x2k4p" in html
    assert "prune_decisions" in html
    assert 'class="card error sync-error"><b>sync_autoscaler_events failed' in html
    assert re.search(r'src="/static/dashboard/plotly\.min\.[0-9a-f]{12}\.js"', html)  # by content hash


def test_plotly_is_served_from_our_static_files(client):
    response = client.get("/static/dashboard/plotly.min.js")
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"plotly.js" in body[:2000]


def test_pod_page_answers_why_it_scaled(client, staff, demo_data):
    client.force_login(staff)
    d = Decision.objects.get(pod_uid=LLM_UID)
    assert d.count == 6
    html = client.get(f"/decisions/{d.pk}/").content.decode()
    answer = re.search(r'id="answer">(.*?)</div>', html, re.S).group(1)
    assert answer.startswith(
        "Scaled group gpu-h100 (0-&gt;1): the pod needs 40000 MiB and 50% cores on one card"
    )
    assert "gpu-a10 cards have 23028 MiB but 4/4 CardInsufficientMemory" in answer
    assert "no device profile for node group gpu-l4" in answer
    assert "pod triggered scale-up" in html and "FailedScheduling" in html
    assert "chosen 40000 MiB, 50% cores" in html
    assert 'id="fig-grid"' in html


def test_pod_link_redirects_to_latest_decision(client, staff, demo_data):
    client.force_login(staff)
    d = Decision.objects.get(pod_uid=LLM_UID)
    response = client.get("/pods/ml/llm-inference-7d9f-x2k4p/")
    assert response.status_code == 302 and response["Location"] == f"/decisions/{d.pk}/"
    assert client.get("/pods/ml/nobody/").status_code == 404


def test_rejected_everywhere_has_per_device_reasons(client, staff, demo_data):
    client.force_login(staff)
    d = Decision.objects.get(pod_name="giant-training-0")
    assert d.verdict == "no_fit"
    html = client.get(d.get_absolute_url()).content.decode()
    assert "CA did not scale up" in html
    assert html.count("CardInsufficientMemory</span>") >= 12  # 4 A10G + 8 H100 cards, each with its rule


def test_decision_list_filters_like_the_api(client, staff, demo_data):
    client.force_login(staff)
    html = client.get("/decisions/?verdict=fit").content.decode()
    assert "llm-inference" in html and "giant-training" not in html
    html = client.get("/decisions/?q=giant").content.decode()
    assert "giant-training" in html and "llm-inference" not in html
    api = client.get("/api/v1/decisions/?verdict=fit").json()
    assert {r["pod_name"] for r in api["results"]} == {"llm-inference-7d9f-x2k4p", "notebook-5c8b-q7z9m"}
    assert client.get("/decisions/?verdict=bogus").status_code == 200  # invalid filter: empty table, no 500


def test_node_group_page(client, staff, demo_data):
    client.force_login(staff)
    html = client.get("/node-groups/gpu-h100/").content.decode()
    assert "hami.io/node-nvidia-register" in html and "NVIDIA H100 80GB HBM3" in html
    assert 'id="fig-capacity"' in html and "cold" in html
    html = client.get("/node-groups/gpu-a10/").content.decode()
    assert 'href="/nodes/ip-10-0-1-11.ec2.internal/"' in html
    assert client.get("/node-groups/nope/").status_code == 404
    assert client.get("/nodes/ip-10-0-1-11.ec2.internal/").status_code == 200


def test_events_page_filters(client, staff, demo_data):
    client.force_login(staff)
    html = client.get("/events/?reason=NotTriggerScaleUp").content.decode()
    assert "giant-training-0" in html and "llm-inference" not in html
    assert CAEvent.objects.count() == 44  # 41 TriggeredScaleUp (llm-inference and the 40 llm-train pods)


POD_YAML = """
apiVersion: v1
kind: Pod
metadata: {name: what-if, namespace: ml}
spec:
  containers:
  - name: main
    image: busybox
    resources:
      limits: {nvidia.com/gpu: "1", nvidia.com/gpumem: "12000"}
      requests: {cpu: "1", memory: 1Gi}
"""


def test_what_if_estimates_and_records(client, staff, demo_data):
    client.force_login(staff)
    response = client.post(
        "/what-if/",
        {"pod": POD_YAML, "count": 9, "groups": ["gpu-a10", "gpu-h100"], "expander": "least-waste"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    counts = dict(re.findall(r'data-group="([^"]+)">.*?class="node-count">(\d+)<', html, re.S))
    # 12000 MiB: one per A10G (4 cards) -> 3 nodes for 9 pods; six per H100 node (8 cards of 81559 MiB)
    assert counts == {"gpu-a10": "3", "gpu-h100": "2"} or counts["gpu-a10"] == "3"
    assert 'id="fig-grid"' in html
    assert Decision.objects.filter(caller="ui", pod_name="what-if").exists()


def test_what_if_bad_input_is_a_400_and_changes_nothing(client, staff, demo_data):
    client.force_login(staff)
    before = Decision.objects.count()
    response = client.post("/what-if/", {"pod": "kind: Pod\nspec: [", "count": 1, "groups": ["gpu-a10"]})
    assert response.status_code == 400 and b"not YAML or JSON" in response.content
    response = client.post("/what-if/", {"pod": POD_YAML, "count": 1, "groups": ["missing-group"]})
    assert response.status_code == 400
    assert Decision.objects.count() == before


def _more_decisions(n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        DecisionFactory(
            digest=f"bulk-{i}",
            pod_uid=f"bulk-{i}",
            pod_name=f"bulk-{i}",
            verdict="no_fit",
            top_reason="CardInsufficientMemory",
            node_groups=["gpu-a10", "gpu-h100"],
        )


@pytest.mark.parametrize("url", ["/", "/decisions/", "/node-groups/", "/node-groups/gpu-a10/", "/events/"])
def test_queries_do_not_grow_with_rows(
    client, staff, demo_data, django_assert_max_num_queries, url, settings, monkeypatch
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    # the live-usage cache re-checks the database every USAGE_CACHE_SECONDS (0.5 s): on a loaded
    # machine one page can outlast that and pay one more query than the other, whatever the rows
    settings.USAGE_CACHE_SECONDS = 3600
    # the blind-spot report is cached per process for REPORT_SECONDS (5 s): computed by the first
    # page here and kept for the second, whatever the machine's load (not left from another test)
    from usage import blindspot

    monkeypatch.setattr(blindspot, "REPORT_SECONDS", 3600.0)
    blindspot.forget()
    client.force_login(staff)
    _more_decisions(10)
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    _more_decisions(40, start=10)
    with django_assert_max_num_queries(len(few)):
        assert client.get(url).status_code == 200
    blindspot.forget()


def test_unknown_objects_are_404_not_500(client, staff, demo_data):
    client.force_login(staff)
    for url in (
        "/decisions/999999/",
        "/sessions/00000000-0000-4000-8000-000000000000/",
        "/nodes/nope/",
        "/sessions/not-a-uuid/",
    ):
        assert client.get(url).status_code == 404, url


@pytest.mark.parametrize(
    ("pod_text", "message"),
    [
        ('{"kind": "Pod", "spec": {"containers": "oops"}}', "must be an array"),
        ('{"kind": "Deployment", "spec": {}}', "expected kind Pod"),
        ("[1, 2]", "expected a Pod object"),
    ],
)
def test_what_if_rejects_malformed_pods(client, staff, demo_data, pod_text, message):
    client.force_login(staff)
    response = client.post(
        "/what-if/", {"pod": pod_text, "count": 1, "groups": ["gpu-a10"], "expander": "least-waste"}
    )
    assert response.status_code == 400 and message in response.content.decode()


def test_what_if_pod_without_devices_fits_everywhere(client, staff, demo_data):
    client.force_login(staff)
    pod_text = '{"kind": "Pod", "metadata": {"name": "cpu-only"}, "spec": {"containers": [{"name": "c"}]}}'
    response = client.post(
        "/what-if/", {"pod": pod_text, "count": 2, "groups": ["gpu-a10"], "expander": "least-waste"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "one pod needs no HAMi-managed device" in html


@pytest.mark.parametrize(
    ("url", "present", "absent"),
    [
        ("/nodes/?node_group=gpu-a10", "ip-10-0-1-11.ec2.internal", "ip-10-0-0-5.ec2.internal"),
        ("/drift/?kind=degradation", "ip-10-0-1-12.ec2.internal", "ip-10-0-1-11.ec2.internal"),
        ("/node-groups/?q=h100", "gpu-h100", 'href="/node-groups/gpu-l4/"'),
        ("/sessions/?expired=false", "Simulation sessions", "Traceback"),
        ("/task-runs/?outcome=failure", "Task runs", "prune_decisions"),
    ],
)
def test_every_list_filters(client, staff, demo_data, url, present, absent):
    from decisions.tasks import prune_decisions

    prune_decisions.apply()
    client.force_login(staff)
    response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200 and present in html and absent not in html


def test_decision_from_every_caller_renders(client, staff, demo_data, settings):
    from decisions import recorder
    from hami_sim.runtime.simulator import get_simulator
    from tests.factories import gpu, node, pod

    sim = get_simulator()
    ctx = sim.pod_context(pod("s", gpumem=1000, uid="uid-s"))
    nodes = [node("n1", [gpu("GPU-1")])]
    for caller in ("session:not-a-uuid", "session:6f1c3b0e-0000-4000-8000-0000000000aa", "estimate", "ui"):
        recorder.record(ctx.pod, nodes, sim.filter_nodes(ctx, nodes), caller=caller)
    client.force_login(staff)
    for d in Decision.objects.filter(pod_uid="uid-s"):
        assert client.get(d.get_absolute_url()).status_code == 200, d.caller


def test_odd_group_names_from_the_cluster_do_not_break_pages(client, staff, demo_data):
    """CA node group ids on GCE are URLs; a status entry may lack a name."""
    from decisions.events import parse_event_message

    gce = "https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gpu-pool"
    message = f"pod triggered scale-up: [{{{gce} 0->1 (max: 3)}}]"
    parsed, groups = parse_event_message("TriggeredScaleUp", message)
    assert groups == [gce]
    d = Decision.objects.get(pod_name="giant-training-0")
    CAEventFactory(pod_uid=d.pod_uid, pod_name=d.pod_name, message=message, parsed=parsed, groups=groups)
    AutoscalerStatusFactory(fetched_at=d.last_seen, parsed={"nodeGroups": [{"health": {}}]})
    client.force_login(staff)
    html = client.get(d.get_absolute_url()).content.decode()
    assert f'href="/node-groups/{gce}/"' in html
    assert client.get("/").status_code == 200
    assert client.get(f"/node-groups/{gce}/").status_code == 404  # not a group we know


def test_answer_flags_a_scale_up_hami_sim_rejected(client, staff, demo_data):
    d = Decision.objects.get(pod_name="giant-training-0")
    CAEventFactory(
        pod_uid=d.pod_uid,
        pod_name=d.pod_name,
        message="pod triggered scale-up: [{gpu-a10 2->3 (max: 10)}]",
        parsed={"scaleUps": [{"group": "gpu-a10", "from": 2, "to": 3, "max": 10}]},
        groups=["gpu-a10"],
    )
    client.force_login(staff)
    html = client.get(d.get_absolute_url()).content.decode()
    answer = re.search(r'id="answer">(.*?)</div>', html, re.S).group(1)
    assert answer.startswith(
        "Scaled group gpu-a10 (2-&gt;3): the pod needs 100000 MiB on one card; "
        "but hami-sim answered that gpu-a10 cannot take it"
    )

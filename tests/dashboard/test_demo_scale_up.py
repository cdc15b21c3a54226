"""The demo tells one story of its one scale-up: CA grew gpu-h100 0->1 in the loop that saw the 40
``llm-train`` pods and ``llm-inference`` pending, so each of those 41 pods carries CA's
``TriggeredScaleUp`` event naming that scale-up, and the rest of the demo agrees with it.

CA's source (tag ``cluster-autoscaler-1.36.1``, the same at 1.32.1): ``ScaleUpStatus.PodsTriggeredScaleUp``
is ``bestOption.Pods`` (``core/scaleup/orchestrator/orchestrator.go``), and
``processors/status/eventing_scale_up_processor.go`` records one ``TriggeredScaleUp`` event per such pod
with the message ``pod triggered scale-up: %v`` of the ``ScaleUpInfo`` list, each written
``{<group> <current>-><new> (max: <max>)}`` (``processors/nodegroupset/nodegroup_set_processor.go``).
"""

from __future__ import annotations

import pytest

from tests.dashboard.conftest import load_demo

pytestmark = [pytest.mark.django_db]

H100 = "ip-10-0-2-21.ec2.internal"


@pytest.fixture
def demo():
    from usage import blindspot
    from usage.store import get_store

    counts = load_demo()
    get_store().refresh(force=True)
    blindspot.forget()
    yield counts
    blindspot.forget()


def _scale_ups() -> dict[str, str]:
    from decisions.models import CAEvent

    return {
        e.pod_name: e.message
        for e in CAEvent.objects.filter(reason="TriggeredScaleUp", source="cluster-autoscaler")
    }


def test_every_pod_of_the_scale_up_carries_cas_event(demo):
    from decisions.demo import DEMO_PODS, H100_SCALE_UP, train_pods
    from decisions.events import parse_event_message

    names = [p["metadata"]["name"] for p in train_pods()]
    assert len(names) == 40 and all(n.startswith("llm-train-") for n in names)
    scaled = _scale_ups()
    assert set(scaled) == {*names, DEMO_PODS["llm-inference"]["metadata"]["name"]}
    assert set(scaled.values()) == {H100_SCALE_UP}  # one scale-up, one message
    parsed, groups = parse_event_message("TriggeredScaleUp", H100_SCALE_UP)
    assert groups == ["gpu-h100"]
    assert demo["events"] == 3 + len(scaled)


def test_the_scale_up_matches_the_group_and_the_cluster(demo):
    """0->1 (max: 4): gpu-h100's max size, the one gpu-h100 node the snapshot holds, CA's status
    target, 8 of the pods on that node and 32 left pending."""
    from decisions.demo import H100_SCALE_UP, train_pods
    from decisions.events import parse_event_message
    from decisions.models import AutoscalerStatus
    from profiles.models import NodeGroup, NodeInventory

    (info,) = parse_event_message("TriggeredScaleUp", H100_SCALE_UP)[0]["scaleUps"]
    group = NodeGroup.objects.get(name="gpu-h100")
    assert (info["group"], info["from"], info["to"], info["max"]) == ("gpu-h100", 0, 1, group.max_size)
    nodes = NodeInventory.objects.filter(node_group=group, gone_at__isnull=True)
    assert [n.name for n in nodes] == [H100]
    (status,) = AutoscalerStatus.objects.all()
    (h100,) = [g for g in status.parsed["nodeGroups"] if g["name"] == "gpu-h100"]
    assert h100["health"]["cloudProviderTarget"] == info["to"]
    placed = [p for p in train_pods() if p["spec"].get("nodeName") == H100]
    assert (len(placed), len(train_pods()) - len(placed)) == (8, 32)


def test_the_pending_pod_page_shows_what_scaled_which_group(client, demo):
    from tests.factories.models import UserFactory

    client.force_login(UserFactory(username="oncall", password="pw-oncall", is_staff=True))
    html = client.get("/pods/ml/llm-train-7d9f8c6b5-08/").content.decode()
    events = html[html.index('id="pod-events"') :]
    assert "TriggeredScaleUp" in events and "{gpu-h100 0-&gt;1 (max: 4)}" in events
    assert 'id="invisible-banner"' in html  # scaled for once, then invisible to CA
    assert "pod_name=llm-train-7d9f8c6b5-08" in html

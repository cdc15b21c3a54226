"""Pages that live in one app and show what other apps know: a node group's page (``profiles``)
with its member nodes' usage (``usage``) and the decisions and CA events naming it (``decisions``);
the drift list (``profiles``) with the pods' allocation findings (``usage``)."""

from __future__ import annotations

import html

import pytest

from tests.factories.models import CAEventFactory, DecisionFactory, NodeGroupFactory
from tests.profiles.conftest import A10

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def logged_in(client, staff):
    client.force_login(staff)
    return client


def test_a_node_groups_page_shows_the_sections_other_apps_add_in_order(logged_in):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    DecisionFactory(pod_name="asked-about-a10", node_groups=["gpu-a10"])
    DecisionFactory(pod_name="asked-about-h100", node_groups=["gpu-h100"])
    CAEventFactory(
        pod_name="scaled-a10", groups=["gpu-a10"], message="pod triggered scale-up: [{gpu-a10 0->1 (max: 4)}]"
    )
    page = html.unescape(logged_in.get("/node-groups/gpu-a10/").content.decode())
    headings = [
        "Device profile",
        "Member nodes",
        "Drift findings",
        "Decisions naming this group",
        "Scale-ups CA reported",
    ]
    positions = [page.index(f">{h}</h2>") for h in headings]
    assert positions == sorted(positions), dict(zip(headings, positions, strict=True))
    decisions = page.split(">Decisions naming this group</h2>", 1)[1].split("</h2>", 1)[0]
    assert "ml/asked-about-a10" in decisions and "asked-about-h100" not in decisions
    assert "ml/scaled-a10" in page.split(">Scale-ups CA reported</h2>", 1)[1]


@pytest.mark.parametrize(
    ("path", "section"),
    [
        ("/node-groups/", "Node groups"),
        ("/nodes/", "Nodes"),
        ("/drift/", "Drift findings"),
        ("/decisions/", "Decisions"),
        ("/events/", "Autoscaler events"),
        ("/sessions/", "Simulation sessions"),
        ("/task-runs/", "Task runs"),
    ],
)
def test_every_list_page_keeps_its_url_and_marks_its_section(logged_in, path, section):
    page = logged_in.get(path).content.decode()
    assert f"<h1>{section}</h1>" in page
    assert 'aria-current="page"' in page

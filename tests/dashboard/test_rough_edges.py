"""What a new user reads on the pages: filter labels, empty tables, one date format,
the current section in the nav, the pod page's outcome and request, What-if's example and notes."""

from __future__ import annotations

import re

import pytest

from decisions.filtersets import CAEventFilterSet, DecisionFilterSet
from decisions.forms import EXAMPLE_POD
from profiles.filtersets import (
    DriftFindingFilterSet,
    NodeGroupFilterSet,
    NodeInventoryFilterSet,
    TaskRunFilterSet,
)
from simulations.filtersets import SessionFilterSet

pytestmark = [pytest.mark.django_db]

BAD_LABELS = ("[invalid name]", "is null", "Exclude", "is greater than", "is less than")


#: the FilterSets of the list pages (each app's own, shared with its API where it has a list endpoint)
LIST_FILTERSETS = (
    DecisionFilterSet,
    CAEventFilterSet,
    NodeGroupFilterSet,
    NodeInventoryFilterSet,
    DriftFindingFilterSet,
    TaskRunFilterSet,
    SessionFilterSet,
)


@pytest.mark.parametrize("filterset_class", LIST_FILTERSETS, ids=lambda c: c.__name__)
def test_every_dashboard_filter_has_a_readable_label(filterset_class):
    name = filterset_class.__name__
    for field, flt in filterset_class().filters.items():
        label = str(flt.label)
        assert label and label[0].isupper(), (name, field, label)
        assert not any(bad in label for bad in BAD_LABELS), (name, field, label)


@pytest.mark.parametrize(
    ("url", "title"),
    [
        ("/admin/profiles/nodegroup/", "has a device profile"),
        ("/admin/profiles/nodeinventory/", "registered by HAMi"),
    ],
)
def test_admin_filters_have_titles_not_field_names(admin_client, url, title):
    html = admin_client.get(url).content.decode()
    assert "By profiles" not in html and "By registered at" not in html
    assert title in html
    assert "[invalid name]" not in html and "Not empty" not in html


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/decisions/", "No decisions yet"),
        ("/events/", "No Cluster Autoscaler events synced yet"),
        ("/node-groups/", "No node groups yet"),
        ("/nodes/", "No nodes seen"),
        ("/drift/", "No drift findings"),
        ("/task-runs/", "No task runs recorded yet"),
        ("/sessions/", "No simulation sessions"),
        ("/decisions/?verdict=fit", "No decisions match these filters."),
        ("/nodes/?node_group=nope", "No nodes match these filters."),
    ],
)
def test_every_empty_table_says_why(client, staff, url, message):
    client.force_login(staff)
    response = client.get(url)
    assert response.status_code == 200
    assert message in response.content.decode()


def test_empty_overview_says_why_its_charts_are_empty(client, staff):
    client.force_login(staff)
    html = client.get("/?range=1h").content.decode()
    assert "No filter answers in the last 1h" in html and "No rejected pods in the last 1h" in html


@pytest.mark.parametrize("url", ["/", "/decisions/", "/task-runs/", "/nodes/ip-10-0-1-11.ec2.internal/"])
def test_dates_have_one_format_with_the_time_zone(client, staff, demo_data, url):
    client.force_login(staff)
    html = client.get(url).content.decode()
    stamps = re.findall(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?(?: [A-Z]{3})?", html)
    assert stamps, url
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", s) for s in stamps), stamps


def test_admin_dates_use_the_same_format(admin_client, demo_data):
    html = admin_client.get("/admin/profiles/nodeinventory/").content.decode()
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", html)


@pytest.mark.parametrize(
    ("url", "current"),
    [
        ("/", "Overview"),
        ("/decisions/", "Decisions"),
        ("/node-groups/gpu-a10/", "Node groups"),
        ("/nodes/ip-10-0-1-11.ec2.internal/", "Nodes"),
        ("/what-if/", "What-if"),
        ("/task-runs/", "Task runs"),
    ],
)
def test_the_current_section_is_marked_in_the_nav(client, staff, demo_data, url, current):
    client.force_login(staff)
    html = client.get(url).content.decode()
    marked = re.findall(r'<a href="[^"]*" class="active" aria-current="page">([^<]+)</a>', html)
    assert marked == [current]


def test_pod_page_says_what_happened_and_reads_the_request(client, staff, demo_data):
    from decisions.models import Decision

    client.force_login(staff)
    scaled = Decision.objects.get(pod_name="llm-inference-7d9f-x2k4p")
    html = client.get(scaled.get_absolute_url()).content.decode()
    assert re.search(r'id="outcome">triggered scale-up of gpu-h100<', html)
    assert "{'NVIDIA'" not in html and "mem_percentage_req" not in html
    assert "memory per device: <b>40000 MiB</b>" in html and "cores per device: <b>50%</b>" in html
    assert "fits a new node" in html  # a template node: the node CA would add
    assert "Score: HAMi&#x27;s node score" in html and "HAMi prefers the highest score" in html

    rejected = Decision.objects.get(pod_name="giant-training-0")
    html = client.get(rejected.get_absolute_url()).content.decode()
    assert re.search(r'id="outcome">CA did not scale up<', html)


def test_pod_page_names_an_existing_node(client, staff, demo_data):
    from decisions.models import Decision

    client.force_login(staff)
    notebook = Decision.objects.get(pod_name="notebook-5c8b-q7z9m")
    html = client.get(notebook.get_absolute_url()).content.decode()
    outcome = re.search(r'id="outcome">([^<]+)<', html).group(1)
    assert outcome.startswith(("fits existing node ", "fits a new node of ", "triggered scale-up of "))
    assert outcome != "fit"


def test_what_if_starts_with_an_example_and_every_group_ticked(client, staff, demo_data):
    client.force_login(staff)
    html = client.get("/what-if/").content.decode()
    assert "inference-example" in html and 'id="load-example"' in html
    ticked = re.findall(r'<input type="checkbox" name="groups" value="([^"]+)"[^>]*checked', html)
    assert sorted(ticked) == ["gpu-a10", "gpu-h100", "gpu-l4"]


def test_what_if_example_estimates_and_explains_waste(client, staff, demo_data):
    client.force_login(staff)
    groups = ["gpu-a10", "gpu-h100", "gpu-l4"]
    response = client.post(
        "/what-if/", {"pod": EXAMPLE_POD, "count": 3, "groups": groups, "expander": "least-waste"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="estimate-answer"' in html and "CA would scale" in html
    assert "(capacity − requests) / capacity" in html
    assert "least-waste score " in html and "= cpu + memory, of 2" in html  # the score CA compares
    assert "(score " not in html
    assert "<sup>*</sup>" not in html  # the example requests cpu and memory: no footnote


def test_what_if_pod_asking_no_cpu_has_its_waste_explained(client, staff, demo_data):
    client.force_login(staff)
    pod_text = '{"kind": "Pod", "metadata": {"name": "cpu-only"}, "spec": {"containers": [{"name": "c"}]}}'
    html = client.post(
        "/what-if/", {"pod": pod_text, "count": 1, "groups": ["gpu-a10"], "expander": "least-waste"}
    ).content.decode()
    waste = re.search(r'<td class="waste">(.*?)</td>', html, re.S).group(1)
    assert waste.startswith("1.00<sup>*</sup> / 1.00<sup>*</sup>")
    assert "The pods request no cpu (or no memory)" in html


def test_api_root_lists_every_collection(client, staff):
    client.force_login(staff)
    listed = set(client.get("/api/v1/", HTTP_ACCEPT="application/json").json())
    from hami_sim.project.urls import router

    assert listed == {prefix for prefix, _, _ in router.registry}
    assert len(listed) >= 10

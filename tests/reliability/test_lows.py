"""The third round's lows: data drawn in a chart is text, never a link; the what-if page's YAML
keeps its limits on libyaml.

A read-only token could name a node ``<a href="https://...">`` in a filter call, and the decision
page's chart drew it as a clickable link (Plotly renders its own HTML subset). Every value from data
is escaped now; Plotly shows it as the literal text."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from hami_sim.project import safeyaml
from tests.factories import kube
from tests.factories.models import NodeGroupFactory, TokenFactory, UserFactory

pytestmark = pytest.mark.django_db

LINK = '<a href="https://evil.example/">click here</a>'


def _strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _figure(html: str, plot_id: str) -> dict:
    found = re.search(rf'<script id="{plot_id}" type="application/json">(.*?)</script>', html, re.S)
    assert found, f"no {plot_id} on the page"
    return json.loads(found.group(1))


# where a caller's text lands in the decision page's grid: the node's name, its device type and UUID
NODES = {
    "node name": kube.gpu_node(LINK, 2),
    "device type and uuid": kube.node("n-type", [kube.gpu(LINK, type=LINK)]),
    "unregistered node's reason": kube.node(LINK, None),
}


@pytest.mark.parametrize("where", list(NODES))
def test_a_read_only_token_cannot_plant_a_link_in_the_decision_chart(client, where):
    from decisions.models import Decision

    token = TokenFactory(user=UserFactory(username="reader"))  # no role: reads only
    body = kube.extender_args(kube.pod("p", gpumem=1000, uid="uid-p"), [NODES[where]])
    answer = client.post(
        "/filter-simulation", body, content_type="application/json", HTTP_AUTHORIZATION=f"Token {token.key}"
    )
    assert answer.status_code == 200
    decision = Decision.objects.get(pod_name="p")

    client.force_login(UserFactory(username="oncall", is_staff=True))
    page = client.get(f"/decisions/{decision.pk}/").content.decode()
    grid = _figure(page, "fig-grid")
    drawn = list(_strings(grid["data"]))
    assert not [s for s in drawn if "<a" in s.lower()], "a caller's markup is drawn as markup"
    assert any("&lt;a href=" in s for s in drawn)  # shown as the text it is


def _pod(annotation_bytes: int) -> str:
    return yaml.safe_dump(
        {
            "kind": "Pod",
            "metadata": {"name": "big", "annotations": {"note": "x" * annotation_bytes}},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        },
        width=1 << 30,
    )


# (document, what the what-if page says): the limits libyaml's loader keeps
YAML_CASES = {
    "the page's 256 KiB limit, answered": (_pod(256 * 1024 - 300), None),
    "an alias": ("kind: Pod\nspec: &s {containers: []}\nx: *s\n", "YAML aliases (*name) are not accepted"),
    "65 levels": ("kind: Pod\nspec: " + "[" * 65 + "]" * 65 + "\n", "YAML nested deeper than 64 levels"),
    "100,000 levels": ("[" * 100_000, "nesting depth"),  # libyaml's own limit (1,000) comes first
    "not YAML": ("kind: Pod\nspec: [", "not YAML or JSON"),
}


@pytest.mark.parametrize("case", list(YAML_CASES))
def test_the_what_if_yaml_keeps_its_limits(client, case):
    document, refusal = YAML_CASES[case]
    NodeGroupFactory(name="gpu-a10")
    client.force_login(UserFactory(username="oncall", is_staff=True))
    response = client.post(
        "/what-if/", {"pod": document, "count": 1, "groups": ["gpu-a10"], "expander": "least-waste"}
    )
    html = response.content.decode()
    if refusal is None:
        assert response.status_code == 200 and "not YAML or JSON" not in html
    else:
        assert response.status_code == 400 and refusal in html, html[-1500:]


def test_libyaml_reads_what_the_python_loader_reads():
    assert safeyaml.FAST is yaml.CSafeLoader  # the wheels carry libyaml; the image installs them
    for document, refusal in YAML_CASES.values():
        if refusal is None:
            assert safeyaml.load(document) == yaml.safe_load(document)

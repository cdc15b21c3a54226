"""The expander's decision records and CA's template rendering as a person sees them on the
dashboard: each option with its verdict and reason; each provider's rendering."""

from __future__ import annotations

import html
import json

import pytest

from simulations.grpcexpander.protos import expander_pb2 as pb
from simulations.grpcexpander.service import best_options
from tests.expander.ca_clients import NEWEST, encode
from tests.expander.test_grpc_expander import TEMPLATES, option, pods
from tests.factories.models import NodeGroupFactory, UserFactory
from tests.profiles.conftest import A10, H100

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def groups(db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])


@pytest.fixture
def staff_client(client, db):
    client.force_login(UserFactory(username="oncall", password="pw", is_staff=True))
    return client


def _expander_call(options) -> None:
    best_options(pb.BestOptionsRequest.FromString(encode(NEWEST, options, TEMPLATES)))


def _option_rows(page: str) -> dict[str, str]:
    """Node group -> the text of its row in the decision page's per-group table."""
    table = page.split('id="grid-table"', 1)[1].split("</table>", 1)[0]
    rows = {}
    for row in table.split("<tr")[2:]:
        row = row.split(">", 1)[1]
        text = html.unescape(" ".join(part.split(">", 1)[-1] for part in row.split("<")))
        group = row.split("node-groups/", 1)[1].split("/", 1)[0] if "node-groups/" in row else ""
        rows[group] = " ".join(text.split())
    return rows


def test_the_decision_page_shows_each_options_verdict_and_reason(groups, staff_client):
    from decisions.models import Decision

    _expander_call(
        [
            option("gpu-a10", 2, pods(16, 12000)),
            option("gpu-h100", 2, pods(16, 12000)),
            option("nowhere", 1, pods(1, 12000)),
        ]
    )
    decision = Decision.objects.get(caller="expander")
    page = staff_client.get(f"/decisions/{decision.pk}/").content.decode()
    rows = _option_rows(page)
    # one row per option (placed / total, new nodes used / offered, GPU waste), no per-GPU heatmap
    assert rows == {
        "gpu-h100": "gpu-h100 template-node-for-gpu-h100-1 kept "
        "kept: places 16/16 pod(s) on 1 of 2 new node(s), gpu waste 1.706 16 / 16 1 / 2 1.706",
        "gpu-a10": "gpu-a10 template-node-for-gpu-a10-1 dropped places 8/16 pod(s); other options place 16 "
        "8 / 16 2 / 2 1.479",
        "nowhere": "nowhere nowhere kept, not judged kept, not judged: no-template: "
        "no template Node in the request and no node group of that id — — / 1 —",
    }
    assert 'id="fig-grid' not in page and "Node group × device" not in html.unescape(page)
    text = html.unescape(page)
    assert "asked 1× by expander" in text
    assert (
        '<span class="badge v-fit" id="outcome">expander kept gpu-h100; kept, not judged: nowhere</span>'
        in page
    )
    assert (
        "The gRPC expander kept gpu-h100; kept, not judged: nowhere, of 3 scale-up option(s) CA offered "
        "(CA's request form: bytes); 1 option(s) could not be judged and were kept" in text
    )


def test_an_empty_answer_says_ca_does_not_scale_up(groups, staff_client):
    from decisions.models import Decision

    _expander_call([option("gpu-a10", 3, pods(2, 90000))])
    page = staff_client.get(f"/decisions/{Decision.objects.get(caller='expander').pk}/").content.decode()
    assert "expander kept no option" in page
    assert "kept no option, so CA does not scale up in this loop" in page
    row = _option_rows(page)["gpu-a10"]
    assert row.startswith("gpu-a10 template-node-for-gpu-a10-1 dropped no pod fits a new node (2 pod(s):")


def test_the_node_group_page_shows_each_providers_ca_template_with_a_copy_button(groups, staff_client):
    page = staff_client.get("/node-groups/gpu-a10/").content.decode()
    for provider in ("aws", "azure", "clusterapi"):
        api = staff_client.get(f"/api/v1/node-groups/gpu-a10/ca-template?provider={provider}")
        shown = page.split(f'<pre id="ca-template-{provider}">', 1)[1].split("</pre>", 1)[0]
        assert json.loads(html.unescape(shown)) == api.json(), provider
        assert f'<button type="button" class="copy" data-copy="ca-template-{provider}">Copy</button>' in page
    assert "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu" in html.unescape(page)


def test_a_group_without_profile_still_renders_its_page(db, staff_client):
    NodeGroupFactory(name="cpu-pool")
    response = staff_client.get("/node-groups/cpu-pool/")
    assert response.status_code == 200 and 'id="ca-template-aws"' in response.content.decode()


def test_an_expander_call_is_recorded_as_its_own_kind_and_folds_with_the_next_loops(groups):
    """CA asks again every loop: the same answer moves one row's count; each line is an option
    (kept or not, judged or not, how many pods it places), not a node."""
    from decisions.models import Decision

    options = [option("gpu-a10", 2, pods(16, 12000)), option("nowhere", 1, pods(1, 12000))]
    _expander_call(options)
    _expander_call(options)
    decision = Decision.objects.get(caller="expander")
    assert decision.count == 2
    lines = {line["group"]: line for line in decision.nodes}
    fields = ("kept", "unjudged", "node_count", "placed", "total")
    assert {k: lines["gpu-a10"][k] for k in fields} == dict(zip(fields, (True, "", 2, 8, 16), strict=True))
    assert lines["nowhere"]["kept"] and lines["nowhere"]["unjudged"] == "no-template"
    # fit_groups holds what was judged and kept; the unjudged one is named apart, never as a fit
    assert decision.fit_groups == ["gpu-a10"] and decision.verdict == "fit"
    assert decision.top_reason == (
        "kept, not judged: nowhere: no-template: no template Node in the request and no node group of that id"
    )

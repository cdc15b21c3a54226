"""The dashboard's second round in a real headless Chromium, on the demo data.

Unhealthy cards drawn and counted as unhealthy (never free), live node names that link, a 404 page
that still navigates and searches, states that say what they mean, filters people can use, and
plotly.js fetched only by pages that draw a chart, after their text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboard.conftest import load_demo
from tests.dashboard.test_browser import ARTIFACTS, CHROMIUM, _operator
from tests.dashboard.test_operator_browser import _browser
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP = {"width": 1400, "height": 1000}
NOTEBOOK = "/pods/ml/notebook-5c8b-q7z9m/"
LLM = "/pods/ml/llm-inference-7d9f-x2k4p/"
SICK_NODE = "ip-10-0-1-12.ec2.internal"  # its GPU 2 registers "health": false


@pytest.fixture
def demo_user(live_server, transactional_db):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    load_demo()
    UserFactory(username="oncall", password="pw-oncall-1", is_staff=True)
    return live_server


def _plotly_requests(page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if "plotly" in r.url else None)
    return seen


def _trace_names(page, div: str) -> list[str]:
    return page.evaluate(f"document.getElementById('{div}').data.map(t => t.name)")


def test_unhealthy_cards_are_drawn_and_counted_as_unhealthy(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        # the decision grid: the notebook's question saw the sick node's GPU 2
        page.goto(f"{demo_user.url}{NOTEBOOK}")
        page.wait_for_selector("#fig-grid-div svg.main-svg")
        row = page.locator("#grid-table tr", has_text=SICK_NODE)
        assert row.locator(".badge.unhealthy").inner_text() == "GPU 2 NVIDIA A10G: unhealthy"
        assert "free" not in row.locator(".badge.unhealthy").inner_text()
        cell_text = page.evaluate(
            "(() => { const t = document.getElementById('fig-grid-div').data[0];"
            f" const y = t.y.findIndex(l => l.endsWith('{SICK_NODE}')); return t.text[y][2]; }})()"
        )
        assert cell_text == "unhealthy"
        page.screenshot(path=str(ARTIFACTS / "unhealthy-grid.png"), full_page=True)

        # the node page: its chart has an unusable part, no free part for GPU 2
        page.goto(f"{demo_user.url}/nodes/{SICK_NODE}/")
        page.wait_for_selector("#fig-capacity-div svg.main-svg")
        names = _trace_names(page, "fig-capacity-div")
        assert "unhealthy (unusable)" in names
        free_gpu2 = page.evaluate(
            "(() => { const d = document.getElementById('fig-capacity-div').data;"
            " const f = d.find(t => t.name === 'free'); return f.y[2]; })()"
        )
        assert free_gpu2 == 0

        # the group page: "MiB allocated / registered" leaves the sick card out and says so
        page.goto(f"{demo_user.url}/node-groups/gpu-a10/")
        totals = page.locator("#usage-totals").inner_text()
        sick = page.locator("#usage-totals .unhealthy-total").inner_text().split()
        assert " ".join(sick) == "1 unhealthy card (23028 MiB), not counted as free"
        assert "/ 161196" in totals  # 7 healthy A10G cards x 23028 MiB, not 8


def test_live_nodes_link_to_their_pages_and_the_pod_title_does_not_link_itself(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}{NOTEBOOK}")
        page.wait_for_selector("#grid-table")
        href = page.locator("#grid-table a", has_text=SICK_NODE).get_attribute("href")
        assert href == f"/nodes/{SICK_NODE}/"
        assert page.locator("h1 a").count() == 0
        page.goto(f"{demo_user.url}{LLM}")
        page.wait_for_selector("#grid-table")
        template = page.locator("#grid-table tr", has_text="template-node-for-gpu-h100")
        assert template.locator("a", has_text="template-node-for-gpu-h100").count() == 0  # no page to open
        assert "(template from its profile)" in template.inner_text()  # as the group page says

        page.goto(f"{demo_user.url}/nodes/")
        header = page.locator("table.table th").all_inner_texts()
        assert "Device memory allocated / registered" in header
        usage = page.locator("table.table tr", has_text=SICK_NODE).locator("td.usage").inner_text()
        assert "MiB" in usage and "1 unhealthy" in usage
        assert page.locator("table.table td", has_text="✘").count() == 0  # "Stale ✘" read as stale


def test_a_missing_page_keeps_the_navigation_and_offers_search(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        response = page.goto(f"{demo_user.url}/nodes/no-such-node/")
        assert response.status == 404
        assert page.locator("header nav a", has_text="Nodes").count() == 1
        assert "No node named 'no-such-node'" in page.locator("#not-found").inner_text()
        page.fill("#nf-pod", "notebook")
        page.click("#search-pods button")
        page.wait_for_url("**/decisions/?q=notebook")
        assert page.locator("a.pod-link", has_text="notebook").count() >= 1
        # a short host name, as an operator types it, opens the node
        page.goto(f"{demo_user.url}/nodes/ip-10-0-1-11/")
        assert page.url.endswith("/nodes/ip-10-0-1-11.ec2.internal/")


def test_states_say_what_they_mean(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/node-groups/gpu-l4/")  # no profile, no nodes, never scaled
        text = page.locator("main").inner_text()
        assert "No Cluster Autoscaler events synced yet" not in text
        assert "No CA event names gpu-l4" in text
        assert "every registered node matches" not in text
        assert "this group has no device profile, so drift is not checked" in text
        page.goto(f"{demo_user.url}/decisions/?verdict=fit")
        fit_rows = page.locator("table.table tbody tr")
        assert fit_rows.count() >= 1
        for i in range(fit_rows.count()):
            assert "CardInsufficientMemory" not in fit_rows.nth(i).inner_text()


def test_filters_start_at_any_and_show_every_choice(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/nodes/")
        stale = page.locator("#filters select[name=stale]")
        assert stale.locator("option:checked").inner_text() == "any"
        assert "Unknown" not in page.locator("#filters").inner_text()
        page.goto(f"{demo_user.url}/decisions/")
        assert page.locator("#filters select[multiple]").count() == 0
        expander = page.locator("#filters input[name=caller][value=expander]")
        assert expander.is_visible()
        expander.check()
        page.click("#filters button[type=submit]")
        page.wait_for_url("**caller=expander**")


def test_session_rows_are_numbered_apart_from_revisions(demo_user):
    from hami_sim.server.demo import DEMO_SESSION, Demo, seed_session
    from simulations.models import SimulationSession

    seed_session(Demo(port=1))
    session = SimulationSession.objects.get(name=DEMO_SESSION)
    _operator("oncall")  # the demo's session is the server's own: a reader needs the operators role
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/sessions/{session.pk}/")
        table = page.locator("table.table", has=page.locator("th", has_text="Revision"))
        numbers = table.locator("tbody tr td:first-child").all_inner_texts()
        assert numbers == [str(i) for i in range(1, len(numbers) + 1)]


def test_plotly_only_where_a_chart_is_drawn_and_after_the_text(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        fetched = _plotly_requests(page)
        page.goto(f"{demo_user.url}/decisions/")
        page.wait_for_load_state("networkidle")
        assert fetched == []  # a table page downloads no chart library
        html = page.content()
        assert "plotly.min.js" not in html.split("<body", 1)[0]  # nothing blocking in <head>
        page.goto(f"{demo_user.url}/")
        page.wait_for_selector("#fig-group-usage-div svg.main-svg")
        assert len(fetched) == 1
        assert "immutable" in (page.request.get(fetched[0]).headers.get("cache-control") or "")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (  # an indentation slip: where it is, as the CLI import says it
            lambda pod: pod.replace("    image: vllm/vllm-openai", "   image: vllm/vllm-openai"),
            "not YAML or JSON: line 11, column 4: did not find expected key",  # libyaml's words
        ),
        (  # Kubernetes refuses a pod without containers: there is nothing to estimate
            lambda pod: pod.split("  containers:")[0] + "  containers: []\n",
            "spec.containers must list at least one container (Kubernetes requires one)",
        ),
    ],
    ids=["broken-yaml", "no-containers"],
)
def test_what_if_names_what_is_wrong_with_the_pod(demo_user, edit, message):
    from decisions.forms import EXAMPLE_POD

    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/what-if/")
        page.fill("#id_pod", edit(EXAMPLE_POD))
        page.click("#what-if-form button[type=submit]")
        page.wait_for_selector("#what-if-form ul.errorlist")
        assert page.inner_text("#what-if-form ul.errorlist") == message
        assert page.locator("#estimate-answer").count() == 0  # no "CA would scale gpu-a10"

"""The dashboard for operators, third round, in a real headless Chromium on the demo data: chart pages
that break no Content-Security-Policy rule, an overview without internal figures (they are on the
diagnostics page), match labels as key=value, one spelling of CA's event reasons, a running task's
progress on the Task runs page, and a pod placed in a session from its page."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboard.conftest import load_demo
from tests.dashboard.test_browser import CHROMIUM, _operator
from tests.dashboard.test_operator_browser import _browser
from tests.factories.models import TaskRunFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP = {"width": 1400, "height": 1000}
LLM = "/pods/ml/llm-inference-7d9f-x2k4p/"
# Every page that draws a Plotly chart on the demo data.
CHART_PAGES = ["/", "/node-groups/gpu-a10/", "/nodes/ip-10-0-1-12.ec2.internal/", LLM]
# Listens before any script of the page runs: what the browser reports to a page's own listeners.
CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e =>
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '')));
"""


@pytest.fixture
def demo_user(live_server, transactional_db):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    load_demo()
    UserFactory(username="oncall", password="pw-oncall-1", is_staff=True)
    return live_server


def _csp_errors(page) -> list[str]:
    errors: list[str] = []
    page.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.add_init_script(CSP_LISTENER)
    return errors


@pytest.mark.parametrize("path", CHART_PAGES)
def test_chart_pages_break_no_content_security_policy_rule(demo_user, path):
    with _browser(demo_user, DESKTOP) as page:
        console = _csp_errors(page)
        page.goto(f"{demo_user.url}{path}")
        page.wait_for_selector("div[data-plot] svg.main-svg")
        page.wait_for_load_state("networkidle")
        page.hover("div[data-plot] svg.main-svg")  # the mode bar appears on hover
        header = page.evaluate("() => document.contentType")
        assert header == "text/html"
        assert page.evaluate("window.__csp") == []
        assert console == []


def test_the_overview_keeps_internal_figures_on_the_diagnostics_page(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/")
        text = page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
        assert "entries" not in text and "evictions" not in text and "node bytes" not in text
        page.click("nav >> text=Diagnostics")
        page.wait_for_selector("#cache-health")
        caches = page.locator("#cache-health tbody td:first-child").all_inner_texts()
        assert {"node bytes", "registrations"} <= set(caches)


def test_match_labels_read_as_key_equals_value(demo_user):
    from profiles.models import NodeGroup

    group = NodeGroup.objects.get(name="gpu-a10")
    group.match_labels = {"eks.amazonaws.com/nodegroup": "gpu-a10", "zone": "a"}
    group.save()
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/node-groups/gpu-a10/")
        shown = page.inner_text("#match-labels")
        assert shown == "match eks.amazonaws.com/nodegroup=gpu-a10, zone=a"
        assert "{" not in page.inner_text("h1 + p")


def test_ca_event_reasons_have_one_spelling(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/events/")
        events = page.inner_text("body")
        page.goto(f"{demo_user.url}{LLM}")
        pod = page.inner_text("body")
        assert "TriggeredScaleUp" in events and "TriggeredScaleUp" in pod
        for text in (events, pod):
            assert "Triggered Scale Up" not in text and "Not Trigger Scale Up" not in text
        page.goto(f"{demo_user.url}/events/")
        assert "TriggeredScaleUp" in page.inner_text("#filters")  # the reason filter's choices too


def test_the_task_runs_page_shows_a_running_tasks_progress(demo_user):
    TaskRunFactory(progress={"stage": "list pods", "done": 8000, "total": 16000})
    TaskRunFactory(task="check_drift", outcome="success", progress={"stage": "nodes", "done": 3, "total": 3})
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/task-runs/")
        cells = page.locator(".task-progress").all_inner_texts()
        assert [c.strip() for c in cells] == ["list pods 8,000 / 16,000 (50%)"]  # only the running one
        assert page.locator(".task-progress progress").get_attribute("value") == "8000"


def test_a_pod_is_placed_in_a_session_from_its_page(demo_user):
    from simulations.models import SessionPlacement
    from tests.factories.models import SessionFactory

    _operator("oncall")
    session = SessionFactory(owner="user:oncall")
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/sessions/{session.pk}/")
        page.select_option("#id_node", "group:gpu-a10")
        page.click("#place button[type=submit]")
        page.wait_for_selector(".message.success")
        message = page.inner_text(".message.success")
        assert message.startswith("placed ml/train-0 on template-node-for-gpu-a10")
        assert "12000 MiB" in message
        assert "train-0" in page.inner_text("body")
        # the node is now the session's: a second pod on it, then one HAMi cannot fit anywhere on it
        node = page.locator("#id_node option[value^='node:']").first.get_attribute("value")
        page.fill("#id_pod", page.input_value("#id_pod").replace("train-0", "train-1"))
        page.select_option("#id_node", node)
        page.click("#place button[type=submit]")
        page.wait_for_selector(".message.success")
        page.fill("#id_pod", page.input_value("#id_pod").replace("train-0", "huge").replace("12000", "80000"))
        page.select_option("#id_node", node)
        page.click("#place button[type=submit]")
        page.wait_for_selector(".message.error")
        assert "pod does not fit" in page.inner_text(".message.error")
        assert "CardInsufficientMemory" in page.inner_text(".message.error")
    assert sorted(SessionPlacement.objects.filter(session=session).values_list("name", flat=True)) == [
        "train-0",
        "train-1",
    ]

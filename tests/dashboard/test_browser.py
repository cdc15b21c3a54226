"""The dashboard in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Log in, open the overview, follow a pod to its device grid (an SVG heatmap with the device labels),
filter a table, open a node group and a session, submit the what-if form and read the node count.
Screenshots of every page go to tests/artifacts/.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from tests.dashboard.conftest import load_demo
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

POD_JSON = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "what-if-12g", "namespace": "ml"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "12000"},
                        "requests": {"cpu": "1", "memory": "1Gi"},
                    },
                }
            ]
        },
    },
    indent=2,
)


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture
def demo_live(live_server, transactional_db):
    """Demo data behind the live server (written before the browser's event loop starts)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    load_demo()
    UserFactory(username="oncall", password="pw-oncall-1", is_staff=True)
    return live_server


@pytest.fixture
def page(demo_live):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = context.new_page()
        pg.set_default_timeout(30000)
        yield pg
        context.close()
        browser.close()


def _svg_texts(page, selector: str) -> list[str]:
    page.wait_for_selector(f"{selector} svg.main-svg")
    return page.eval_on_selector_all(f"{selector} svg text", "els => els.map(e => e.textContent)")


def test_on_call_walkthrough(page, live_server):
    base = live_server.url
    # 1. login required: the overview sends us to the admin login
    page.goto(f"{base}/")
    assert "/admin/login/" in page.url
    page.fill("#id_username", "oncall")
    page.fill("#id_password", "pw-oncall-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/")

    # 2. overview: node groups, charts, recent decisions
    assert page.locator("#node-groups").get_by_text("gpu-h100").count() == 1
    assert "Filter answers per hour by verdict" in " ".join(_svg_texts(page, "#fig-over-time-div"))
    assert "CardInsufficientMemory" in _svg_texts(page, "#fig-reasons-div")
    page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)

    # 3. follow the pod that scaled the cold-zero group to its grid
    page.locator("#recent-decisions a.pod-link", has_text="llm-inference").click()
    page.wait_for_selector("#answer")
    answer = page.inner_text("#answer")
    assert answer.startswith("Scaled group gpu-h100 (0->1): the pod needs 40000 MiB")
    texts = _svg_texts(page, "#fig-grid-div")
    assert {"GPU 0", "GPU 3", "GPU 7"} <= set(texts)  # device columns (H100 nodes have 8 cards)
    assert "CardInsufficientMemory" in texts  # A10G cells carry the rule that rejected them
    assert any(t.startswith("chosen") for t in texts)
    assert any("gpu-h100 · template-node-for-gpu-h100-0" in t for t in texts)
    page.screenshot(path=str(ARTIFACTS / "pod.png"), full_page=True)

    # 4. pod -> group -> node
    page.locator("#grid-table a", has_text="gpu-a10").first.click()
    page.wait_for_selector("#fig-capacity-div svg.main-svg")
    assert "NVIDIA A10G" in page.content()
    page.screenshot(path=str(ARTIFACTS / "node_group.png"), full_page=True)
    page.locator("a", has_text="ip-10-0-1-11.ec2.internal").first.click()
    page.wait_for_selector("#device-0")
    page.screenshot(path=str(ARTIFACTS / "node.png"), full_page=True)

    # 5. filter a table
    page.goto(f"{base}/decisions/")
    page.fill("#id_q", "giant")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**q=giant**")
    rows = page.locator("table.table tbody tr")
    assert rows.count() == 1 and "giant-training-0" in rows.first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "decisions_filtered.png"), full_page=True)

    # 6. what-if: nine 12000 MiB pods need three A10G nodes (one pod per 23028 MiB card, four cards)
    page.goto(f"{base}/what-if/")
    page.fill("#id_pod", POD_JSON)
    page.fill("#id_count", "9")
    page.check("input[name=groups][value=gpu-a10]")
    page.check("input[name=groups][value=gpu-h100]")
    page.click("#what-if-form button[type=submit]")
    page.wait_for_selector("#estimate")
    assert page.inner_text("tr[data-group=gpu-a10] .node-count") == "3"
    # the H100 group is tainted nvidia.com/gpu:NoSchedule and this pod has no toleration
    assert page.inner_text("tr[data-group=gpu-h100] .node-count") == "0"
    assert "taint" in page.inner_text("tr[data-group=gpu-h100]").lower()
    assert "GPU 0" in _svg_texts(page, "#fig-grid-div")
    page.screenshot(path=str(ARTIFACTS / "what_if.png"), full_page=True)


def _operator(username: str) -> None:
    from django.contrib.auth import get_user_model

    from tests.roles import operators_group

    get_user_model().objects.get(username=username).groups.add(operators_group())


def test_session_page(demo_live, request):
    base = demo_live.url
    from profiles.models import NodeGroup
    from profiles.nodetemplates import group_template

    template = group_template(NodeGroup.objects.get(name="gpu-a10"))
    session = _post(f"{base}/api/v1/sessions", {"name": "ca-loop"})
    pod = json.loads(POD_JSON)
    for i in range(3):
        pod["metadata"] = {"name": f"p{i}", "namespace": "ml", "uid": f"uid-p{i}"}
        _post(f"{base}/api/v1/sessions/{session['id']}/placements", {"pod": pod, "node": template})
    _post(f"{base}/api/v1/sessions/{session['id']}/fork", {})
    _operator("oncall")  # the session is the anonymous caller's: another reader needs the role

    page = request.getfixturevalue("page")
    page.goto(f"{base}/admin/login/?next=/sessions/{session['id']}/")
    page.fill("#id_username", "oncall")
    page.fill("#id_password", "pw-oncall-1")
    page.click("input[type=submit]")
    page.wait_for_selector("#fig-usage-div svg.main-svg")
    assert "fork depth 1" in page.inner_text("#fork-depth")
    body = page.inner_text("main")
    assert "uid-p0" in body and "uid-p2" in body
    assert body.index("uid-p0") < body.index("uid-p2")  # placements in order
    page.screenshot(path=str(ARTIFACTS / "session.png"), full_page=True)

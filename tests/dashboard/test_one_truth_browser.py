"""One answer everywhere, in a real headless Chromium on the demo data: the demo's 32 pending
``llm-train`` pods (80000 MiB on one H100 card each) get the same node count and pods left from the
what-if page, ``POST /api/v1/estimate`` and the blind-spot views (gpu-h100: max size 4, one node
live, so 3 new nodes and 8 pods left, stopped by the max size); the what-if grid says what the
table says; the overview groups identical invisible pods, says their ages as people do and links
to the full list."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.dashboard.conftest import load_demo
from tests.dashboard.test_browser import ARTIFACTS, CHROMIUM, _post
from tests.dashboard.test_operator_browser import _browser
from tests.estimate.answers import unschedulable
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP = {"width": 1400, "height": 1000}
HUMAN_AGE = re.compile(
    r"([1-9]\d* d( [1-9]\d? h)?|[1-9]\d? h( [1-9]\d? min)?|[1-9]\d? min( [1-9]\d? s)?|\d\d? s)"
)
LIMIT = (
    "node limit reached: at most 3 new node(s) for node group gpu-h100 "
    "(node group gpu-h100's max size 4 with 1 node(s) now)"
)


@pytest.fixture
def demo_user(live_server, transactional_db):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    from usage import blindspot
    from usage.store import get_store

    load_demo()
    get_store().refresh(force=True)
    blindspot.forget()
    UserFactory(username="oncall", password="pw-oncall-1", is_staff=True)
    yield live_server
    blindspot.forget()


def _train_pod() -> dict:
    """One of the 32 pending pods as the cluster holds it (the what-if form takes it as JSON)."""
    from usage.models import PendingPod

    pod = PendingPod.objects.get(name="llm-train-7d9f8c6b5-08").pod
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def test_what_if_the_estimate_api_and_the_blind_spot_agree(demo_user):
    pod = _train_pod()
    api = _post(
        f"{demo_user.url}/api/v1/estimate",
        {"pods": [{"pod": pod, "count": 32}], "nodeGroups": ["gpu-a10", "gpu-h100", "gpu-l4"]},
    )
    chosen = next(o for o in api["options"] if o["nodeGroup"] == api["chosen"])
    assert (api["chosen"], chosen["nodeCount"], len(unschedulable(api, chosen))) == ("gpu-h100", 3, 8)
    assert set(unschedulable(api, chosen).values()) == {LIMIT}

    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/what-if/")
        page.fill("#id_pod", json.dumps(pod))
        page.fill("#id_count", "32")
        page.click("#what-if-form button[type=submit]")
        page.wait_for_selector("#estimate")
        row = page.locator("tr[data-group=gpu-h100]")
        assert row.locator(".node-count").inner_text() == "3"
        cells = row.locator("td")
        assert cells.nth(2).inner_text() == "24"
        assert cells.nth(3).inner_text() == f"8: {LIMIT}"
        # the grid's gpu-h100 template fits one pod, and says what the estimate made of the group
        grid_row = page.locator("#grid-table tr", has_text="template-node-for-gpu-h100")
        assert grid_row.locator(".estimate-note").inner_text() == (
            f"the estimate: 3 new node(s) for 24 pod(s), 8 pod(s) left: {LIMIT}"
        )
        page.screenshot(path=str(ARTIFACTS / "what_if_demo_32.png"), full_page=True)

        # the overview's blind-spot answer for the same 32 pods
        page.goto(f"{demo_user.url}/")
        estimate = page.inner_text("#invisible-pods tr[data-group=gpu-h100] td.estimate")
        assert estimate == f"3 new node(s) of gpu-h100 (8 pod(s) left pending: {LIMIT})"

        # and the REST list of the blind spot
        listed = page.request.get(f"{demo_user.url}/api/v1/blind-spot?limit=1").json()
        answer = listed["results"][0]["estimate"]
        assert (answer["node_group"], answer["new_nodes"], answer["pods_left"]) == ("gpu-h100", 3, 8)


def test_the_overview_groups_identical_invisible_pods(demo_user):
    with _browser(demo_user, DESKTOP) as page:
        page.goto(f"{demo_user.url}/")
        page.wait_for_selector("#invisible-groups")
        rows = page.locator("#invisible-groups tr.pod-group")
        assert rows.count() == 1  # 32 identical pods: one row, not 32
        row = rows.first
        assert row.locator(".pod-count").inner_text() == "32"
        assert "and 29 more" in row.inner_text()
        # ages as people say them ("3 h 5 min"), never a raw count of seconds ("11100 s")
        assert HUMAN_AGE.fullmatch(row.locator("td.age").inner_text().removeprefix("up to "))
        assert HUMAN_AGE.fullmatch(page.inner_text("#invisible-pods tr[data-group=gpu-h100] td.age"))
        page.screenshot(path=str(ARTIFACTS / "overview_blind_spot.png"), full_page=True)

        # the link to the full list: every pod, filterable
        page.click("#blind-spot-all a:has-text('All 32 pod(s) CA cannot see')")
        page.wait_for_selector("#invisible-list")
        assert page.locator("#invisible-list tr.pod-group .pod-count").inner_text() == "32"
        page.fill("#id_q", "-08")
        page.click("#blind-spot-filters button[type=submit]")
        page.wait_for_url("**q=-08**")
        assert page.locator("#invisible-list tr.pod-group .pod-count").inner_text() == "1"
        page.screenshot(path=str(ARTIFACTS / "blind_spot_list.png"), full_page=True)


def test_options_kept_without_judging_say_so_everywhere(demo_user):
    """The demo's expander call (2 pods x 30000 MiB, one option per group): gpu-h100 is judged and
    kept, gpu-l4 (no device profile) is kept without being judged. Neither the decisions list, the
    overview nor the decision page lists gpu-l4 among the fits: each says "kept, not judged"."""
    from decisions import recorder
    from simulations.grpcexpander.protos import expander_pb2 as pb
    from simulations.grpcexpander.service import best_options
    from simulations.management.commands.expander_example import example_request

    request, _offered = example_request()
    best_options(pb.BestOptionsRequest.FromString(request))
    recorder.flush(timeout=30)
    unjudged = "kept, not judged: gpu-l4: no-device-profile: "

    with _browser(demo_user, DESKTOP) as page:
        for path, table in (("/decisions/?caller=expander", "table.table"), ("/", "#recent-decisions")):
            page.goto(f"{demo_user.url}{path}")
            row = page.locator(f"{table} tr", has_text="llm-serving-5b7c-")
            cells = row.locator("td")
            texts = [cells.nth(i).inner_text() for i in range(cells.count())]
            assert any(t.startswith(unjudged) for t in texts), (path, texts)
            assert "gpu-h100" in texts[3] and "gpu-l4" not in texts[3], (path, texts)  # Fits
        row.locator("a.pod-link").click()
        page.wait_for_selector("#outcome")
        assert page.inner_text("#outcome") == "expander kept gpu-h100; kept, not judged: gpu-l4"
        grid_row = page.locator("#grid-table tr", has_text="gpu-l4")
        assert grid_row.locator(".badge").first.inner_text() == "kept, not judged"
        assert "kept, not judged: no-device-profile: " in grid_row.inner_text()
        page.screenshot(path=str(ARTIFACTS / "expander_unjudged.png"), full_page=True)

"""Charts that say something, from live usage, and an unhealthy card marked."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = [pytest.mark.django_db]


def _figure(html: str, plot_id: str) -> dict:
    match = re.search(rf'<script id="{plot_id}" type="application/json">(.*?)</script>', html, re.S)
    assert match, plot_id
    return json.loads(match.group(1))


def test_overview_shows_allocated_vs_free_per_group(client, staff, demo_data):
    client.force_login(staff)
    fig = _figure(client.get("/").content.decode(), "fig-group-usage")
    memory = {t["name"]: t for t in fig["data"] if t["xaxis"] == "x"}
    assert set(memory) == {"allocated", "free", "unhealthy (unusable)"}
    groups = memory["free"]["y"]
    assert groups == ["gpu-a10", "gpu-h100", "gpu-l4"]
    a10 = groups.index("gpu-a10")
    # two live A10G nodes, 4 cards of 23028 MiB each: allocated + free + unhealthy is what they
    # register, and ip-10-0-1-12's GPU 2 (health false) is never free
    sick = memory["unhealthy (unusable)"]["x"][a10]
    assert sick == 23028
    assert memory["allocated"]["x"][a10] + memory["free"]["x"][a10] + sick == 8 * 23028
    # one live H100 node whose 8 cards each hold an 80000 MiB pod (the blind-spot example)
    assert memory["free"]["x"][groups.index("gpu-h100")] == 8 * (81559 - 80000)
    assert memory["free"]["x"][groups.index("gpu-l4")] == 0  # cold: no node, no bar


def test_decisions_over_time_spans_the_last_day(client, staff, demo_data):
    client.force_login(staff)
    fig = _figure(client.get("/").content.decode(), "fig-over-time")
    start, end = fig["layout"]["xaxis"]["range"]
    assert start < end and start[:10] <= end[:10]
    assert all(t["width"] for t in fig["data"])  # an hour's bar, not the axis' whole width


def test_group_page_charts_live_usage_of_its_members(client, staff, demo_data):
    client.force_login(staff)
    html = client.get("/node-groups/gpu-a10/").content.decode()
    fig = _figure(html, "fig-live-usage")
    assert fig["layout"]["title"]["text"].startswith("Live members: allocated vs free")
    assert len(fig["data"][0]["x"]) == 8  # 2 members x 4 cards
    profile = _figure(html, "fig-capacity")
    assert "what one new node registers" in profile["layout"]["title"]["text"]


@pytest.mark.parametrize(
    ("node", "healthy", "unhealthy"),
    [("ip-10-0-1-11.ec2.internal", 4, 0), ("ip-10-0-1-12.ec2.internal", 3, 1)],
)
def test_node_page_marks_unhealthy_cards(client, staff, demo_data, node, healthy, unhealthy):
    client.force_login(staff)
    html = client.get(f"/nodes/{node}/").content.decode()
    cells = re.findall(r'<td class="health">(.*?)</td>', html, re.S)
    assert sum(">healthy<" in c for c in cells) == healthy
    assert sum(">unhealthy<" in c for c in cells) == unhealthy


@pytest.mark.parametrize(
    ("query", "hours", "meta"),
    [
        ("", 24, None),
        ("?range=1h&refresh=30s", 1, "30"),
        ("?range=7d&refresh=5m", 168, "300"),
        ("?range=bogus&refresh=1y", 24, None),  # unknown values fall back, never a 400 or 500
    ],
)
def test_overview_time_range_and_auto_refresh(client, staff, demo_data, query, hours, meta):
    from datetime import datetime

    client.force_login(staff)
    response = client.get(f"/{query}")
    assert response.status_code == 200
    html = response.content.decode()
    start, end = (
        datetime.fromisoformat(v) for v in _figure(html, "fig-over-time")["layout"]["xaxis"]["range"]
    )
    assert round((end - start).total_seconds() / 3600) == hours
    refresh = re.search(r'<meta http-equiv="refresh" content="(\d+)">', html)
    assert (refresh.group(1) if refresh else None) == meta

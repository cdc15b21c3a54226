"""Vendor node scores far outside 0..30 on the pod page, full registrations on the node-group page,
and the caller labels the decision pages show."""

from __future__ import annotations

import html as html_lib
import re

import orjson
import pytest

from decisions.models import Decision
from tests.factories.models import DecisionFactory

pytestmark = [pytest.mark.django_db]


def _device(index: int, verdict: str) -> dict:
    return {
        "uuid": f"SG-{index}",
        "index": index,
        "type": "MXC500",
        "devmem": 65536,
        "devcore": 100,
        "count": 16,
        "numa": 0,
        "health": True,
        "mode": "sgpu",
        "verdict": verdict,
        "reason": "",
        **({"usedmem": 65536, "usedcores": 100} if verdict == "chosen" else {}),
    }


def _sgpu_decision(score: float | None = None) -> Decision:
    """What MetaX sGPU's ScoreNode leaves in a record: +-10000 x topology next to plain HAMi scores
    (every node scored ``score`` when given)."""
    nodes = [
        {
            "name": "sgpu-a",
            "group": "sgpu",
            "source": "annotation",
            "fits": True,
            "unresolvable": False,
            "reason": "",
            "score": 20012.5,
            "devices": [_device(0, "chosen"), _device(1, "free")],
        },
        {
            "name": "sgpu-b",
            "group": "sgpu",
            "source": "annotation",
            "fits": True,
            "unresolvable": False,
            "reason": "",
            "score": -9990.25,
            "devices": [_device(0, "chosen")],
        },
        {
            "name": "plain",
            "group": "a10",
            "source": "annotation",
            "fits": True,
            "unresolvable": False,
            "reason": "",
            "score": 12.5,
            "devices": [_device(0, "chosen")],
        },
        {
            "name": "full",
            "group": "a10",
            "source": "annotation",
            "fits": False,
            "unresolvable": False,
            "reason": "CardInsufficientMemory",
            "score": 0.0,
            "devices": [_device(0, "rejected")],
        },
    ]
    for node in nodes if score is not None else ():
        node["score"] = score
    return DecisionFactory(
        digest="sgpu-scores",
        pod_uid="uid-sgpu",
        pod_name="sgpu-exclusive",
        caller="ui",
        verdict="fit",
        node_groups=["a10", "sgpu"],
        fit_groups=["a10", "sgpu"],
        node_count=4,
        fit_count=3,
        nodes=nodes,
        request=[{"Metax-SGPU": {"nums": 1, "memreq": 0, "mempercentage": 100, "coresreq": 100}}],
    )


def _row(html: str, node: str) -> str:
    return next(r for r in re.findall(r"<tr>.*?</tr>", html, re.S) if f"<td>{node} " in r)


def test_vendor_scores_show_readably_with_bars_inside_their_cell(client, staff):
    decision = _sgpu_decision()
    client.force_login(staff)
    response = client.get(decision.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    widths = {}
    for node, text in (("sgpu-a", "20,012.5"), ("sgpu-b", "-9,990.25"), ("plain", "12.5")):
        row = _row(html, node)
        assert text in row, row
        (width,) = re.findall(r'class="score-bar"[^>]*><span style="width: ?([0-9.]+)%', row)
        widths[node] = float(width)
    # the bar is the node's place between the lowest and highest fitting score: always 0..100 %
    assert widths == {"sgpu-a": 100.0, "sgpu-b": 0.0, "plain": pytest.approx(33.3, abs=0.1)}
    assert "score-bar" not in _row(html, "full")  # a node that does not fit has no score
    # the grid's colour scale stays the verdict scale; the score is in the hover text
    fig = orjson.loads(
        html_lib.unescape(re.search(r'id="fig-grid"[^>]*>(.*?)</script>', html, re.S).group(1))
    )
    (heatmap,) = fig["data"]
    assert (heatmap["zmin"], heatmap["zmax"]) == (-1, 4)  # 4: an unhealthy card
    assert all(z in (None, -1, 0, 1, 2, 3, 4) for row in heatmap["z"] for z in row)
    hover = orjson.dumps(heatmap["customdata"]).decode()
    assert "node score 20,012.5" in hover and "node score -9,990.25" in hover


def test_equal_scores_and_a_lone_node_fill_the_bar(client, staff):
    decision = _sgpu_decision(score=10000.0)
    client.force_login(staff)
    html = client.get(decision.get_absolute_url()).content.decode()
    assert re.findall(r'class="score-bar"[^>]*><span style="width: ?([0-9.]+)%', html) == ["100.0"] * 3


def test_ui_caller_is_labelled_ui(client, staff):
    decision = _sgpu_decision()
    assert decision.get_caller_display() == "UI"
    client.force_login(staff)
    html = client.get("/decisions/").content.decode()
    assert ">UI<" in html and ">Ui<" not in html
    assert re.search(r'<input type="checkbox" name="caller" value="ui"[^>]*>\s*UI</label>', html)


def test_node_group_page_shows_capacity_vendor_registrations(client, staff):
    from profiles.yamlio import dump_yaml, import_profiles

    import_profiles(
        dump_yaml(
            {
                "node_groups": [
                    {
                        "name": "mlu",
                        "match_labels": {"pool": "mlu"},
                        "profiles": [{"vendor": "MLU", "devices": [{"devmem": 24576, "quantity": 4}]}],
                    },
                    {
                        "name": "inf2",
                        "match_labels": {"pool": "inf2"},
                        "instance_type": "inf2.24xlarge",
                        "profiles": [
                            {"vendor": "AWSNeuron", "devices": [{"count": 2, "devcore": 3, "quantity": 4}]}
                        ],
                    },
                ]
            }
        )
    )
    client.force_login(staff)
    html = client.get("/node-groups/mlu/").content.decode()
    # Cambricon registers through status.capacity/allocatable only: 4 cards, 100 vcore each, 256 MiB units
    for text in (
        "cambricon.com/vmlu",
        "cambricon.com/mlu.smlu.vcore",
        "400",
        "cambricon.com/mlu.smlu.vmemory",
        "384",
    ):
        assert text in html, text
    assert "no registration annotation" in html
    html = client.get("/node-groups/inf2/").content.decode()
    for text in (
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "node.kubernetes.io/instance-type",
        "inf2.24xlarge",
    ):
        assert text in html, text

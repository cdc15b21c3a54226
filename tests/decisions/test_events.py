"""CA/scheduler event messages and CA's status ConfigMap become structure (raw text kept).

CA's pod events, as ``cluster-autoscaler/processors/status/eventing_scale_up_processor.go`` writes
them (tags cluster-autoscaler-1.32.1 and cluster-autoscaler-1.36.1): ``TriggeredScaleUp`` "pod
triggered scale-up: %v" of the ``ScaleUpInfo`` list (each ``{<group> <current>-><new> (max: <max>)}``,
``processors/nodegroupset/nodegroup_set_processor.go``) on every pod of the chosen option, and
``NotTriggerScaleUp`` "pod didn't trigger scale-up: " with ``ReasonsMessage``'s "<count> <reason>"
list, comma separated."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decisions.events import (
    parse_autoscaler_status,
    parse_event_message,
    parse_failed_scheduling,
    parse_not_trigger_scale_up,
    parse_triggered_scale_up,
)


def test_triggered_scale_up_groups_and_sizes():
    parsed = parse_triggered_scale_up(
        "pod triggered scale-up: [{gpu-a10 0->1 (max: 10)} {gpu-t4 2->4 (max: 5)}]"
    )
    assert parsed == {
        "scaleUps": [
            {"group": "gpu-a10", "from": 0, "to": 1, "max": 10},
            {"group": "gpu-t4", "from": 2, "to": 4, "max": 5},
        ]
    }


def test_not_trigger_scale_up_reasons_with_counts():
    message = (
        "pod didn't trigger scale-up: 1 max node group size reached, "
        "2 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {a: b, c: d}"
    )
    assert parse_not_trigger_scale_up(message) == {
        "note": "",
        "reasons": [
            {"count": 1, "reason": "max node group size reached"},
            {"count": 2, "reason": "node(s) didn't match Pod's node affinity/selector"},
            {"count": 1, "reason": "node(s) had untolerated taint {a: b, c: d}"},
        ],
    }
    newer = (
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 3 2/2 CardInsufficientMemory"
    )
    assert parse_not_trigger_scale_up(newer) == {
        "note": "it wouldn't fit if a new node is added",
        "reasons": [{"count": 3, "reason": "2/2 CardInsufficientMemory"}],
    }


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "0/5 nodes are available: 1 Insufficient cpu, 4 1/2 CardInsufficientMemory, 1/2 NumaNotFit. "
            "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
            {
                "available": 0,
                "total": 5,
                "reasons": [
                    {"count": 1, "reason": "Insufficient cpu"},
                    {"count": 4, "reason": "1/2 CardInsufficientMemory, 1/2 NumaNotFit"},
                ],
                "preemption": [{"count": 5, "reason": "No preemption victims found for incoming pod"}],
            },
        ),
        # HAMi's own scheduler, from the HAMi docs (scheduler-event-log design)
        (
            "0/1 nodes available: 1 node unregistered",
            {"available": 0, "total": 1, "reasons": [{"count": 1, "reason": "node unregistered"}]},
        ),
    ],
)
def test_failed_scheduling(message, expected):
    assert parse_failed_scheduling(message) == expected


def test_unknown_text_is_kept_unparsed():
    assert parse_event_message("TriggeredScaleUp", "something else") == ({"unparsed": True}, [])
    assert parse_event_message("Other", "x") == ({"unparsed": True}, [])
    assert parse_event_message("TriggeredScaleUp", "pod triggered scale-up: [{g 0->1 (max: 3)}]")[1] == ["g"]


def test_status_configmap_yaml_and_legacy_text():
    yaml_text = (
        "time: 2026-01-01 10:00:00.000000 +0000 UTC\nautoscalerStatus: Running\n"
        "nodeGroups:\n- name: gpu-a10\n  health:\n    status: Healthy\n    cloudProviderTarget: 0\n"
        "    minSize: 0\n    maxSize: 10\n  scaleUp:\n    status: InProgress\n"
    )
    parsed, error = parse_autoscaler_status(yaml_text)
    assert error == ""
    assert parsed["nodeGroups"][0]["name"] == "gpu-a10"
    assert parsed["nodeGroups"][0]["scaleUp"]["status"] == "InProgress"
    parsed, error = parse_autoscaler_status(
        "Cluster-autoscaler status at 2026-01-01 ...\nCluster-wide:\n  Health: Healthy"
    )
    assert parsed == {} and "not the YAML status format" in error or error.startswith("not YAML")


# -- properties: what CA formats, we parse back -------------------------------------------------------
_group = st.from_regex(r"[a-z][a-z0-9-]{0,20}(/[a-z0-9-]{1,8})?", fullmatch=True)
_reason = st.from_regex(r"[A-Za-z(][A-Za-z0-9 ()'/:{},.-]{0,40}[A-Za-z)}]", fullmatch=True).filter(
    lambda r: not any(part[:1].isdigit() for part in r.split(", ")[1:]) and ", " not in r[-2:]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_group, st.integers(0, 500), st.integers(1, 50), st.integers(1, 1000)),
        min_size=1,
        max_size=4,
    )
)
def test_triggered_scale_up_round_trip(ups):
    # CA: fmt.Sprintf("{%v %v->%v (max: %v)}", ...) joined by " " inside "[...]"
    text = (
        "pod triggered scale-up: [" + " ".join(f"{{{g} {c}->{c + d} (max: {m})}}" for g, c, d, m in ups) + "]"
    )
    parsed = parse_triggered_scale_up(text)
    assert parsed == {"scaleUps": [{"group": g, "from": c, "to": c + d, "max": m} for g, c, d, m in ups]}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), _reason), min_size=1, max_size=5))
def test_reason_counts_round_trip(reasons):
    text = ", ".join(f"{n} {r}" for n, r in reasons)
    parsed = parse_not_trigger_scale_up(f"pod didn't trigger scale-up: {text}")
    assert parsed["reasons"] == [{"count": n, "reason": r.rstrip(".")} for n, r in reasons]


def test_ca_1_36_reports_an_empty_expander_answer_on_the_pods():
    """CA 1.36 marks the pods of a loop whose expander chain left no option with
    ``ExpansionOptionsFilteredOutReason`` (``core/scaleup/orchestrator/rejectedreasons.go``), one count
    per node group that was an option (docs/cluster-autoscaler.md, "Empty means no scale-up")."""
    message = "pod didn't trigger scale-up: 2 expansion options filtered out and no longer considered"
    parsed, groups = parse_event_message("NotTriggerScaleUp", message)
    assert parsed["reasons"] == [
        {"count": 2, "reason": "expansion options filtered out and no longer considered"}
    ]
    assert groups == []

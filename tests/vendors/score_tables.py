"""HAMi's ``pkg/scheduler/score_test.go`` cases that read the same at v2.8.3, v2.9.0 and v2.10.0,
for the older releases' tables (``hami_v2_9/test_score.py``, ``hami_v2_8/test_score.py``).

The file is identical at v2.8.3 and v2.9.0. A case whose Go text (whitespace aside) is the same at
v2.9.0 and v2.10.0 is taken from the v2.10.0 module's data, renamed to its Go file, test and case,
and run under the older release's rules; the cases that differ are stated in each module.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from tests.vendors.hami_v2_10 import test_score as v2_10

__all__ = ["GO", "NV", "VENDORS", "calc_score_cases", "fit_in_certain_cases", "fit_in_devices_cases",
           "topology_cases", "check_calc_score", "check_fit_in_certain", "check_fit_in_devices",
           "check_topology"]  # fmt: skip

GO = "pkg/scheduler/score_test.go"
NV = v2_10.NV
VENDORS = v2_10.VENDORS

#: Test_calcScore cases the same at v2.9.0 and v2.10.0 (the two Kunlun ones are Kunlun's)
CALC_SCORE_SAME = (
    "one node one device one pod one container use one device.",
    "one node one device one pod one container use one device,but this device before having use.",
    "one node two device one pod one container use one device",
    "one node two device one pod one container use one device,but having use 50%",
    "one node two device one pod one container use two device",
    "one node two device one pod one container use two device,but this two device before having use.",
    "two node per node having one device one pod one container use one device",
    "two node per node having one device one pod one container use one device,one device having use 50%",
    "one node two device one pod two container use two device",
    "one node one device one pod two container, the second container use device",
    "one node one device one pod with three containers, middle container uses one device.",
    "one node two device one pod two containers use two device with spread,should not in same device.",
    "two node per node having one device one pod two container use one device",
)
#: Test_calcScore cases whose v2.9.0 text records the node as ``NodeUnfitPod`` in failedNodes (the
#: reason goes to the event), where v2.10.0 records the reason: the node fails either way
CALC_SCORE_UNFIT = (
    "one node one device one pod one container use one device and not enough resource,node should be failed.",
    "race condition test for failedNodes map with two nodes failing",
)
#: the v2.10.0 port's short id -> the Go case name
_GO_NAMES = {
    "exclusive card already in use": (
        "the container wants exclusive access to an entire card, but the card is already in use"
    ),
}


def _case(test: str, name: str) -> str:
    return f"{GO}::{test}/{_GO_NAMES.get(name, name)}"


def calc_score_cases() -> list:
    by_name = {c[0]: c[1:] for c in v2_10.CALC_SCORE}
    out = [pytest.param(*by_name[n], id=_case("Test_calcScore", n)) for n in CALC_SCORE_SAME]
    for name in CALC_SCORE_UNFIT:
        nodes, containers, init_count, want = by_name[name]
        unfit = {node: "" for node in want}  # "": fails, whatever the reason
        out.append(pytest.param(nodes, containers, init_count, unfit, id=_case("Test_calcScore", name)))
    return out


def _renamed(params: Iterable, test: str, leave_out: tuple[str, ...] = ()) -> list:
    out = []
    for param in params:
        name = param.id.split("/", 1)[1]
        if name not in leave_out:
            out.append(pytest.param(*param.values, id=_case(test, name)))
    return out


def fit_in_certain_cases() -> list:
    # "mode is mig": its device holds a MIG template slot (``mig_templates.py``, one geometry given)
    return _renamed(v2_10.FIT_IN_CERTAIN, "Test_fitInCertainDevice", ("mode is mig",))


def fit_in_devices_cases() -> list:
    return _renamed(v2_10.FIT_IN_DEVICES, "Test_fitInDevices")


def topology_cases() -> list:
    return _renamed(v2_10.TOPOLOGY, "Test_Nvidia_GPU_Topology")


def _copies(nodes: dict) -> dict:
    return {name: ([d.copy() for d in devices], policy) for name, (devices, policy) in nodes.items()}


def check_calc_score(h, nodes, containers, init_count, want) -> None:
    got = h.calc_score(VENDORS, _copies(nodes), containers, init_count=init_count)
    for node, expected in want.items():
        result = got[node]
        if isinstance(expected, str):
            assert not result.ok and expected in result.reason
        else:
            devices, score = expected
            assert result.ok, result.reason
            assert [
                [(d.uuid, d.usedmem, d.usedcores, d.idx) for d in c] for c in result.containers
            ] == devices
            assert result.score_before == score


def check_fit_in_certain(h, devices, req, annotations, ok, picked, reasons) -> None:
    out = h.fit(v2_10.nvidia, v2_10.node_resources([d.copy() for d in devices]), req, annotations)
    assert out.ok is ok
    assert [(d.uuid, d.usedmem, d.usedcores) for d in out.devices] == picked
    assert v2_10.reason_map(out.reason) == reasons


def check_fit_in_devices(h, devices, requests, reason) -> None:
    by_type = {req[1]: req for req in requests.values()}
    got, _ = h.fit_in_devices(VENDORS, [d.copy() for d in devices], by_type)
    assert got == reason


def check_topology(h, nums, scores, want) -> None:
    out = h.fit(v2_10.nvidia, v2_10.six(), (nums, NV, 1024, 100, 20), {v2_10.POLICY: "topology-aware"},
                pair_scores=scores)  # fmt: skip
    assert (out.ok, out.reason) == (True, "")
    assert [d.uuid for d in out.devices] == want

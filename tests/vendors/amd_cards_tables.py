"""HAMi's whole-card AMD backend tests (``pkg/device/amd/device_test.go``), the same at v2.8.3 and
v2.9.0 for what they test here: ``Test_GetNodeDevices``, ``Test_checkType`` (through Fit),
``Test_GenerateResourceRequests`` and ``TestDevices_Fit``. ``hami_v2_8/test_amd.py`` and
``hami_v2_9/test_amd.py`` run them under their release (v2.10.0 replaced the backend, #2290)."""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import AmdConfig, AmdVendor
from tests.vendors.harness import usage

__all__ = ["GO", "VENDOR", "AMDGPU", "card", "FIT_CASES", "CHECK_TYPE"]

GO = "pkg/device/amd/device_test.go"
VENDOR = AmdVendor(AmdConfig())
AMDGPU = "AMDGPU"


def card(id, *, used=0, count=2):
    """The Go tables' card: totalcore 3, no memory, healthy."""
    return usage(id, type=AMDGPU, used=used, count=count, totalcore=3)


def _fit(name):
    return f"{GO}::TestDevices_Fit/{name}"


# devices, request (nums, type), annotations, fits, chosen ids, reason
FIT_CASES = [
    pytest.param([card("dev-0"), card("dev-1", count=12)], (2, AMDGPU), {}, True, ["dev-1", "dev-0"], "",
                 id=_fit("fit success")),
    pytest.param([card("dev-0"), card("dev-1", count=12)], (1, AMDGPU), {}, True, ["dev-1"], "",
                 id=_fit("fit success for multiple cards")),
    pytest.param([card("dev-0")], (1, "OtherType"), {}, False, [], "1/1 CardTypeMismatch",
                 id=_fit("fit fail: type mismatch")),
    pytest.param([card("dev-1")], (1, AMDGPU), {"amd.com/use-gpu-uuid": "dev-0"}, False, [], "1/1 CardUuidMismatch",
                 id=_fit("fit fail: user assign use uuid mismatch")),
    pytest.param([card("dev-0")], (1, AMDGPU), {"amd.com/nouse-gpu-uuid": "dev-0"}, False, [],
                 "1/1 CardUuidMismatch", id=_fit("fit fail: user assign no use uuid match")),
    pytest.param([card("dev-0", used=2)], (1, AMDGPU), {}, False, [], "1/1 CardTimeSlicingExhausted",
                 id=_fit("fit fail: card overused")),
]  # fmt: skip

# Test_checkType: a request of the AMDGPU type passes the type check, another does not
CHECK_TYPE = [
    pytest.param(AMDGPU, True, id=f"{GO}::Test_checkType/the same type"),
    pytest.param("test111", False, id=f"{GO}::Test_checkType/the different type"),
]


def check_get_node_devices(h) -> None:
    """``Test_GetNodeDevices/get node device``: one card in capacity, named after the node."""
    node = h.node("test", capacity={"amd.com/gpu": "1"}, labels={"node.kubernetes.io/instance-type": "inf2"})
    [got] = h.node_devices(VENDOR, node)
    assert (got.index, got.id, got.count, got.devmem, got.devcore, got.type, got.numa, got.health) == (
        0, "test-AMDGPU-0", 1, 192000, 100, AMDGPU, 0, True,
    )  # fmt: skip


def check_generate_resource_requests(h) -> None:
    """``Test_GenerateResourceRequests/allocate amdgpu device``: a whole card of 192000 MiB."""
    want = (1, AMDGPU, 192000, 0, 0)
    assert h.request_of(VENDOR, {"amd.com/gpu": "1"}, {"amd.com/gpu": "1"}) == want


def check_fit(h, devices, req, annotations, fits, ids, reason) -> None:
    outcome = h.fit(VENDOR, devices, (req[0], req[1], 0, 0, 0), annotations)
    assert (outcome.ok, outcome.reason) == (fits, reason)
    if fits:
        assert [d.uuid for d in outcome.devices] == ids


def check_type(h, request_type, passes) -> None:
    outcome = h.fit(VENDOR, [card("d")], (1, request_type, 0, 0, 0))
    assert outcome.ok is passes

"""HAMi v2.10.0 ``pkg/device/mthreads/device_test.go``, re-expressed against the engine's Moore Threads
vendor.

Ported: ``Test_GetNodeDevices``, ``Test_checkType`` (through Fit: a request of another type is one
``CardTypeMismatch``), ``Test_GenerateResourceRequests``, ``Test_CustomFilterRule`` (through Fit with
the earlier containers' devices as ``allocated``), ``TestDevices_Fit``, ``TestDevices_AddResourceUsage``.

Not ported, because the engine does not simulate them: ``Test_MutateAdmission`` (the admission
webhook's checks and rewrites of the container), ``Test_PatchAnnotations`` (bind-time pod
annotations).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import MthreadsVendor
from tests.vendors.harness import EMPTY, add_usage, cdev, fit, node, node_devices, request_of, usage
from tests.vendors.sliced_fit import sliced_fit_cases

MTHREADS = "Mthreads"
VENDOR = MthreadsVendor()
COUNT, MEM, CORE = "mthreads.com/vgpu", "mthreads.com/sgpu-memory", "mthreads.com/sgpu-core"


@pytest.mark.parametrize(
    ("capacity", "want"),
    [
        pytest.param(
            {MEM: "1", CORE: "1"},
            [(0, "test-mthreads-0", 100, 8192, 16, MTHREADS, 0, True, MTHREADS)],
            id="Test_GetNodeDevices/get node device",
        ),
    ],
)
def test_get_node_devices(capacity, want):
    got = node_devices(VENDOR, node("test", capacity=capacity))
    assert [
        (d.index, d.id, d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.device_vendor) for d in got
    ] == (want)


@pytest.mark.parametrize(
    ("request_type", "fits"),
    [
        pytest.param(MTHREADS, True, id="Test_checkType/the same type"),
        pytest.param("test111", False, id="Test_checkType/the different type"),
    ],
)
def test_check_type(request_type, fits):
    dev = usage("dev-0", type=MTHREADS, count=100, totalmem=8192, totalcore=16)
    outcome = fit(VENDOR, [dev], (1, request_type, 0, 100, 0))
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardTypeMismatch")


ALL = {COUNT: "1", MEM: "1000", CORE: "1"}


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param(
            ALL,
            ALL,
            (1, MTHREADS, 512000, 0, 1),
            id="Test_GenerateResourceRequests/all resources set to limit and request",
        ),
        pytest.param(
            {},
            {MEM: "1000", CORE: "1"},
            EMPTY,
            id="Test_GenerateResourceRequests/all resources don't set to limit,count don't set to request",
        ),
        pytest.param(
            {},
            {COUNT: "1"},
            (1, MTHREADS, 0, 100, 0),
            id="Test_GenerateResourceRequests/all resources don't set to limit,cores and memory don't set to request",
        ),
        pytest.param(
            {COUNT: "0", MEM: "1000", CORE: "1"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests/count set to zero with memory and cores",
        ),
        pytest.param(
            {COUNT: "-1", MEM: "1000", CORE: "1"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests/count set to negative with memory and cores",
        ),
        pytest.param(
            {COUNT: "4294967296", MEM: "1000", CORE: "1"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests/count overflowing int32 with memory and cores",
        ),
        pytest.param(
            {COUNT: "1", MEM: "16Gi", CORE: "1"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests/memory overflowing int32 is rejected, not truncated to zero",
        ),
        pytest.param(
            {COUNT: "1", MEM: "16.0Gi", CORE: "1"},
            {},
            EMPTY,
            id="Test_GenerateResourceRequests/decimal-form memory request is rejected, not treated as zero",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(VENDOR, limits, requests) == want


@pytest.mark.parametrize(
    ("earlier", "fits"),
    [
        pytest.param("test123", True, id="Test_CustomFilterRule/allocate device"),
        pytest.param("test456", False, id="Test_CustomFilterRule/don't allocate device"),
    ],
)
def test_custom_filter_rule(earlier, fits):
    dev = usage("test123", type=MTHREADS, count=100, totalmem=8192, totalcore=16)
    outcome = fit(VENDOR, [dev], (1, MTHREADS, 0, 100, 0), allocated=[[cdev(earlier, MTHREADS)]])
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardNotFoundCustomFilterRule")


FIT_CASES = sliced_fit_cases(
    "TestDevices_Fit",
    MTHREADS,
    "mthreads.ai/use-gpuuuid",
    "mthreads.ai/nouse-gpuuuid",
)


@pytest.mark.parametrize(("devices", "request_", "annotations", "fits", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, request_, annotations, fits, length, ids, reason):
    outcome = fit(VENDOR, devices, request_, annotations)
    assert outcome.ok is fits
    assert len(outcome.devices) == length
    if fits:
        assert [d.uuid for d in outcome.devices] == ids
    assert outcome.reason == reason


@pytest.mark.parametrize(
    ("before", "chosen", "after"),
    [
        pytest.param(
            (0, 15, 2000),
            (50, 1024),
            (1, 65, 3024),
            id="TestDevices_AddResourceUsage/test add resource usage",
        )
    ],
)
def test_add_resource_usage(before, chosen, after):
    used, usedcores, usedmem = before
    dev = usage("dev-0", used=used, usedcores=usedcores, usedmem=usedmem)
    assert add_usage(VENDOR, dev, cdev("dev-0", usedcores=chosen[0], usedmem=chosen[1])) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == after

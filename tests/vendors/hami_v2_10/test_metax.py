"""HAMi v2.10.0 ``pkg/device/metax/device_test.go`` (MetaX whole GPUs), re-expressed against the
engine's ``MetaxGpuVendor``.

Ported: ``TestGetNodeDevices`` (the fields the Go test compares: index, id, devcore, devmem),
``TestParseMetaxAnnos`` (through ScoreNode: ``parseMetaxAnnos`` is internal; under binpack the score
is ``2000 - losses[n]`` for a pod of ``n`` GPUs), ``Test_checkType`` (through Fit),
``Test_GenerateResourceRequests``, ``Test_CustomFilterRule`` (through Fit with ``allocated``),
``Test_ScoreNode``, ``TestMetaxDevices_Fit``, ``TestMetaxDevices_AddResourceUsage``.

ScoreNode reads the node's ``gpu.topology.losses`` / ``.scores`` annotations; the engine reads them
when it registers the node's devices, so ``previous`` here is the node's registered devices (the Go
test passes the node and an empty ``previous``).

Not ported, because the engine does not simulate it: ``Test_MutateAdmission`` (admission webhook).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors import MetaxGpuVendor
from tests.vendors.harness import (
    EMPTY,
    add_usage,
    cdev,
    fit,
    node,
    node_devices,
    registered,
    request_of,
    score_node,
    usage,
)
from tests.vendors.sliced_fit import sliced_fit_cases

METAX = "Metax-GPU"
VENDOR = MetaxGpuVendor()
GPU = "metax-tech.com/gpu"
LOSSES, SCORES = "metax-tech.com/gpu.topology.losses", "metax-tech.com/gpu.topology.scores"


@pytest.mark.parametrize(
    ("capacity", "want"),
    [
        pytest.param(
            {GPU: "1"}, [(0, "test-metax-0", 100, 65536)], id="TestGetNodeDevices/Test with valid node"
        )
    ],
)
def test_get_node_devices(capacity, want):
    got = node_devices(VENDOR, node("test", capacity=capacity))
    assert [(d.index, d.id, d.devcore, d.devmem) for d in got] == want


ANNOS = '{"1":0,"2":110,"3":270,"4":540,"5":580,"6":730,"7":930,"8":1240}'


@pytest.mark.parametrize(
    ("index", "value"),
    [
        pytest.param(
            index, value, id=f"TestParseMetaxAnnos/{ANNOS}" + (f"#{index - 1:02d}" if index > 1 else "")
        )
        for index, value in [(1, 0), (2, 110), (3, 270), (4, 540), (5, 580), (6, 730), (7, 930), (8, 1240)]
    ],
)
def test_parse_metax_annos(index, value):
    previous = registered(VENDOR, node("test", annotations={LOSSES: ANNOS}, capacity={GPU: "8"}))
    chosen = [[cdev(f"test-metax-{i}", METAX, idx=i) for i in range(index)]]
    assert score_node(VENDOR, chosen, previous, "binpack") == 2000 - value


@pytest.mark.parametrize(
    ("request_type", "fits"),
    [
        pytest.param(METAX, True, id="Test_checkType/node type the same as device"),
        pytest.param("test", False, id="Test_checkType/node type the different from device"),
    ],
)
def test_check_type(request_type, fits):
    dev = usage("dev-0", type=METAX, count=1, totalmem=65536, totalcore=100)
    outcome = fit(VENDOR, [dev], (1, request_type, 0, 100, 100))
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardTypeMismatch")


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param(
            {GPU: "1"},
            {GPU: "1"},
            (1, METAX, 0, 100, 100),
            id="Test_GenerateResourceRequests/resource set to limit and request",
        ),
        pytest.param(
            {}, {}, EMPTY, id="Test_GenerateResourceRequests/resource don't set to limit and request"
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(VENDOR, limits, requests) == want


@pytest.mark.parametrize(
    ("device_id", "fits"),
    [
        pytest.param("test-0000", True, id="Test_CustomFilterRule/allocated id is same as device id"),
        pytest.param("test-1111", False, id="Test_CustomFilterRule/allocated id is different from device id"),
    ],
)
def test_custom_filter_rule(device_id, fits):
    earlier = [[cdev("test-0000", METAX, usedcores=1, usedmem=1000)]]
    dev = usage(device_id, type=METAX, count=100, totalmem=65536, totalcore=100)
    outcome = fit(VENDOR, [dev], (1, METAX, 0, 0, 0), allocated=earlier)
    assert outcome.ok is fits
    assert outcome.reason == ("" if fits else "1/1 CardNotFoundCustomFilterRule")


@pytest.mark.parametrize(
    ("annotations", "chosen", "policy", "want"),
    [
        pytest.param(
            {LOSSES: '{"1":100,"2":200}'}, 2, "binpack", 1800, id="Test_ScoreNode/policy is binpack"
        ),
        pytest.param({SCORES: '{"1":100,"2":200}'}, 1, "spread", 1900, id="Test_ScoreNode/policy is spread"),
    ],
)
def test_score_node(annotations, chosen, policy, want):
    previous = registered(VENDOR, node("test", annotations=annotations, capacity={GPU: "2"}))
    pod_devices = [[cdev(f"test-{i}", METAX, idx=i, usedmem=1000, usedcores=1) for i in range(chosen)]]
    assert score_node(VENDOR, pod_devices, previous, policy) == want


def _mutex_device():
    return [usage("dev-0", type=METAX, used=1, count=100, totalmem=128, totalcore=100)]


FIT_CASES = sliced_fit_cases(
    "TestMetaxDevices_Fit",
    METAX,
    "metax-tech.com/use-gpuuuid",
    "metax-tech.com/nouse-gpuuuid",
    names=[
        "fit success",
        "fit fail: memory not enough",
        "fit fail: core not enough",
        "fit fail: type mismatch",
        "fit fail: card overused",
        "fit success: but core limit can't exceed 100",
        "fit fail:  card exclusively",
        "fit fail:  CardComputeUnitsExhausted",
        "fit fail:  AllocatedCardsInsufficientRequest",
        "fit success:  memory percentage",
        "mutex policy rejects used device",
        "fit fail: CardNotHealth",
    ],
    overrides={"mutex policy rejects used device": _mutex_device},
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
            id="TestMetaxDevices_AddResourceUsage/test add resource usage",
        )
    ],
)
def test_add_resource_usage(before, chosen, after):
    used, usedcores, usedmem = before
    dev = usage("dev-0", used=used, usedcores=usedcores, usedmem=usedmem)
    assert add_usage(VENDOR, dev, cdev("dev-0", usedcores=chosen[0], usedmem=chosen[1])) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == after

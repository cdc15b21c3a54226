"""HAMi v2.10.0 ``pkg/device/awsneuron/device_test.go`` as data, run against ``AwsNeuronVendor``.

Not ported (internals the engine does not expose): ``Test_MutateAdmission`` (admission webhook),
``Test_PatchAnnotations`` (bind-time annotations). Private helpers are ported through the public
interface: ``Test_checkType`` and ``Test_countMaskAvailable`` through ``fit`` (a core mask with N bits
fits a request of N cores, not N+1), ``Test_graphSelect`` through ``fit`` with ``Nums`` = the asked
count on devices that pass every per-device check, ``Test_splitCoreRequest`` through
``container_request`` with ``cores_per_device`` as HAMi's ``coresPerAWSNeuron``.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.vendors.awsneuron import AwsNeuronConfig, AwsNeuronVendor
from tests.vendors.harness import EMPTY, fit, node, node_devices, request, request_of, usage

AWS = "AWSNeuron"
MAX32 = 2**31 - 1
POLICY = "hami.io/gpu-scheduler-policy"

vendor = AwsNeuronVendor(AwsNeuronConfig("aws.amazon.com/neuron", "aws.amazon.com/neuroncore", 2))


def neuron(id, index, used, count, totalcore, usedcores, node_type, health=True):
    """``makeAWSDeviceUsage``."""
    return usage(
        id,
        index=index,
        used=used,
        count=count,
        totalcore=totalcore,
        usedcores=usedcores,
        type=AWS,
        health=health,
        custom_info={"AWSNodeType": node_type},
    )


def sixteen(node_type, used=None, health=True):
    """``makeDeviceUsages``: 16 devices, the node type on the first only (given a split count and a
    2-core mask so each passes Fit's per-device checks)."""
    used = used or {}
    return [
        usage(
            f"d{i}",
            index=i,
            count=2,
            totalcore=3,
            used=used.get(i, 0),
            type=AWS,
            health=health,
            custom_info={"AWSNodeType": node_type} if i == 0 else None,
        )
        for i in range(16)
    ]


def test_get_node_devices():
    """Test_GetNodeDevices/get node device: 1 neuron, 2 cores, instance type inf2."""
    n = node(
        "test",
        capacity={"aws.amazon.com/neuron": 1, "aws.amazon.com/neuroncore": 2},
        labels={"node.kubernetes.io/instance-type": "inf2"},
    )
    [got] = node_devices(vendor, n)
    assert (got.index, got.id, got.count, got.devmem, got.devcore, got.type, got.numa, got.health) == (
        0,
        "test-AWSNeuron-0",
        2,
        0,
        3,
        AWS,
        0,
        True,
    )
    assert (got.custom_info, got.device_vendor) == ({"AWSNodeType": "inf2"}, AWS)


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param(
            {"aws.amazon.com/neuron": "1"},
            {"aws.amazon.com/neuron": "1"},
            (1, AWS, 0, 0, 2),
            id="Test_GenerateResourceRequests/allocate neuron device",
        ),
        pytest.param(
            {},
            {"aws.amazon.com/neuron": MAX32 + 1},
            None,
            id="Test_GenerateResourceRequests/reject request-only neuron number that overflows device count",
        ),
        pytest.param(
            {"aws.amazon.com/neuroncore": "1"},
            {"aws.amazon.com/neuroncore": "1"},
            (1, AWS, 0, 0, 1),
            id="Test_GenerateResourceRequests/allocate neuron core",
        ),
        pytest.param(
            {"aws.amazon.com/neuroncore": "3"},
            {"aws.amazon.com/neuroncore": "3"},
            None,
            id="Test_GenerateResourceRequests/reject odd neuron core request when admission is bypassed",
        ),
        pytest.param(
            {},
            {"aws.amazon.com/neuroncore": "3"},
            None,
            id="Test_GenerateResourceRequests/reject request-only odd neuron core request",
        ),
        pytest.param(
            {"aws.amazon.com/neuroncore": "0"},
            {},
            None,
            id="Test_GenerateResourceRequests/reject zero neuron core request when admission is bypassed",
        ),
        pytest.param(
            {"aws.amazon.com/neuroncore": "-2"},
            {},
            None,
            id="Test_GenerateResourceRequests/reject negative neuron core request when admission is bypassed",
        ),
        pytest.param(
            {"aws.amazon.com/neuroncore": MAX32 * 2 + 2},
            {},
            None,
            id="Test_GenerateResourceRequests/reject neuron core request that overflows device count",
        ),
    ],
)
def test_generate_resource_requests(limits, requests, want):
    assert request_of(vendor, limits, requests) == (want or EMPTY)


@pytest.mark.parametrize(
    ("per_device", "cores", "want"),
    [
        pytest.param(2, 1, (1, 1), id="Test_splitCoreRequest/single core takes one device"),
        pytest.param(2, 2, (1, 2), id="Test_splitCoreRequest/a full device is one device"),
        pytest.param(2, 6, (3, 2), id="Test_splitCoreRequest/whole devices divide evenly"),
        pytest.param(
            2,
            3,
            None,
            id="Test_splitCoreRequest/odd count above one has no representable shape",
        ),
        pytest.param(
            4, 4, (2, 2), id="Test_splitCoreRequest/per-device cores above the addressable limit are bounded"
        ),
        pytest.param(
            0,
            4,
            (2, 2),
            id="Test_splitCoreRequest/unknown per-device cores falls back to the addressable limit",
        ),
        pytest.param(
            1,
            MAX32 + 1,
            None,
            id="Test_splitCoreRequest/device count stays within int32",
        ),
    ],
)
def test_split_core_request(per_device, cores, want):
    split = AwsNeuronVendor(AwsNeuronConfig("aws.amazon.com/neuron", "aws.amazon.com/neuroncore", per_device))
    got = request_of(split, {"aws.amazon.com/neuroncore": cores})
    assert got == (EMPTY if want is None else (want[0], AWS, 0, 0, want[1]))


@pytest.mark.parametrize(
    ("mask", "bits"),
    [
        pytest.param(3, 2, id="Test_countMaskAvailable/test 3"),
        pytest.param(2, 1, id="Test_countMaskAvailable/test 2"),
        pytest.param(1, 1, id="Test_countMaskAvailable/test 1"),
        pytest.param(0, 0, id="Test_countMaskAvailable/test 0"),
    ],
)
def test_count_mask_available(mask, bits):
    def fits(cores):
        return fit(vendor, [neuron("d", 0, 0, 2, mask, 0, "trn")], request(AWS, 1, 0, 0, cores)).ok

    assert fits(bits) and not fits(bits + 1)


GRAPH_SELECT = [
    pytest.param(sixteen("inf2"), 16, list(range(16)), id="Test_graphSelect/full allocate"),
    pytest.param(sixteen("trn", {7: 1, 13: 1}), 8, [], id="Test_graphSelect/8 allocate fail"),
    pytest.param(sixteen("trn", {7: 1}), 8, list(range(8, 16)), id="Test_graphSelect/8 allocate success"),
    pytest.param(sixteen("inf", {5: 1, 14: 1}), 8, list(range(6, 14)), id="Test_graphSelect/8 allocate"),
]


@pytest.mark.parametrize(("devices", "count", "want"), GRAPH_SELECT)
def test_graph_select(devices, count, want):
    out = fit(vendor, devices, request(AWS, count, 0, 0, 2))
    assert [d.idx for d in out.devices] == want
    assert out.ok is bool(want)


FIT_CASES = [
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 0, "trn"), neuron("dev-1", 0, 0, 12, 3, 0, "trn")],
        request(AWS, 1, 0, 0, 2),
        {},
        True,
        1,
        ["dev-1"],
        "",
        id="TestDevices_Fit/fit success",
    ),
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 0, "trn")],
        request(AWS, 2, 0, 0, 2),
        {},
        False,
        0,
        [],
        "1/1 NumaNotFit",
        id="TestDevices_Fit/fit fail: memory not enough",
    ),
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 1, "trn")],
        request(AWS, 1, 0, 0, 2),
        {},
        False,
        0,
        [],
        "1/1 CardInsufficientCore",
        id="TestDevices_Fit/fit fail: core not enough",
    ),
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 0, "trn")],
        request("OtherType", 1, 0, 0, 2),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="TestDevices_Fit/fit fail: type mismatch",
    ),
    pytest.param(
        [neuron("dev-1", 0, 0, 2, 3, 0, "trn")],
        request(AWS, 1, 0, 0, 2),
        {"aws.amazon.com/use-neuron-uuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign use uuid mismatch",
    ),
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 0, "trn")],
        request(AWS, 1, 0, 0, 2),
        {"aws.amazon.com/nouse-neuron-uuid": "dev-0"},
        False,
        0,
        [],
        "1/1 CardUuidMismatch",
        id="TestDevices_Fit/fit fail: user assign no use uuid match",
    ),
    pytest.param(
        [neuron("dev-0", 0, 2, 2, 3, 0, "trn")],
        request(AWS, 1, 0, 0, 2),
        {},
        False,
        0,
        [],
        "1/1 CardTimeSlicingExhausted",
        id="TestDevices_Fit/fit fail: card overused",
    ),
    pytest.param(
        [neuron("dev-0", 0, 1, 2, 3, 0, "trn")],
        request(AWS, 1, 0, 0, 2),
        {POLICY: "mutex"},
        False,
        0,
        [],
        "1/1 ExclusiveDeviceAllocateConflict",
        id="TestDevices_Fit/mutex policy rejects used device",
    ),
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 0, "trn"), neuron("dev-1", 1, 0, 2, 3, 0, "trn")],
        request(AWS, 2, 0, 0, 2),
        {},
        False,
        0,
        [],
        "1/2 NumaNotFit",
        id="TestDevices_Fit/fit fail: NumaNotFit with multiple devices",
    ),
    pytest.param(
        [neuron("dev-0", 0, 0, 2, 3, 0, "trn", health=False)],
        request(AWS, 1, 0, 0, 2),
        {},
        False,
        0,
        [],
        "1/1 CardNotHealth",
        id="TestDevices_Fit/fit fail: CardNotHealth",
    ),
    pytest.param(
        [neuron("d", 0, 0, 2, 3, 0, "trn")],
        request(AWS, 1, 0, 0, 1),
        {},
        True,
        1,
        ["d"],
        "",
        id="Test_checkType/the same type",
    ),
    pytest.param(
        [neuron("d", 0, 0, 2, 3, 0, "trn")],
        request("test111", 1, 0, 0, 1),
        {},
        False,
        0,
        [],
        "1/1 CardTypeMismatch",
        id="Test_checkType/the different type",
    ),
]


@pytest.mark.parametrize(("devices", "req", "annotations", "ok", "length", "ids", "reason"), FIT_CASES)
def test_fit(devices, req, annotations, ok, length, ids, reason):
    out = fit(vendor, devices, req, annotations)
    assert (out.ok, out.reason) == (ok, reason)
    assert len(out.devices) == length
    if ok:
        assert [d.uuid for d in out.devices] == ids

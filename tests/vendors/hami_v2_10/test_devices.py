"""HAMi v2.10.0 ``pkg/device/devices_test.go`` (the cases about vendor rules) as data.

The codecs are ``annotations.decode_legacy`` (``DecodeNodeDevices``, read by Hygon and Iluvatar) and
``annotations.decode_device_json`` (``UnMarshalNodeDevices``); ``Resourcereqs`` is
``requests.parse_pod``. These are engine functions, called directly (they are not vendor methods).

Ported elsewhere: ``TestCheckUUID`` and ``TestCheckType`` (the shared selection helpers, chosen by
release) in ``tests/vendors/test_selection_lists.py``, with v2.9.0's and v2.8.3's cases of the same
checks; ``initContainer_test.go`` and the pod-allocation codecs (``Test_DecodePodDevices``,
``TestPodDevicesCoding``...) in ``tests/engine/test_allocations.py``. Not ported (internals the
engine does not expose): ``TestEmptyContainerDevicesCoding``, ``TestEmptyPodDeviceCoding``,
``TestPodDevicesCoding``, ``TestEncodeContainerDeviceType``, ``TestGetDevicesUUIDList`` (bind-time
pod annotations), ``TestMarshalNodeDevices``, ``TestMigProfileUsesCompactWireFormat``,
``Test_EncodeNodeDevices`` (the device plugin writes registrations; hami-sim only reads them),
``TestExtractMigTemplatesFromUUID``, ``TestPlatternMIG`` (v2.9 MIG templates), ``Test_CheckHealth``
(the live handshake; the simulation never reads it), ``TestDeviceUsageDeepCopy``,
``TestMigInUseDeepCopy`` (Go copy helpers).
"""

from __future__ import annotations

import pytest

from hami_sim.engine.annotations import AnnotationError, decode_device_json, decode_legacy
from hami_sim.engine.requests import parse_pod
from hami_sim.engine.vendors.nvidia import NvidiaVendor


def _fields(devices):
    return [(d.index, d.id, d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.mode) for d in devices]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(
            '[{"index":1,"id":"id-1","count":1,"devmem":1024,"devcore":10,"type":"type","health":true}]\n',
            [(1, "id-1", 1, 1024, 10, "type", 0, True, "")],
            id="TestUnMarshalNodeDevices/test one",
        ),
        pytest.param(
            '[{"index":1,"id":"id-1","count":1,"devmem":1024,"devcore":10,"type":"type","health":true},'
            '{"index":2,"id":"id-2","count":2,"devmem":4096,"devcore":20,"type":"type2","health":false}]',
            [(1, "id-1", 1, 1024, 10, "type", 0, True, ""), (2, "id-2", 2, 4096, 20, "type2", 0, False, "")],
            id="TestUnMarshalNodeDevices/test two",
        ),
    ],
)
def test_unmarshal_node_devices(raw, want):
    assert _fields(decode_device_json(raw)) == want


P4 = "GPU-ebe7c3f7-303d-558d-435e-99a160631fe4"
P4_DEVICE = (0, P4, 10, 7680, 100, "NVIDIA-Tesla P4", 0, True, "hami-core")


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(
            "", "node annotation missing device separator", id="Test_DecodeNodeDevices/args is empty"
        ),
        pytest.param(":", [], id="Test_DecodeNodeDevices/args is only delimiter"),
        pytest.param("::", [], id="Test_DecodeNodeDevices/args is multiple delimiters"),
        pytest.param(",", "node annotation missing device separator", id="Test_DecodeNodeDevices/comma only"),
        pytest.param(
            ",:", "unexpected field count 2 in node annotation", id="Test_DecodeNodeDevices/empty fields"
        ),
        pytest.param(
            "a", "node annotation missing device separator", id="Test_DecodeNodeDevices/missing split symbol"
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true:", [P4_DEVICE], id="Test_DecodeNodeDevices/old format"
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true,1,hami-core:",
            [(1, *P4_DEVICE[1:])],
            id="Test_DecodeNodeDevices/str is new format",
        ),
        pytest.param(
            "garbage:",
            'malformed node annotation segment: "garbage"',
            id="Test_DecodeNodeDevices/malformed segment",
        ),
        pytest.param(
            f"{P4},notanint,7680,100,NVIDIA-Tesla P4,0,true:",
            'invalid count field: strconv.ParseInt: parsing "notanint": invalid syntax',
            id="Test_DecodeNodeDevices/invalid count field",
        ),
        pytest.param(
            f"{P4},10,notanint,100,NVIDIA-Tesla P4,0,true:",
            'invalid memory field: strconv.ParseInt: parsing "notanint": invalid syntax',
            id="Test_DecodeNodeDevices/invalid memory field",
        ),
        pytest.param(
            f"{P4},10,7680,notanint,NVIDIA-Tesla P4,0,true:",
            'invalid core field: strconv.ParseInt: parsing "notanint": invalid syntax',
            id="Test_DecodeNodeDevices/invalid core field",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,notanint,true:",
            'invalid numa field: strconv.Atoi: parsing "notanint": invalid syntax',
            id="Test_DecodeNodeDevices/invalid numa field",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,notabool:",
            'invalid health field: strconv.ParseBool: parsing "notabool": invalid syntax',
            id="Test_DecodeNodeDevices/invalid health field",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4:",
            "unexpected field count 5 in node annotation",
            id="Test_DecodeNodeDevices/unexpected field count",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true,notanint,hami-core:",
            'invalid index field: strconv.Atoi: parsing "notanint": invalid syntax',
            id="Test_DecodeNodeDevices/invalid index field in new format",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true,-1,hami-core:",
            "index field must not be negative: -1",
            id="Test_DecodeNodeDevices/negative index field in new format",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true:", [P4_DEVICE], id="TestDecodeNodeDevicesLegacyFormat"
        ),
        # TestEncodeDecodeNodeDevicesRoundtrip: EncodeNodeDevices writes the 9-field form
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true,0,hami-core:",
            [P4_DEVICE],
            id="TestEncodeDecodeNodeDevicesRoundtrip/single device, index 0",
        ),
        pytest.param(
            f"{P4},10,7680,100,NVIDIA-Tesla P4,0,true,1,hami-core:",
            [(1, *P4_DEVICE[1:])],
            id="TestEncodeDecodeNodeDevicesRoundtrip/single device, index 1",
        ),
        pytest.param(
            "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,0,hami-core:"
            "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,1,hami-core:",
            [
                (
                    0,
                    "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec",
                    10,
                    32768,
                    100,
                    "NVIDIA-Tesla V100-PCIE-32GB",
                    0,
                    True,
                    "hami-core",
                ),
                (
                    1,
                    "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448",
                    10,
                    32768,
                    100,
                    "NVIDIA-Tesla V100-PCIE-32GB",
                    0,
                    True,
                    "hami-core",
                ),
            ],
            id="TestEncodeDecodeNodeDevicesRoundtrip/multiple devices",
        ),
    ],
)
def test_decode_node_devices(raw, want):
    if isinstance(want, str):
        with pytest.raises(AnnotationError) as err:
            decode_legacy(raw)
        assert str(err.value) == want
    else:
        assert _fields(decode_legacy(raw)) == want


def _pod(init: list[dict], containers: list[dict]) -> dict:
    def ctr(name, limits):
        return {"name": name, "resources": {"limits": limits}}

    spec: dict = {"containers": [ctr(f"c{i}", lim) for i, lim in enumerate(containers)]}
    if init:
        spec["initContainers"] = [ctr(f"i{i}", lim) for i, lim in enumerate(init)]
    return {"metadata": {"name": "test-pod", "namespace": "default"}, "spec": spec}


GPU = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1000", "nvidia.com/gpucores": "10"}
TWO = {"nvidia.com/gpu": "2"}


@pytest.mark.parametrize(
    ("init", "containers", "want"),
    [
        pytest.param([], [GPU], [(1, 1000, 10)], id="TestResourcereqs_OnlyRegularContainers"),
        pytest.param(
            [{}, GPU], [GPU], [None, (1, 1000, 10), (1, 1000, 10)], id="TestResourcereqs_WithInitContainers"
        ),
        pytest.param([], [], [], id="TestResourcereqs_EmptyPod"),
        pytest.param([{}], [{}], [None, None], id="TestResourcereqs_NoDeviceRequests"),
        pytest.param(
            [TWO, {}],
            [TWO, TWO],
            [(2, 0, 0), None, (2, 0, 0), (2, 0, 0)],
            id="TestResourcereqs_MultipleInitAndRegularContainers",
        ),
    ],
)
def test_resourcereqs(init, containers, want):
    """``Resourcereqs``: one request map per container, init containers first (Go's test uses a
    mock vendor answering a fixed request; here NVIDIA parses the container's own resources)."""
    view = parse_pod(_pod(init, containers), [NvidiaVendor()])
    got = [
        (c["NVIDIA"].nums, c["NVIDIA"].memreq, c["NVIDIA"].coresreq) if "NVIDIA" in c else None
        for c in view.requests.containers
    ]
    assert got == want
    assert view.requests.init_count == len(init)

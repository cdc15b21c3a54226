"""Template nodes from realistic registrations: what each vendor reads off a node."""

from __future__ import annotations

import pytest

from hami_sim.engine.model import InventoryError
from tests.extender.test_vendors import AMD_MI300X, ASCEND_910B4, CASES, HYGON_MOCK, KUNLUN_VXPU
from tests.vendors.helpers import BY_WORD, VENDORS, node, simulator


def devices_of(word: str, template: dict) -> list[tuple]:
    annotations = template["metadata"]["annotations"]
    found, _ = BY_WORD[word].node_devices(annotations, template)
    return [
        (d.id, d.index, d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.device_vendor)
        for d in found
    ]


def test_amd_mi300x_from_the_hami_website():
    template = node("mi300x", annotations={"hami.io/node-amd-register": AMD_MI300X})
    assert devices_of("AMD", template) == [
        ("8eff74b5-0000-1000-801b-b56457addd1b", 0, 10, 196288, 304, "AMD Instinct MI300X VF", 0, True, "AMD")
    ]


def test_ascend_910b4_from_the_mock_device_plugin():
    template = node("npu", annotations={"hami.io/node-register-Ascend910B4": ASCEND_910B4})
    assert devices_of("Ascend910B4", template) == [
        ("MOCK-0", 0, 4, 32768, 20, "Ascend910B4", 0, True, "Ascend910B4"),
        ("MOCK-1", 1, 4, 32768, 20, "Ascend910B4", 0, True, "Ascend910B4"),
    ]
    assert devices_of("Ascend910B3", template) == []  # another chip's key


def test_hygon_and_kunlun_from_the_mock_device_plugin():
    dcu = node("dcu", annotations={"hami.io/node-dcu-register": HYGON_MOCK})
    assert devices_of("DCU", dcu) == [
        ("DCU-MOCK-0", 0, 2, 16384, 100, "Z100L", 0, True, "DCU"),
        ("DCU-MOCK-1", 1, 2, 16384, 100, "Z100L", 1, True, "DCU"),
    ]
    xpu = node("xpu", annotations={"hami.io/node-register-xpu": KUNLUN_VXPU})
    assert devices_of("XPU", xpu) == [("XPU-MOCK-0", 0, 4, 98304, 100, "XPU", 0, True, "XPU")]


def test_capacity_vendors_synthesise_devices_from_the_node():
    mlu = node(
        "mlu", capacity={"cambricon.com/mlu.smlu.vcore": "200", "cambricon.com/mlu.smlu.vmemory": "184"}
    )
    assert devices_of("MLU", mlu) == [
        ("mlu-cambricon-mlu-0", 0, 100, 23552, 100, "MLU", 0, True, "MLU"),
        ("mlu-cambricon-mlu-1", 1, 100, 23552, 100, "MLU", 0, True, "MLU"),
    ]
    mt = node("mt", capacity={"mthreads.com/sgpu-core": "16", "mthreads.com/sgpu-memory": "96"})
    assert devices_of("Mthreads", mt) == [
        ("mt-mthreads-0", 0, 100, 49152, 16, "Mthreads", 0, True, "Mthreads")
    ]
    kl = node("kl", capacity={"kunlunxin.com/xpu": "4"})
    assert [(d[0], d[6]) for d in devices_of("kunlun", kl)] == [
        ("kl-kunlun-0", 0),
        ("kl-kunlun-1", 0),
        ("kl-kunlun-2", 1),
        ("kl-kunlun-3", 1),
    ]
    aws = CASES["awsneuron"][0]
    found, _ = BY_WORD["AWSNeuron"].node_devices({}, aws)
    assert (len(found), found[0].count, found[0].devcore, found[0].custom_info) == (
        16,
        2,
        3,
        {"AWSNodeType": "trn1.32xlarge"},
    )


def test_enflame_drs_capacity_annotation():
    template = CASES["enflame-drs"][0]
    (dev,) = BY_WORD["Enflame"].node_devices(template["metadata"]["annotations"], template)[0]
    assert (dev.id, dev.count, dev.devmem, dev.devcore) == ("tmpl-drs-enflame-drs-0", 6, 40960, 100)
    assert dev.custom_info["maxSlice"] == 6


@pytest.mark.parametrize(
    ("word", "key", "value", "detail"),
    [
        ("Ascend910B4", "hami.io/node-register-Ascend910B4", "[]", "no device found on node"),
        (
            "XPU",
            "hami.io/node-register-xpu",
            '{"id":1}',
            "json: cannot unmarshal object into Go value of type []*device.DeviceInfo",
        ),
        ("DCU", "hami.io/node-dcu-register", "nothing", "node annotation missing device separator"),
        ("Metax-SGPU", "metax-tech.com/node-gpu-devices", "[]", "no sdevice found on node"),
        (
            "Enflame",
            "enflame.com/gcu-drs-capacity",
            '{"devices":[{"index":"0","capacity":6}],"profiles":{}}',
            "no valid drs profiles found on node n",
        ),
    ],
)
def test_unusable_registrations_raise_precise_errors(word, key, value, detail):
    with pytest.raises(InventoryError) as err:
        BY_WORD[word].node_devices({key: value}, node("n", annotations={key: value}))
    assert str(err.value) == f"malformed {key}: {detail}"


def test_vendors_without_their_registration_find_nothing():
    """Skipping a vendor whose sources a node lacks is only safe if it would find nothing anyway."""
    bare = node("bare")
    for vendor in VENDORS:
        assert vendor.node_devices({}, bare) == ([], {})


def test_simulator_reads_exactly_the_registered_vendors():
    sim = simulator()
    mixed = node(
        "mixed",
        annotations={
            "hami.io/node-amd-register": AMD_MI300X,
            "hami.io/node-register-Ascend910B4": ASCEND_910B4,
        },
        capacity={"kunlunxin.com/xpu": "2"},
    )
    picked = [v.common_word for v in sim.kinds.plan(mixed["metadata"]["annotations"], mixed).vendors]
    assert picked == ["NVIDIA", "kunlun", "AMD", "Ascend910B4"]
    inventory = sim.annotation_inventory(mixed)
    assert sorted({d.device_vendor for d in inventory.devices}) == ["AMD", "Ascend910B4", "kunlun"]


@pytest.mark.parametrize(
    ("capacity", "source"),
    [
        ({"kunlunxin.com/xpu": "8e9"}, "status.capacity[kunlunxin.com/xpu]"),
        ({"cambricon.com/mlu.smlu.vcore": "1G"}, "status.capacity[cambricon.com/mlu.smlu.vcore]"),
        (
            {"aws.amazon.com/neuron": "1", "aws.amazon.com/neuroncore": "1000"},
            "status.capacity[aws.amazon.com/neuroncore]",
        ),
    ],
)
def test_absurd_capacities_are_refused_not_allocated(capacity, source):
    inventory = simulator().annotation_inventory(node("huge", capacity=capacity))
    assert inventory.error.startswith(f"malformed {source}: ")

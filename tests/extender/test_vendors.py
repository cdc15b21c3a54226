"""Every vendor end to end over HTTP: ``POST /filter-simulation`` with template nodes built from
realistic registrations (HAMi docs and mock-device-plugin values), one fit and one failure each,
plus nodes and pods that mix vendors."""

from __future__ import annotations

import orjson
import pytest

from tests.vendors.helpers import FIXTURES, body, json_register, limits, node, pod

pytestmark = [pytest.mark.api, pytest.mark.engine, pytest.mark.django_db]  # engine: a vendor conformance test


def doc_json(filename: str, start: str) -> str:
    """The JSON block of a HAMi doc fixture that starts with ``start`` (e.g. ``[``)."""
    text = (FIXTURES / filename).read_text()
    block = text.split("```json", 1)[1].split("```", 1)[0]
    assert block.strip().startswith(start)
    return orjson.dumps(orjson.loads(block)).decode()


def mock_annotation(key: str) -> str:
    """A ``kubectl annotate node <node> 'key=value'`` value from the mock-device-plugin README."""
    text = (FIXTURES / "mixed-mockdp-readme-vendor-node-annotations.txt").read_text()
    line = next(line for line in text.splitlines() if line.strip().startswith(f"'{key}="))
    return line.strip().split("=", 1)[1].rstrip("'")


AMD_MI300X = doc_json("amd-website-docs-mi300x-node-annotation.txt", "[")
ASCEND_910B4 = mock_annotation("hami.io/node-register-Ascend910B4")
KUNLUN_VXPU = mock_annotation("hami.io/node-register-xpu")
HYGON_MOCK = mock_annotation("hami.io/node-dcu-register")
HYGON_K100 = "DCU-TPXS320016070601,4,65536,100,DCU-K100_AI,0,true,0,hami-core:DCU-TPXS320010040501,4,65536,100,DCU-K100_AI,1,true,1,hami-core:"
METAX_SGPU = orjson.dumps(
    [
        {
            "uuid": f"GPU-36beae85-c835-6b14-6ab2-02671837a59{i}",
            "model": "MXC500",
            "totalDevCount": 16,
            "totalCompute": 100,
            "totalVRam": 65536,
            "numa": 0,
            "healthy": True,
        }
        for i in range(2)
    ]
).decode()
DRS = '{"devices":[{"index":"0","minor":"0","capacity":6}],"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}}'


CASES = {
    "ascend": (
        node("tmpl-ascend", annotations={"hami.io/node-register-Ascend910B4": ASCEND_910B4}),
        pod(limits(**{"huawei.com/Ascend910B4": 1, "huawei.com/Ascend910B4-memory": 2000})),
        pod(limits(**{"huawei.com/Ascend910B4": 3})),
        "NodeInsufficientDevice",
    ),
    "hygon": (
        node("tmpl-dcu", annotations={"hami.io/node-dcu-register": HYGON_K100}),
        pod(limits(**{"hygon.com/dcunum": 1, "hygon.com/dcumem": 2000, "hygon.com/dcucores": 60})),
        pod(limits(**{"hygon.com/dcunum": 1, "hygon.com/dcumem": 70000})),
        "2/2 CardInsufficientMemory",
    ),
    "cambricon": (
        node(
            "tmpl-mlu",
            capacity={"cambricon.com/mlu.smlu.vcore": "400", "cambricon.com/mlu.smlu.vmemory": "368"},
        ),
        pod(
            limits(
                **{
                    "cambricon.com/vmlu": 1,
                    "cambricon.com/mlu.smlu.vmemory": 20,
                    "cambricon.com/mlu.smlu.vcore": 10,
                }
            )
        ),
        pod(limits(**{"cambricon.com/vmlu": 1, "cambricon.com/mlu.smlu.vmemory": 100})),
        "4/4 CardInsufficientMemory",
    ),
    "iluvatar": (
        node(
            "tmpl-ilu",
            annotations={"hami.io/node-BI-V150-register": "IL-0,4,32768,100,BI-V150,0,true,0,hami-core:"},
        ),
        pod(
            limits(
                **{
                    "iluvatar.ai/BI-V150-vgpu": 1,
                    "iluvatar.ai/BI-V150.vMem": 64,
                    "iluvatar.ai/BI-V150.vCore": 50,
                }
            )
        ),
        pod(
            limits(
                **{
                    "iluvatar.ai/BI-V150-vgpu": 1,
                    "iluvatar.ai/BI-V150.vCore": 150,
                    "iluvatar.ai/BI-V150.vMem": 1,
                }
            ),
            limits(**{"iluvatar.ai/BI-V150-vgpu": 1, "iluvatar.ai/BI-V150.vMem": 1}),
        ),
        "1/1 CardComputeUnitsExhausted",
    ),
    "metax-gpu": (
        node("tmpl-metax", capacity={"metax-tech.com/gpu": "2"}),
        pod(limits(**{"metax-tech.com/gpu": 1})),
        pod(
            limits(**{"metax-tech.com/gpu": 1}),
            limits(**{"metax-tech.com/gpu": 1}),
            limits(**{"metax-tech.com/gpu": 1}),
        ),
        # the second container: its predecessor's GPU is taken, the other one is not that GPU
        # (MetaX customFilterRule "needs all devices on a device")
        "1/2 CardNotFoundCustomFilterRule, 1/2 CardTimeSlicingExhausted",
    ),
    "metax-sgpu": (
        node("tmpl-sgpu", annotations={"metax-tech.com/node-gpu-devices": METAX_SGPU}),
        pod(limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vcore": 60, "metax-tech.com/vmemory": 4})),
        pod(limits(**{"metax-tech.com/sgpu": 1, "metax-tech.com/vmemory": 128})),
        "2/2 CardInsufficientMemory",
    ),
    "enflame-gcu": (
        node("tmpl-gcu", capacity={"enflame.com/gcu": "2"}),
        pod(limits(**{"enflame.com/gcu": 2})),
        pod(limits(**{"enflame.com/gcu": 1}), limits(**{"enflame.com/gcu": 2})),
        "1/2 AllocatedCardsInsufficientRequest, 1/2 ExclusiveDeviceAllocateConflict",
    ),
    "enflame-drs": (
        node("tmpl-drs", annotations={"enflame.com/gcu-drs-capacity": DRS}),
        pod(limits(**{"enflame.com/gcu-memory": 20480, "enflame.com/gcu-core": 40})),
        pod(limits(**{"enflame.com/drs-gcu": 2})),
        "1/1 ModeNotFit",
    ),
    "kunlun": (
        node("tmpl-kunlun", capacity={"kunlunxin.com/xpu": "8"}),
        pod(limits(**{"kunlunxin.com/xpu": 4})),
        pod(limits(**{"kunlunxin.com/xpu": 3})),
        "1/8 NumaNotFit",  # v2.10 counts over the node's cards
    ),
    "kunlun-vxpu": (
        node("tmpl-vxpu", annotations={"hami.io/node-register-xpu": KUNLUN_VXPU}),
        pod(limits(**{"kunlunxin.com/vxpu": 1, "kunlunxin.com/vxpu-memory": 24576})),
        pod(
            limits(**{"kunlunxin.com/vxpu": 1, "kunlunxin.com/vxpu-memory": 24576}),
            limits(**{"kunlunxin.com/vxpu": 1, "kunlunxin.com/vxpu-memory": 49152}),
        ),
        "1/1 NumaNotFit",
    ),
    "awsneuron": (
        node(
            "tmpl-trn1",
            capacity={"aws.amazon.com/neuron": "16", "aws.amazon.com/neuroncore": "32"},
            labels={"node.kubernetes.io/instance-type": "trn1.32xlarge"},
        ),
        pod(limits(**{"aws.amazon.com/neuroncore": 1})),
        pod(limits(**{"aws.amazon.com/neuron": 3})),
        "1/16 NumaNotFit",  # v2.10: over the node's Neuron devices
    ),
    "mthreads": (
        node("tmpl-mt", capacity={"mthreads.com/sgpu-core": "32", "mthreads.com/sgpu-memory": "192"}),
        pod(limits(**{"mthreads.com/vgpu": 1, "mthreads.com/sgpu-memory": 32, "mthreads.com/sgpu-core": 8})),
        pod(limits(**{"mthreads.com/vgpu": 1, "mthreads.com/sgpu-memory": 97})),  # 49664 > 49152 MiB
        "2/2 CardInsufficientMemory",
    ),
    "amd": (
        node("tmpl-mi300x", annotations={"hami.io/node-amd-register": AMD_MI300X}),
        pod(limits(**{"amd.com/gpu": 1, "amd.com/gpumem": 16384, "amd.com/gpucores": 25})),
        pod(limits(**{"amd.com/gpu": 1, "amd.com/gpumem": 200000})),
        "1/1 CardInsufficientMemory",
    ),
    "vastai": (
        node(
            "tmpl-va",
            annotations={
                "hami.io/node-va-register": json_register(
                    [{"id": "VA-0", "count": 1, "devmem": 16384, "type": "Vastai-VA1", "health": True}]
                )
            },
        ),
        pod(limits(**{"vastaitech.com/va": 1})),
        pod(limits(**{"vastaitech.com/va": 1}), limits(**{"vastaitech.com/va": 1})),
        "1/1 CardTimeSlicingExhausted",
    ),
    "biren": (
        node(
            "tmpl-br",
            annotations={
                "hami.io/node-biren-register": json_register(
                    [{"id": "BR-0", "count": 2, "devmem": 65536, "type": "Biren-BR104", "health": True}]
                )
            },
        ),
        pod(limits(**{"birentech.com/gpu": 1})),
        pod(limits(**{"birentech.com/gpu": 1}), annotations={"birentech.com/use-gpuuuid": "BR-9"}),
        "1/1 CardUuidMismatch",
    ),
}


def filter_(client, pod_obj, nodes):
    response = client.post("/filter-simulation", body(pod_obj, nodes), content_type="application/json")
    assert response.status_code == 200, response.content
    return orjson.loads(response.content)


@pytest.mark.parametrize("vendor", sorted(CASES))
def test_vendor_fits_and_fails_with_hamis_reason(client, vendor):
    template, fits, fails, reason = CASES[vendor]
    name = template["metadata"]["name"]
    answer = filter_(client, fits, [template])
    assert answer["Error"] == ""
    assert answer["FailedNodes"] == {} and answer["FailedAndUnresolvableNodes"] == {}
    assert answer["Nodes"]["items"] == [template]  # echoed unchanged
    answer = filter_(client, fails, [template])
    assert answer["Nodes"] is None
    assert answer["FailedNodes"] == {name: reason}


def test_mixed_node_serves_each_vendor_from_its_own_devices(client):
    """One node registering NVIDIA, Ascend and Hygon: each request is matched to its vendor."""
    mixed = node(
        "tmpl-mixed",
        annotations={
            "hami.io/node-nvidia-register": json_register(
                [
                    {
                        "id": "GPU-0",
                        "count": 10,
                        "devmem": 23028,
                        "devcore": 100,
                        "type": "NVIDIA A10",
                        "mode": "hami-core",
                        "health": True,
                    }
                ]
            ),
            "hami.io/node-register-Ascend910B4": ASCEND_910B4,
            "hami.io/node-dcu-register": HYGON_K100,
        },
    )
    multi = pod(
        limits(**{"nvidia.com/gpu": 1, "nvidia.com/gpumem": 4000}),
        limits(**{"huawei.com/Ascend910B4": 2, "huawei.com/Ascend910B4-memory": 32768}),
        limits(**{"hygon.com/dcunum": 1, "hygon.com/dcumem": 1000}),
    )
    assert filter_(client, multi, [mixed])["Nodes"]["items"] == [mixed]
    # the NVIDIA request fails on NVIDIA's one card although 4 other devices are on the node
    too_many = pod(limits(**{"nvidia.com/gpu": 2}), limits(**{"huawei.com/Ascend910B4": 1}))
    assert filter_(client, too_many, [mixed])["FailedNodes"] == {"tmpl-mixed": "NodeInsufficientDevice"}
    # reasons are per vendor: the Hygon container's own Fit explains the failure
    dcu_fail = pod(
        limits(**{"huawei.com/Ascend910B4": 1}), limits(**{"hygon.com/dcunum": 1, "hygon.com/dcumem": 99999})
    )
    assert filter_(client, dcu_fail, [mixed])["FailedNodes"] == {"tmpl-mixed": "2/2 CardInsufficientMemory"}


def test_vendor_nodes_are_filtered_by_vendor(client):
    """An Ascend pod fits the Ascend template only; the NVIDIA and capacity nodes fail."""
    ascend = CASES["ascend"][0]
    nvidia = node(
        "tmpl-a10",
        annotations={
            "hami.io/node-nvidia-register": json_register(
                [
                    {
                        "id": "GPU-0",
                        "count": 10,
                        "devmem": 23028,
                        "devcore": 100,
                        "type": "NVIDIA A10",
                        "health": True,
                    }
                ]
            )
        },
    )
    metax = CASES["metax-gpu"][0]
    answer = filter_(client, CASES["ascend"][1], [nvidia, ascend, metax])
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["tmpl-ascend"]
    assert answer["FailedNodes"] == {
        "tmpl-a10": "NodeInsufficientDevice",
        "tmpl-metax": "NodeInsufficientDevice",
    }


def test_capacity_templates_with_the_same_shape_keep_their_own_device_ids(client):
    """Capacity vendors name devices after the node: two identical templates must not share them."""
    from hami_sim.runtime.simulator import get_simulator

    a = node("tmpl-kl-a", capacity={"kunlunxin.com/xpu": "8"})
    b = node("tmpl-kl-b", capacity={"kunlunxin.com/xpu": "8"})
    sim = get_simulator()
    ctx = sim.pod_context(CASES["kunlun"][1])
    verdicts = sim.filter_nodes(ctx, [a, b])
    assert [v.fit.containers[0][0].uuid for v in verdicts] == ["tmpl-kl-a-kunlun-0", "tmpl-kl-b-kunlun-0"]


def test_registration_errors_are_explained_and_unresolvable(client):
    answer = filter_(
        client,
        CASES["amd"][1],
        [
            node("bad-amd", annotations={"hami.io/node-amd-register": "[]"}),
            node("bad-drs", annotations={"enflame.com/gcu-drs-capacity": "{not json"}),
            node("bad-dcu", annotations={"hami.io/node-dcu-register": "DCU-0,4,x,100,DCU,0,true:"}),
        ],
    )
    unresolvable = answer["FailedAndUnresolvableNodes"]
    assert unresolvable["bad-amd"] == "malformed hami.io/node-amd-register: no gpu found on node"
    assert unresolvable["bad-drs"].startswith("malformed enflame.com/gcu-drs-capacity: invalid JSON")
    assert unresolvable["bad-dcu"] == (
        'malformed hami.io/node-dcu-register: invalid memory field: strconv.ParseInt: parsing "x": invalid syntax'
    )


def test_hygon_mock_readme_type_is_not_a_dcu_type(client):
    """The mock plugin's Hygon type ``Z100L`` lacks ``DCU``: HAMi's type filter hands the DCU Fit no card."""
    mock = node("tmpl-dcu-mock", annotations={"hami.io/node-dcu-register": HYGON_MOCK})
    answer = filter_(client, CASES["hygon"][1], [mock])
    assert answer["FailedNodes"] == {"tmpl-dcu-mock": "NodeInsufficientDevice"}


def test_legacy_cambricon_annotation_alone_does_not_register(client):
    """HAMi's protocol doc shows ``hami.io/node-mlu-register``; v2.10 reads MLU capacity instead."""
    text = (FIXTURES / "nvidia-cambricon-hami-docs-protocol-node-annotation.txt").read_text()
    value = next(line for line in text.splitlines() if line.startswith("hami.io/node-mlu-register:")).split(
        ": ", 1
    )[1]
    answer = filter_(
        client,
        CASES["cambricon"][1],
        [node("tmpl-old-mlu", annotations={"hami.io/node-mlu-register": value})],
    )
    assert answer["FailedAndUnresolvableNodes"] == {"tmpl-old-mlu": "node unregistered"}


def test_init_container_of_one_vendor_and_app_of_another(client):
    """Init containers are fitted on their own copy of the node, vendor by vendor, like app containers."""
    mixed = node(
        "tmpl-mixed-init",
        annotations={"hami.io/node-amd-register": AMD_MI300X},
        capacity={"kunlunxin.com/xpu": "8"},
    )
    warm_up = pod(
        limits(**{"kunlunxin.com/xpu": 4}),
        init=[limits(**{"amd.com/gpu": 1, "amd.com/gpumem": 196288})],
    )
    assert filter_(client, warm_up, [mixed])["Nodes"]["items"] == [mixed]
    too_big = pod(
        limits(**{"kunlunxin.com/xpu": 1}), init=[limits(**{"amd.com/gpu": 1, "amd.com/gpumem": 196289})]
    )
    assert filter_(client, too_big, [mixed])["FailedNodes"] == {
        "tmpl-mixed-init": "1/1 CardInsufficientMemory"
    }


@pytest.mark.parametrize("vendor", ["ascend", "kunlun", "amd", "enflame-drs", "awsneuron"])
def test_prioritize_scores_vendor_nodes(client, vendor):
    template, fits, _fails, _reason = CASES[vendor]
    response = client.post("/prioritize-simulation", body(fits, [template]), content_type="application/json")
    assert response.status_code == 200
    (entry,) = orjson.loads(response.content)
    assert entry["Host"] == template["metadata"]["name"]
    assert 0 <= entry["Score"] <= 10

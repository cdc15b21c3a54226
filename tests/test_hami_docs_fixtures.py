"""Real registration values quoted in HAMi's docs (copied to ``tests/fixtures/hami_docs/``).

- JSON values parse into the devices they describe.
- Pre-2.8 (colon/comma) values on the NVIDIA key are reported as that legacy format; the legacy
  decoder itself still reads the complete ones, and the values cut short in the source fail it.
- The pod allocations the docs show are what the engine chooses for the same node and pod.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml

from hami_sim.engine.annotations import AnnotationError, decode_device_json, decode_legacy, encode_device_json
from hami_sim.engine.model import InventoryError
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors.nvidia import NvidiaVendor
from tests.factories import node, pod

FIXTURES = Path(__file__).parent / "fixtures" / "hami_docs"
REG = "hami.io/node-nvidia-register"
LEGACY = f"malformed {REG}: pre-2.8 colon-separated format; HAMi 2.8+ reads JSON"


def annotations(name: str) -> dict[str, str]:
    """``key: value`` lines of a fixture file (comment lines start with ``#``)."""
    out = {}
    for line in (FIXTURES / name).read_text().splitlines():
        if line.startswith("hami.io/"):
            key, _, value = line.partition(": ")
            out[key] = value
    return out


def body(name: str) -> str:
    return "\n".join(line for line in (FIXTURES / name).read_text().splitlines() if not line.startswith("#"))


def nvidia_devices(annos):
    return NvidiaVendor().node_devices(annos, {"metadata": {"annotations": annos}})


def allocation(value: str) -> list[list[tuple[str, str, int, int]]]:
    """``hami.io/vgpu-devices-*``: ``UUID,Type,mem,cores:`` per device, ``;`` after each container."""
    containers = []
    for part in value.split(";")[:-1]:
        devices = []
        for dev in filter(None, part.split(":")):
            uuid, typ, mem, cores = dev.split(",")
            devices.append((uuid, typ, int(mem), int(cores)))
        containers.append(devices)
    return containers


def simulator(gpu_policy="spread"):
    return Simulator(EngineConfig(gpu_policy=gpu_policy, vendors=(NvidiaVendor(),)))


# -- JSON values ------------------------------------------------------------------------------------


def test_mock_device_plugin_a100_json():
    devices, scores = nvidia_devices(annotations("mockdp-a100-json.txt"))
    [d] = devices
    assert (
        d.id,
        d.index,
        d.count,
        d.devmem,
        d.devcore,
        d.type,
        d.numa,
        d.mode,
        d.health,
        d.device_vendor,
    ) == ("GPU-MOCK-0", 0, 10, 81920, 100, "NVIDIA-A100-SXM4-80GB", 0, "hami-core", True, "NVIDIA")
    assert scores == {}


def test_mock_a100_template_fits_the_readme_request():
    sim = simulator()
    n = node("a100", annotations=annotations("mockdp-a100-json.txt"))
    [fits] = sim.filter_nodes(sim.pod_context(pod(gpumem=40960, gpucores=50)), [n])
    [too_big] = sim.filter_nodes(sim.pod_context(pod(gpumem=81921)), [n])
    assert fits.fits and [d.uuid for d in fits.fit.containers[0]] == ["GPU-MOCK-0"]
    assert too_big.reason == "1/1 CardInsufficientMemory"


def test_amd_mi300x_json_decodes_with_vendor_and_custom_info():
    [d] = decode_device_json(body("amd-mi300x-json.txt"))
    assert (d.id, d.count, d.devmem, d.devcore, d.type, d.health, d.device_vendor) == (
        "8eff74b5-0000-1000-801b-b56457addd1b",
        10,
        196288,
        304,
        "AMD Instinct MI300X VF",
        True,
        "amd",
    )
    assert d.custom_info == {"pciBDF": "0000:83:00.0"}


def test_hygon_mock_value_is_the_9_field_legacy_format():
    devices = decode_legacy(annotations("mockdp-a100-json.txt")["hami.io/node-dcu-register"])
    assert [
        (d.id, d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.index, d.mode) for d in devices
    ] == [
        ("DCU-MOCK-0", 2, 16384, 100, "Z100L", 0, True, 0, "hami-core"),
        ("DCU-MOCK-1", 2, 16384, 100, "Z100L", 1, True, 1, "hami-core"),
    ]


# -- pre-2.8 NVIDIA values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture", ["protocol-v100-legacy.txt", "blog-3090-legacy.txt", "faq-l40s-legacy-truncated.txt"]
)
def test_pre_28_nvidia_values_are_reported_as_legacy(fixture):
    with pytest.raises(InventoryError) as info:
        nvidia_devices({REG: annotations(fixture)[REG]})
    assert str(info.value) == LEGACY


def test_pre_28_node_is_unresolvable_with_the_legacy_reason():
    sim = simulator()
    n = node("old-plugin", annotations=annotations("protocol-v100-legacy.txt"))
    [verdict] = sim.filter_nodes(sim.pod_context(pod(gpumem=3000)), [n])
    assert verdict.unresolvable and verdict.reason == LEGACY


def test_protocol_doc_v100_value_describes_two_v100s():
    devices = decode_legacy(annotations("protocol-v100-legacy.txt")[REG])
    assert [(d.id[:12], d.count, d.devmem, d.devcore, d.type, d.numa, d.health, d.mode) for d in devices] == [
        ("GPU-00552014", 10, 32768, 100, "NVIDIA-Tesla V100-PCIE-32GB", 0, True, "hami-core"),
        ("GPU-0fc3eda5", 10, 32768, 100, "NVIDIA-Tesla V100-PCIE-32GB", 0, True, "hami-core"),
    ]


def test_blog_3090_value_carries_memory_and_core_scaling():
    [d] = decode_legacy(annotations("blog-3090-legacy.txt")[REG])
    assert (d.id, d.count, d.devmem, d.devcore, d.type, d.health) == (
        "GPU-7aebc545-cbd3-18a0-afce-76cae449702a",
        10,
        73728,
        300,
        "NVIDIA-NVIDIA GeForce RTX 3090",
        True,
    )


def test_values_cut_short_in_the_source_do_not_decode():
    # FAQ L40S: the second device stops after devcore ('...'); protocol doc MLU: second device cut after numa
    with pytest.raises(AnnotationError) as info:
        decode_legacy(annotations("faq-l40s-legacy-truncated.txt")[REG])
    assert str(info.value) == "unexpected field count 5 in node annotation"
    with pytest.raises(AnnotationError) as info:
        decode_legacy(annotations("protocol-v100-legacy.txt")["hami.io/node-mlu-register"])
    assert str(info.value) == "unexpected field count 5 in node annotation"


# -- the docs' allocations, re-registered as v2.8+ JSON -------------------------------------------------


def as_json_node(name, fixture):
    devices = decode_legacy(annotations(fixture)[REG])
    return node(name, annotations={REG: encode_device_json(devices)})


def test_protocol_doc_two_container_allocation_under_binpack():
    """protocol.md: containers of 3000 and 5000 MiB both land on GPU-0fc3... (binpack GPU policy)."""
    expected = allocation(annotations("protocol-v100-legacy.txt")["hami.io/vgpu-devices-to-allocate"])
    p = pod(
        containers=[
            {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3000"}}},
            {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "5000"}}},
        ],
        annotations={"hami.io/gpu-scheduler-policy": "binpack"},
    )
    sim = simulator()
    [verdict] = sim.filter_nodes(
        sim.pod_context(p), [as_json_node("node67-4v100", "protocol-v100-legacy.txt")]
    )
    got = [[(d.uuid, d.type, d.usedmem, d.usedcores) for d in c] for c in verdict.fit.containers]
    assert got == expected


def test_blog_3090_allocation():
    expected = allocation(annotations("blog-3090-legacy.txt")["hami.io/vgpu-devices-allocated"])
    sim = simulator()
    [verdict] = sim.filter_nodes(
        sim.pod_context(pod(gpumem=20000, gpucores=80)), [as_json_node("node1", "blog-3090-legacy.txt")]
    )
    got = [[(d.uuid, d.type, d.usedmem, d.usedcores) for d in c] for c in verdict.fit.containers]
    assert got == expected


def test_event_log_pod_request_and_unregistered_node():
    """scheduler-event-log.md: the pending pod's request, and '1 node unregistered' on a bare node."""
    text = body("event-log-pending-pod.txt")
    pending = yaml.safe_load(text)
    log = next(
        line
        for line in (FIXTURES / "event-log-pending-pod.txt").read_text().splitlines()
        if line.startswith("# log:")
    )
    logged = orjson.loads(log.split("counts=", 1)[1])[0]["NVIDIA"]
    sim = simulator()
    ctx = sim.pod_context(pending)
    [[request]] = [list(c.values()) for c in ctx.pod.requests.containers]
    # Memreq, MemPercentagereq (101 = unset) and Coresreq as logged; the doc's Nums 2 is illustrative
    assert (request.type, request.memreq, request.mem_percentage_req, request.coresreq) == (
        logged["Type"],
        logged["Memreq"],
        logged["MemPercentagereq"],
        logged["Coresreq"],
    )
    assert request.nums == 1
    [verdict] = sim.filter_nodes(ctx, [node("gpu-node")])
    assert verdict.unresolvable and verdict.reason == "node unregistered"

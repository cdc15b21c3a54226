"""A registration that is a remembered template's but for its UUIDs keeps its devices as the template
and the UUIDs (``registration_templates.RebuiltDevices``): it must read exactly as the devices decoded alone."""

from __future__ import annotations

import copy

import orjson
import pytest

from hami_sim.engine.annotations import decode_device_json
from hami_sim.engine.registration_templates import RebuiltDevices, known_registration, new_templates, using
from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors.amd import AMD_REGISTER
from hami_sim.engine.vendors.kunlun import XPU_REGISTER
from hami_sim.engine.vendors.nvidia import NVIDIA_REGISTER
from hami_sim.engine.vendors.reads import NodeReads


def _entries(prefix: str, n: int, vendor_type: str) -> list[dict]:
    return [
        {"id": f"{prefix}-{k}", "index": k, "count": 10, "devmem": 65536, "devcore": 100,
         "type": vendor_type, "numa": k // 2, "mode": "hami-core", "health": k != 1}
        for k in range(n)
    ]  # fmt: skip


def _node(name: str, key: str, entries: list[dict], **more: str) -> dict:
    return {"metadata": {"name": name, "annotations": {key: orjson.dumps(entries).decode(), **more}}}


#: (annotation, vendor word, card type, other annotations, rebuilt): every ``json_devices`` backend,
#: and what keeps a registration from being rebuilt
CASES = [
    (NVIDIA_REGISTER, "NVIDIA", "NVIDIA A100-SXM4-80GB", {}, True),
    (AMD_REGISTER, "AMD", "AMD MI300X", {}, True),
    (XPU_REGISTER, "XPU", "P800", {}, True),
    # pair scores name UUIDs: decoded as before
    (NVIDIA_REGISTER, "NVIDIA", "NVIDIA A100-SXM4-80GB", {"hami.io/node-nvidia-score": "[]"}, False),
    # a device cordon names UUIDs: decoded as before
    (NVIDIA_REGISTER, "NVIDIA", "NVIDIA A100-SXM4-80GB", {"hami.io/device-cordon": "b-0"}, False),
    # a second backend's registration on the node: its devices are the node's too
    (NVIDIA_REGISTER, "NVIDIA", "NVIDIA A100-SXM4-80GB", {AMD_REGISTER: '[{"id":"m-0","count":1}]'}, False),
]


@pytest.mark.parametrize(("key", "word", "card", "more", "rebuilt"), CASES)
def test_a_registration_like_a_template_reads_as_decoded_alone(key, word, card, more, rebuilt):
    sim = Simulator(EngineConfig(cache_bytes=1 << 26))  # (a 64th of it holds templates)
    sim.annotation_inventory(_node("a", key, _entries("a", 4, card), **more))  # the template
    second = _node("b", key, _entries("b", 4, card), **more)
    inventory = sim.annotation_inventory(second)
    assert (type(inventory.devices) is RebuiltDevices) is rebuilt
    alone = Simulator(EngineConfig(cache_bytes=0)).annotation_inventory(copy.deepcopy(second))
    assert type(alone.devices) is tuple  # decoded: no template known
    read = ("devices", "pair_scores", "cordoned", "source", "error")  # (``key`` is an identity)
    assert [getattr(inventory, f) for f in read] == [getattr(alone, f) for f in read]
    assert sum(d.device_vendor == word for d in inventory.devices) == 4


def test_rebuilt_devices_behave_as_the_tuple_they_build():
    value = orjson.dumps(_entries("t", 3, "NVIDIA A10")).decode()
    other = value.replace('"t-', '"u-')
    with using(new_templates(1 << 20)):
        decode_device_json(value, "NVIDIA")  # remembered as a template
        rebuilt = known_registration(other, "NVIDIA")
    assert rebuilt is not None
    built = tuple(decode_device_json(other, "NVIDIA"))  # (no memo in force: decoded)
    assert len(rebuilt) == 3 and rebuilt.ids == ("u-0", "u-1", "u-2")
    assert rebuilt == built and tuple(rebuilt) == built
    assert rebuilt[0] == built[0] and rebuilt[-1] == built[-1] and rebuilt[1:] == built[1:]
    assert list(reversed(rebuilt)) == list(reversed(built))
    assert built[2] in rebuilt and rebuilt.index(built[1]) == 1
    with pytest.raises(IndexError):
        rebuilt[3]
    assert rebuilt[0] is not rebuilt[0]  # built when read: no reader can change another's device


def test_an_empty_or_unknown_registration_is_not_rebuilt():
    with using(new_templates(1 << 20)):
        decode_device_json("[]", "NVIDIA")
        assert known_registration("[]", "NVIDIA") is None  # no device: the vendor says what is wrong
        assert known_registration('[{"id":"x"}]', "NVIDIA") is None  # never seen


def test_only_an_annotation_reading_backend_may_declare_json_devices():
    with pytest.raises(ValueError, match="json_devices"):
        NodeReads(registers=("a",), capacity=("vendor.com/gpu",), json_devices=True)
    with pytest.raises(ValueError, match="json_devices"):
        NodeReads(registers=("a", "b"), json_devices=True)

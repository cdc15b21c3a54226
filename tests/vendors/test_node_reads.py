"""What a vendor reads from a node is declared once (``Vendor.node_reads``), and its inventory key
follows what a fit reads (``DeviceInfo.FIT_READS``, ``Inventory.FIT_READS``).

The simulator shares one decoded inventory between every node whose key is equal, so a key that
missed a source a fit reads would hand one node another node's devices. These tests hold the
relation for every registered backend: equal keys decode to devices equal in every field a fit
reads, and every source the declaration names changes the key.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from hami_sim.engine.model import DeviceInfo, Inventory
from hami_sim.engine.vendors import Vendor
from hami_sim.engine.vendors.reads import NodeReads
from tests.extender.test_vendors import CASES
from tests.vendors.helpers import VENDORS, json_register, node

NVIDIA_NODE = node(
    "tmpl-nvidia",
    annotations={
        "hami.io/node-nvidia-register": json_register(
            [
                {
                    "id": "GPU-a",
                    "index": 0,
                    "count": 10,
                    "devmem": 81920,
                    "devcore": 100,
                    "type": "A100",
                    "health": True,
                    "numa": 0,
                    "mode": "hami-core",
                },
                {
                    "id": "GPU-b",
                    "index": 1,
                    "count": 10,
                    "devmem": 81920,
                    "devcore": 100,
                    "type": "A100",
                    "health": True,
                    "numa": 0,
                    "mode": "hami-core",
                },
            ]
        ),  # fmt: skip
        "hami.io/node-nvidia-score": '[{"uuid":"GPU-a","score":{"GPU-b":50}},{"uuid":"GPU-b","score":{"GPU-a":50}}]',
    },
)
NODES = {"nvidia": NVIDIA_NODE} | {name: case[0] for name, case in CASES.items()}


def _annotations(n: dict) -> dict:
    return n["metadata"]["annotations"]


def _registered() -> list[tuple[str, Vendor]]:
    """(case, vendor) for every backend that finds devices on one of the example nodes."""
    out = []
    for name, n in NODES.items():
        for vendor in VENDORS:
            if vendor.node_devices(_annotations(n), n)[0]:
                out.append((name, vendor))
    return out


REGISTERED = _registered()
IDS = [f"{name}-{vendor.common_word}" for name, vendor in REGISTERED]


def fit_view(vendor: Vendor, n: dict) -> tuple:
    """What a fit reads of the node's devices for ``vendor`` (the declared fields, in order)."""
    devices, pair_scores = vendor.node_devices(_annotations(n), n)
    view = tuple(tuple(repr(getattr(d, f)) for f in DeviceInfo.FIT_READS) for d in devices)
    return view, repr(pair_scores) if "pair_scores" in Inventory.FIT_READS else None


def _perturbed(n: dict) -> list[tuple[str, dict]]:
    """The node changed in one place no declaration names, or renamed."""
    renamed = copy.deepcopy(n)
    renamed["metadata"]["name"] = "another-node"
    other_annotation = copy.deepcopy(n)
    other_annotation["metadata"]["annotations"]["example.com/unrelated"] = "1"
    other_label = copy.deepcopy(n)
    other_label["metadata"]["labels"] = {"kubernetes.io/hostname": "h-2", "zone": "b"}
    other_capacity = copy.deepcopy(n)
    other_capacity["status"]["capacity"]["example.com/unrelated"] = "3"
    return [
        ("name", renamed),
        ("annotation", other_annotation),
        ("label", other_label),
        ("capacity", other_capacity),
    ]


def test_every_backend_is_exercised():
    assert {vendor.common_word for _, vendor in REGISTERED} >= {
        v.common_word for v in VENDORS if not v.common_word.startswith(("Ascend", "MR-", "BI-"))
    }


@pytest.mark.parametrize(("case", "vendor"), REGISTERED, ids=IDS)
def test_equal_keys_decode_to_what_a_fit_reads_alike(case, vendor):
    """Whatever the node changes: an unchanged key means unchanged devices, field for field a fit
    reads; a changed view means a changed key."""
    n = NODES[case]
    key, view = vendor.inventory_key(_annotations(n), n), fit_view(vendor, n)
    for what, other in _perturbed(n):
        same_key = vendor.inventory_key(_annotations(other), other) == key
        assert not same_key or fit_view(vendor, other) == view, f"{what}: equal key, other devices"


@pytest.mark.parametrize(("case", "vendor"), REGISTERED, ids=IDS)
def test_every_declared_source_changes_the_key(case, vendor):
    n = NODES[case]
    reads: NodeReads = vendor.reads
    key = vendor.inventory_key(_annotations(n), n)
    for name in reads.read_annotations():
        other = copy.deepcopy(n)
        _annotations(other)[name] = "changed"
        assert vendor.inventory_key(_annotations(other), other) != key, name
    for name in reads.capacity:
        other = copy.deepcopy(n)
        other["status"]["capacity"][name] = "7"
        assert vendor.inventory_key(_annotations(other), other) != key, name
    if reads.reads_name():
        other = copy.deepcopy(n)
        other["metadata"]["name"] = "another-node"
        assert vendor.inventory_key(_annotations(other), other) != key


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v.common_word)
def test_a_declaration_names_model_fields(vendor):
    """Every source names the field it fills; a field neither read nor excluded is a typo."""
    reads = vendor.reads
    known = {f.name for f in dataclasses.fields(DeviceInfo)} | {f.name for f in dataclasses.fields(Inventory)}
    named = [*reads.annotations.values(), *reads.labels.values(), *([reads.name] if reads.name else [])]
    assert set(named) <= known


def test_the_key_reads_the_node_name_only_while_a_fit_reads_device_ids(monkeypatch):
    """Capacity backends name their devices after the node: the name is in their key because ``id``
    is in ``DeviceInfo.FIT_READS``; were it not, nodes of one shape would share one key."""
    reads = NodeReads(capacity=("example.com/cards",), name="id")
    n = node("n-1", capacity={"example.com/cards": "2"})
    renamed = node("n-2", capacity={"example.com/cards": "2"})
    assert reads.key("X", {}, n) != reads.key("X", {}, renamed)
    monkeypatch.setattr(DeviceInfo, "FIT_READS", tuple(f for f in DeviceInfo.FIT_READS if f != "id"))
    assert reads.key("X", {}, n) == reads.key("X", {}, renamed)


@pytest.mark.parametrize(
    ("reads", "sources", "annotation_keys"),
    [
        (NodeReads(registers=("a/r",)), (("a/r",), ()), ("a/r",)),
        (NodeReads(registers=("a/r",), annotations={"a/x": "custom_info"}), (("a/r",), ()), ("a/r", "a/x")),
        (NodeReads(registers=("a/r",), annotations={"a/t": "template"}), (("a/r",), ()), ("a/r",)),
        (NodeReads(registers=("a/r",), name="id"), (("a/r",), ()), None),
        (NodeReads(capacity=("c",), name="id"), ((), ("c",)), None),
        (NodeReads(registers=("a/r",), every_node=True), None, ("a/r",)),
    ],
)
def test_views_derived_from_one_declaration(reads, sources, annotation_keys):
    """Registration sources and annotation keys follow the declaration; a source filling a field no
    fit reads (``template``) stays out of the key."""
    assert reads.sources() == sources
    assert reads.annotation_keys() == annotation_keys


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: v.common_word)
def test_backends_compose_rather_than_inherit(vendor):
    """Each backend class derives from ``Vendor`` itself and leaves the derived views alone."""
    cls = type(vendor)
    assert cls.__mro__[1] is Vendor, cls.__mro__
    for view in ("registration_sources", "inventory_annotations", "inventory_key"):
        assert view not in vars(cls), f"{cls.__name__} writes {view} by hand; declare node_reads"

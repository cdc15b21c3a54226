"""The vendor registry: one descriptor per vendor module, and everything that lists vendors follows it.

A toy vendor registered here (and nowhere else) becomes a profile choice, renders a template node's
registration and gets a filter verdict from the extender; the vendor table of docs/vendors.md lists
the registry's backends in its order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from hami_sim.engine import vendors as registry
from hami_sim.engine.vendors import Backend, ProfileFields, VendorDescriptor, default_vendors, descriptors
from hami_sim.engine.vendors.base import NodeReads, Vendor
from hami_sim.engine.vendors.fit_loop import FitRules, common_fit
from hami_sim.engine.vendors.node_codecs import whole_devices
from hami_sim.engine.vendors.registry import render_json
from hami_sim.engine.vendors.request_rules import count_request
from tests.factories import extender_args

DOCS = Path(__file__).resolve().parents[2] / "docs" / "vendors.md"

TOY = "Toy"
TOY_REGISTER = "hami.io/node-toy-register"
TOY_COUNT = "toy.example.com/tpu"


@dataclass(frozen=True, slots=True)
class ToyConfig:
    resource_count_name: str = TOY_COUNT


class ToyVendor(Vendor):
    """A count-only JSON-registered accelerator, built from the shared parts only."""

    common_word = TOY
    config_class = ToyConfig
    resource_fields = ("resource_count_name",)
    register_key = TOY_REGISTER

    def node_reads(self):
        return NodeReads(registers=(TOY_REGISTER,))

    def node_devices(self, annotations, node):
        return whole_devices(annotations, TOY_REGISTER, TOY), {}

    def container_request(self, resources):
        return count_request(resources, self.config.resource_count_name, TOY)

    def fit(self, devices, request, pod, node, policy, allocated=()):
        rules = FitRules("toy.example.com/use-uuid", "toy.example.com/nouse-uuid")
        return common_fit(TOY, rules, devices, request, pod, node, policy)


TOY_PROFILE = ProfileFields(label="Toy TPU", codec="json", help=f"{TOY_REGISTER} JSON", render=render_json)
TOY_DESCRIPTOR = VendorDescriptor(
    block="toy", order=1000, config_class=ToyConfig, backends=(Backend(ToyVendor, lambda word: TOY_PROFILE),)
)


@pytest.fixture
def toy_vendor():
    """The toy family registered for one test; the simulator is rebuilt around it, then without it."""
    from hami_sim.runtime.simulator import get_simulator

    registry.register(TOY_DESCRIPTOR)
    get_simulator.cache_clear()
    yield
    registry.unregister(TOY_DESCRIPTOR.block)
    get_simulator.cache_clear()


def toy_pod(count: int) -> dict:
    container = {"name": "c", "resources": {"limits": {TOY_COUNT: str(count)}}}
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [container]}}


@pytest.mark.django_db
def test_a_registered_toy_vendor_is_a_choice_renders_and_gets_a_verdict(toy_vendor, client):
    from profiles.choices import vendor_choices
    from profiles.render import row_errors, template_node
    from profiles.vendors import row_defaults

    assert vendor_choices()[-1] == (TOY, "Toy TPU")
    rows = [{**row_defaults(TOY), "type": "Toy T1", "devmem": 16384, "count": 1, "quantity": 2}]
    assert row_errors(rows[0], TOY) == {}
    node = template_node("toys", match_labels={"pool": "toys"}, profiles=[(TOY, rows, {})])
    registered = orjson.loads(node["metadata"]["annotations"][TOY_REGISTER])
    assert [(d["type"], d["devmem"]) for d in registered] == [("Toy T1", 16384)] * 2
    assert node["status"]["capacity"][TOY_COUNT] == "2"

    answers = {}
    for count in (2, 3):
        response = client.post(
            "/filter-simulation", extender_args(toy_pod(count), [node]), content_type="application/json"
        )
        answer = orjson.loads(response.content)
        answers[count] = ([n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items", [])], answer)
    assert answers[2][0] == [node["metadata"]["name"]]
    assert answers[3][0] == []
    assert answers[3][1]["FailedNodes"] == {node["metadata"]["name"]: "NodeInsufficientDevice"}


def test_the_toy_vendor_leaves_no_trace_once_unregistered():
    assert TOY not in [v.common_word for v in default_vendors()]


def test_hami_vendors_config_knows_exactly_the_registered_blocks(settings):
    from django.core.exceptions import ImproperlyConfigured

    from hami_sim.runtime.simulator import build_vendors

    blocks = sorted(d.block for d in descriptors() if not d.settings_block)
    with pytest.raises(ImproperlyConfigured) as err:
        build_vendors({**settings.HAMI, "VENDORS": {"toy": {}}})
    assert str(err.value) == f"HAMI[\"VENDORS\"] has unknown vendors ['toy']; known: {blocks}"


def _table_rows() -> list[tuple[set[str], str]]:
    """(CommonWords, module) of each row of the vendor table in docs/vendors.md."""
    text = DOCS.read_text()
    table = text.split("## The vendor table", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        first, module = (cell.strip() for cell in line.strip("|").split("|")[:2])
        words = re.search(r"\(([^)]*)\)", first).group(1)
        rows.append(({w.strip(" `") for w in words.split(",")}, module.strip("`")))
    return rows


def test_the_docs_vendor_table_lists_the_registry_in_order():
    """One row per backend (per family for the per-chip ones), in the registry's order."""
    expected: list[tuple[set[str], str]] = []
    for desc in descriptors():
        module = type(desc.build()[0]).__module__.rsplit(".", 1)[1] + ".py"
        words = [v.common_word for v in desc.build()]
        if desc.per_chip:
            expected.append((set(words), module))
        else:
            expected += [({word}, module) for word in words]
    assert _table_rows() == expected


def test_default_vendors_follow_the_registry_order():
    words = [v.common_word for v in default_vendors()]
    assert words == [w for d in descriptors() for w in d.profiles()]
    assert [d.order for d in descriptors()] == sorted(d.order for d in descriptors())


def test_default_vendors_register_in_hami_v2_10_order():
    """HAMi v2.10.0 ``InitDevicesWithConfig`` (``pkg/scheduler/config/config.go``): the fixed backends
    in its ``deviceInitializers`` order, then the Ascend chips, then the Iluvatar chips."""
    fixed = ["NVIDIA", "MLU", "DCU", "GCU", "Enflame", "Mthreads", "Metax-GPU", "Metax-SGPU", "kunlun", "XPU"]
    fixed += ["AWSNeuron", "AMD", "Vastai", "Biren"]
    words = [v.common_word for v in default_vendors()]
    chips = words[len(fixed) :]
    assert words[: len(fixed)] == fixed
    ascend = [w for w in chips if w.startswith("Ascend")]
    assert chips == ascend + ["MR-V100", "MR-V50", "BI-V150", "BI-V100"]
    assert [d.block for d in descriptors()][-2:] == ["ascend", "iluvatar"]


def _annotation_like_constants() -> set[str]:
    """Every module-level string of the vendor modules that looks like an annotation key."""
    import importlib
    import pkgutil

    found: set[str] = set()
    for info in pkgutil.iter_modules(registry.__path__):
        module = importlib.import_module(f"{registry.__name__}.{info.name}")
        found |= {
            v
            for v in vars(module).values()
            if isinstance(v, str) and re.fullmatch(r"[\w.-]+(/[\w.-]+)?", v) and ("-" in v or "/" in v)
        }
    return found


def _node_with(annotations: dict) -> dict:
    return {
        "metadata": {"name": "n-1", "annotations": annotations, "labels": {"l": "1"}},
        "status": {"capacity": {"x.example.com/dev": "4"}},
    }


@pytest.mark.parametrize("vendor", default_vendors(), ids=lambda v: v.common_word)
def test_a_vendors_inventory_annotations_are_all_its_inventory_key_reads(vendor):
    """The simulator keys an inventory by the values of ``inventory_annotations`` alone (no
    ``inventory_key`` call per node): a vendor that declares them must read nothing else, and every
    one of them must change its key."""
    keys = vendor.inventory_annotations()
    if keys is None:
        return
    others = sorted(_annotation_like_constants() - set(keys)) + ["other.example.com/x"]
    base = {k: f"value-{i}" for i, k in enumerate(keys)} | dict.fromkeys(others, "1")
    key = vendor.inventory_key(base, _node_with(base))
    elsewhere = _node_with(base) | {"spec": {"taints": []}}
    elsewhere["metadata"] = {"name": "n-2", "annotations": base, "labels": {"l": "2"}}
    for k in others:
        assert vendor.inventory_key(base | {k: "2"}, elsewhere) == key, f"reads {k} too"
    for k in keys:
        changed = base | {k: "changed"}
        assert vendor.inventory_key(changed, _node_with(changed)) != key, k

"""Device profiles for every HAMi vendor: validation, rendering that round-trips through the engine's
own decoders, template nodes, cold-zero extender verdicts over HTTP, YAML, drift and vendor config
from settings."""

from __future__ import annotations

import urllib.request

import orjson
import pytest
import yaml

from profiles.choices import Vendor as VendorChoice
from profiles.render import render_devices, row_errors, rows_from_devices, template_node
from profiles.vendors import SPECS, profile_errors, row_defaults
from tests.factories.models import DeviceProfileFactory, NodeGroupFactory

pytestmark = [pytest.mark.django_db]

FIXTURES = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures" / "hami_examples"


def mock_annotation(key: str) -> str:
    """A value from the mock-device-plugin README (``'key=value'`` lines)."""
    text = (FIXTURES / "mixed-mockdp-readme-vendor-node-annotations.txt").read_text()
    line = next(line for line in text.splitlines() if line.strip().startswith(f"'{key}="))
    return line.strip().split("=", 1)[1].rstrip("'")


# One realistic profile per vendor (rows as an operator writes them; vendor-fixed fields omitted).
PROFILES: dict[str, list[dict]] = {
    "NVIDIA": [{"type": "NVIDIA A10G", "devmem": 23028, "quantity": 2}],
    "MLU": [{"devmem": 24576, "quantity": 4}],
    "DCU": [{"type": "DCU-K100_AI", "devmem": 65536, "count": 4, "quantity": 2}],
    "MR-V100": [{"type": "MR-V100", "devmem": 32768, "quantity": 2}],
    "MR-V50": [{"type": "MR-V50", "devmem": 16384, "quantity": 1}],
    "BI-V150": [{"type": "BI-V150", "devmem": 32768, "count": 4, "quantity": 2}],
    "BI-V100": [{"type": "BI-V100", "devmem": 32768, "quantity": 1}],
    "Mthreads": [{"devmem": 49152, "quantity": 2}],
    "Metax-GPU": [{"quantity": 4}],
    "Metax-SGPU": [{"devmem": 65536, "count": 16, "quantity": 2, "extra": {"qosPolicy": "best-effort"}}],
    "GCU": [{"quantity": 4}],
    "Enflame": [
        {
            "devmem": 40960,
            "count": 6,
            "quantity": 2,
            "extra": {"profiles": {"1g.6gb": "0", "3g.20gb": "1", "6g.40gb": "2"}},
        }
    ],
    "kunlun": [{"quantity": 4, "numa": 0}, {"quantity": 4, "numa": 1}],
    "XPU": [{"type": "XPU", "devmem": 98304, "quantity": 2}],
    "AWSNeuron": [{"count": 2, "devcore": 3, "quantity": 4, "extra": {"instance_type": "inf2.24xlarge"}}],
    "AMD": [
        {
            "type": "AMD MI300X",
            "devmem": 196608,
            "devcore": 304,
            "quantity": 2,
            "extra": {"custominfo": {"pciBDF": "0000:0c:00.0"}},
        }
    ],
    "Ascend910A": [{"type": "Ascend910A", "devmem": 32768, "count": 4, "devcore": 30, "quantity": 2}],
    "Ascend910B2": [{"type": "Ascend910B2", "devmem": 65536, "count": 4, "devcore": 24, "quantity": 2}],
    "Ascend910B3": [{"type": "Ascend910B3", "devmem": 65536, "count": 4, "devcore": 20, "quantity": 2}],
    "Ascend910B4-1": [{"type": "Ascend910B4-1", "devmem": 65536, "count": 4, "devcore": 20, "quantity": 2}],
    "Ascend910B4": [
        {
            "type": "Ascend910B4",
            "devmem": 32768,
            "count": 4,
            "devcore": 20,
            "quantity": 4,
            "extra": {"custominfo": {"NetworkID": 0}},
        },
        {
            "type": "Ascend910B4",
            "devmem": 32768,
            "count": 4,
            "devcore": 20,
            "quantity": 4,
            "extra": {"custominfo": {"NetworkID": 1}},
        },
    ],
    "Ascend910C": [{"type": "Ascend910C", "devmem": 65536, "count": 4, "devcore": 20, "quantity": 4}],
    "Ascend310P": [{"type": "Ascend310P", "devmem": 21527, "count": 7, "devcore": 8, "quantity": 2}],
    "Vastai": [{"type": "Vastai", "devmem": 16384, "quantity": 2}],
    "Biren": [{"type": "Biren", "devmem": 65536, "quantity": 2}],
}


def full(vendor: str, rows: list[dict]) -> list[dict]:
    return [{**row_defaults(vendor), **row} for row in rows]


def test_vendor_choices_are_the_engine_vendors():
    from hami_sim.engine.vendors import default_vendors

    words = [v.common_word for v in default_vendors()]
    assert list(VendorChoice.values) == words
    assert list(SPECS) == words
    assert set(PROFILES) == set(words)


@pytest.mark.parametrize("vendor", list(PROFILES))
def test_rendered_registration_round_trips_through_the_engine(vendor):
    """A template node carrying the profile's registration yields exactly the profile's devices."""
    from hami_sim.runtime.simulator import get_simulator

    rows = full(vendor, PROFILES[vendor])
    assert not profile_errors(vendor, rows)
    assert all(not row_errors(row, vendor) for row in rows), [row_errors(row, vendor) for row in rows]
    node = template_node("grp", match_labels={"pool": "x"}, profiles=[(vendor, rows, {})])
    inventory = get_simulator().annotation_inventory(node)
    assert inventory.error == ""
    assert rows_from_devices(inventory.devices, vendor) == rows
    promised = render_devices("grp", vendor, rows)
    fields = ("index", "count", "devmem", "devcore", "type", "numa", "health")
    assert [tuple(getattr(d, f) for f in fields) for d in inventory.devices] == [
        tuple(getattr(d, f) for f in fields) for d in promised
    ]
    assert {d.device_vendor for d in inventory.devices} == {vendor}


def test_capacity_vendors_render_hamis_units():
    def capacity(vendor: str) -> dict:
        return template_node("g", match_labels={}, profiles=[(vendor, full(vendor, PROFILES[vendor]), {})])[
            "status"
        ]

    mlu = capacity("MLU")
    assert mlu["capacity"]["cambricon.com/mlu.smlu.vcore"] == "400"  # 100 per card
    assert mlu["capacity"]["cambricon.com/mlu.smlu.vmemory"] == str(4 * 24576 // 256)
    assert mlu["allocatable"]["cambricon.com/mlu.smlu.vcore"] == "400"
    mt = capacity("Mthreads")["capacity"]
    assert (mt["mthreads.com/sgpu-core"], mt["mthreads.com/sgpu-memory"]) == ("32", str(2 * 49152 // 512))
    assert capacity("kunlun")["capacity"]["kunlunxin.com/xpu"] == "8"
    neuron = template_node(
        "g", match_labels={}, profiles=[("AWSNeuron", full("AWSNeuron", PROFILES["AWSNeuron"]), {})]
    )
    assert neuron["status"]["capacity"]["aws.amazon.com/neuron"] == "4"
    assert neuron["status"]["capacity"]["aws.amazon.com/neuroncore"] == "8"
    assert neuron["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "inf2.24xlarge"


def test_legacy_and_vendor_json_formats():
    node = template_node(
        "g",
        match_labels={},
        profiles=[
            ("DCU", full("DCU", PROFILES["DCU"]), {}),
            ("Metax-SGPU", full("Metax-SGPU", PROFILES["Metax-SGPU"]), {}),
            ("Enflame", full("Enflame", PROFILES["Enflame"]), {}),
        ],
    )
    ann = node["metadata"]["annotations"]
    dcu = ann["hami.io/node-dcu-register"]
    assert dcu.count(":") == 2 and dcu.split(":")[0].split(",")[1:] == [
        "4",
        "65536",
        "100",
        "DCU-K100_AI",
        "0",
        "true",
        "0",
        "hami-core",
    ]
    sgpu = orjson.loads(ann["metax-tech.com/node-gpu-devices"])
    assert (
        sgpu[0]["totalVRam"] == 65536 and sgpu[0]["qosPolicy"] == "best-effort" and sgpu[0]["healthy"] is True
    )
    drs = orjson.loads(ann["enflame.com/gcu-drs-capacity"])
    assert drs["profiles"] == {"1g.6gb": "0", "3g.20gb": "1", "6g.40gb": "2"} and len(drs["devices"]) == 2


def test_profile_from_a_realistic_registration_reproduces_it():
    """HAMi's mock Ascend 910B4 registration -> rows -> rendered again: the same devices."""
    from hami_sim.runtime.simulator import get_simulator

    sim = get_simulator()
    real = {
        "metadata": {
            "name": "n1",
            "annotations": {
                "hami.io/node-register-Ascend910B4": mock_annotation("hami.io/node-register-Ascend910B4")
            },
        }
    }
    devices = sim.annotation_inventory(real).devices
    rows = rows_from_devices(devices, "Ascend910B4")
    assert [r["quantity"] for r in rows] == [2] and not row_errors(rows[0], "Ascend910B4")
    again = sim.annotation_inventory(
        template_node("g", match_labels={}, profiles=[("Ascend910B4", rows, {})])
    ).devices
    assert [(d.devmem, d.devcore, d.count, d.type) for d in again] == [
        (d.devmem, d.devcore, d.count, d.type) for d in devices
    ]


@pytest.mark.parametrize(
    ("vendor", "row", "field", "text"),
    [
        ("MLU", {"devmem": 1000}, "devmem", "multiple of 256"),
        ("MLU", {"devmem": 24576, "count": 10}, "count", "must be 100 for MLU"),
        ("kunlun", {"devmem": 1}, "devmem", "must be 98304"),
        (
            "Ascend910B4",
            {"type": "Ascend910B4", "devmem": 32768, "extra": {"custominfo": {"NetworkID": "a"}}},
            "extra",
            "NetworkID must be a number",
        ),
        ("Ascend910B4", {"type": "NPU", "devmem": 32768}, "type", "must contain 'Ascend910B4'"),
        ("DCU", {"type": "DCU,K100", "devmem": 1024}, "type", "legacy annotation format"),
        (
            "DCU",
            {"type": "DCU", "devmem": 1024, "extra": {"custominfo": {}}},
            "extra",
            "extra.custominfo is not a DCU field",
        ),
        (
            "Enflame",
            {"devmem": 1024, "count": 6, "extra": {"profiles": {"3g.20gb": "1"}}},
            "devmem",
            "must be 20480",
        ),
        ("Enflame", {"devmem": 1024, "count": 6}, "extra", "extra.profiles"),
        ("AWSNeuron", {"count": 2, "devcore": 1}, "devcore", "must be 3"),
        (
            "AWSNeuron",
            {"count": 3, "devcore": 7},
            "count",
            "count (Neuron cores per device) must be between 1 and 2 (HAMi v2.10.0 maxCoresPerNeuronDevice",
        ),
        ("AWSNeuron", {"count": 0, "devcore": 0}, "count", "must be between 1 and 2"),
        ("Biren", {"type": "Biren", "devmem": 1024, "devcore": 50}, "devcore", "must be 100 for Biren"),
        ("AMD", {"type": "AMD", "devmem": 1024, "mode": "mig"}, "mode", "NVIDIA modes"),
        ("Metax-SGPU", {"devmem": 1024, "extra": {"qosPolicy": 3}}, "extra", "qosPolicy must be a string"),
    ],
)
def test_rows_are_validated_per_vendor(vendor, row, field, text):
    errors = row_errors({**row_defaults(vendor), **row}, vendor)
    assert field in errors and text in errors[field], errors


@pytest.mark.api
def test_api_rejects_a_bad_vendor_profile_and_writes_nothing(token_client, db):
    from profiles.models import DeviceProfile

    NodeGroupFactory(name="npu")
    bad = [
        (
            {"vendor": "MLU", "devices": [{"devmem": 24576, "quantity": 2}, {"devmem": 49152}]},
            "differs from rows[0]",
        ),
        (
            {"vendor": "kunlun", "devices": [{"quantity": 4, "numa": 0}, {"quantity": 4, "numa": 0}]},
            "rows[1].numa must be 1",
        ),
        (
            {"vendor": "Ascend910B4", "pair_scores": {"0": {"1": 5}}, "devices": PROFILES["Ascend910B4"]},
            "NVIDIA topology",
        ),
        (
            {
                "vendor": "Ascend910B4",
                "devices": [{"type": "Ascend910B4", "devmem": 1, "extra": {"NetworkID": 1}}],
            },
            "extra.NetworkID is not",
        ),
        ({"vendor": "Ascend999", "devices": PROFILES["Ascend910B4"]}, "not a valid choice"),
        (
            {"vendor": "AWSNeuron", "devices": [{"count": 3, "devcore": 7, "quantity": 2}]},
            "devices: count (Neuron cores per device) must be between 1 and 2 (HAMi v2.10.0",
        ),
    ]
    for payload, text in bad:
        response = token_client.post(
            "/api/v1/device-profiles/", {"node_group": "npu", **payload}, format="json"
        )
        assert response.status_code == 400, response.content
        assert text in response.content.decode(), response.content
    assert DeviceProfile.objects.count() == 0
    ok = token_client.post(
        "/api/v1/device-profiles/",
        {"node_group": "npu", "vendor": "Ascend910B4", "devices": PROFILES["Ascend910B4"]},
        format="json",
    )
    assert ok.status_code == 201, ok.content
    body = ok.json()
    assert body["devices"][0]["extra"] == {"custominfo": {"NetworkID": 0}}
    assert "hami.io/node-register-Ascend910B4" in body["registration"]["annotations"]
    assert orjson.loads(body["register_annotation"])[4]["custominfo"] == {"NetworkID": 1}


def _create(group, vendor: str) -> None:
    from profiles.api.serializers import complete_rows

    DeviceProfileFactory(node_group=group, vendor=vendor, rows=complete_rows(vendor, PROFILES[vendor]))


@pytest.mark.api
def test_template_and_kwok_carry_every_vendors_registration(client, db):
    group = NodeGroupFactory(name="mixed", machine_type="inf2.24xlarge")
    for vendor in ("NVIDIA", "Ascend910B4", "DCU", "MLU", "AWSNeuron", "Metax-SGPU"):
        _create(group, vendor)
    tmpl = client.get("/api/v1/node-groups/mixed/template").json()
    ann, cap, alloc = (
        tmpl["metadata"]["annotations"],
        tmpl["status"]["capacity"],
        tmpl["status"]["allocatable"],
    )
    for key in (
        "hami.io/node-nvidia-register",
        "hami.io/node-register-Ascend910B4",
        "hami.io/node-dcu-register",
        "metax-tech.com/node-gpu-devices",
    ):
        assert key in ann
    expected = {
        "nvidia.com/gpu": "20",  # 2 cards x split 10
        "huawei.com/Ascend910B4": "32",  # 8 NPUs x split 4
        "hygon.com/dcunum": "8",
        "metax-tech.com/sgpu": "32",
        "cambricon.com/mlu.smlu.vcore": "400",
        "cambricon.com/mlu.smlu.vmemory": "384",
        "aws.amazon.com/neuron": "4",
        "aws.amazon.com/neuroncore": "8",
    }
    assert {k: cap[k] for k in expected} == expected == {k: alloc[k] for k in expected}
    kwok = yaml.safe_load(client.get("/api/v1/node-groups/mixed/template?format=kwok").content)
    assert kwok["metadata"]["annotations"]["hami.io/node-dcu-register"] == ann["hami.io/node-dcu-register"]
    assert kwok["status"]["capacity"]["cambricon.com/mlu.smlu.vcore"] == "400"
    # the template node, sent to the extender, has exactly the profiles' devices
    from hami_sim.runtime.simulator import get_simulator

    inv = get_simulator().annotation_inventory(tmpl)
    counts = {}
    for dev in inv.devices:
        counts[dev.device_vendor] = counts.get(dev.device_vendor, 0) + 1
    assert counts == {"NVIDIA": 2, "Ascend910B4": 8, "DCU": 2, "MLU": 4, "AWSNeuron": 4, "Metax-SGPU": 2}


# ---- cold-zero groups end to end over HTTP ---------------------------------------------------------


def _pod(**res) -> dict:
    return {
        "metadata": {"name": "p", "namespace": "default", "annotations": {}},
        "spec": {
            "containers": [
                {"name": "c", "image": "x", "resources": {"limits": {k: str(v) for k, v in res.items()}}}
            ]
        },
    }


def _cold(group: str, rand: str = "5577006791947779410") -> dict:
    """A CA scale-from-zero template: no HAMi registration at all."""
    name = f"template-node-for-{group}-{rand}"
    cap = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "annotations": {}},
        "status": {"capacity": cap, "allocatable": cap},
    }


def _filter(base_url: str, pod: dict, nodes: list[dict]) -> dict:
    data = orjson.dumps({"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None})
    req = urllib.request.Request(
        f"{base_url}/filter-simulation", data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback live server
        assert resp.status == 200
        return orjson.loads(resp.read())


COLD_CASES = [
    # vendor, a pod that fits, a pod that does not, HAMi's reason for it
    (
        "Ascend910B4",
        _pod(**{"huawei.com/Ascend910B4": 2, "huawei.com/Ascend910B4-memory": 8000}),
        _pod(**{"huawei.com/Ascend910B4": 9}),
        "NodeInsufficientDevice",
    ),
    (
        "DCU",
        _pod(**{"hygon.com/dcunum": 1, "hygon.com/dcumem": 30000, "hygon.com/dcucores": 50}),
        _pod(**{"hygon.com/dcunum": 1, "hygon.com/dcumem": 70000}),
        "2/2 CardInsufficientMemory",
    ),
    (
        "MLU",
        _pod(
            **{
                "cambricon.com/vmlu": 1,
                "cambricon.com/mlu.smlu.vmemory": 20,
                "cambricon.com/mlu.smlu.vcore": 10,
            }
        ),
        _pod(**{"cambricon.com/vmlu": 1, "cambricon.com/mlu.smlu.vmemory": 97}),
        "4/4 CardInsufficientMemory",
    ),
    ("kunlun", _pod(**{"kunlunxin.com/xpu": 4}), _pod(**{"kunlunxin.com/xpu": 9}), "NodeInsufficientDevice"),
    (
        "Mthreads",
        _pod(**{"mthreads.com/vgpu": 1, "mthreads.com/sgpu-memory": 8, "mthreads.com/sgpu-core": 4}),
        _pod(**{"mthreads.com/vgpu": 1, "mthreads.com/sgpu-memory": 97}),
        "2/2 CardInsufficientMemory",
    ),
    (
        "AWSNeuron",
        _pod(**{"aws.amazon.com/neuroncore": 2}),
        _pod(**{"aws.amazon.com/neuron": 5}),
        "NodeInsufficientDevice",
    ),
]


@pytest.mark.api
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_cold_zero_groups_of_every_kind_get_exact_verdicts_over_http(live_server, settings):
    settings.PROFILE_CACHE_CHECK_SECONDS = 0
    for vendor, *_ in COLD_CASES:
        group = NodeGroupFactory(name=f"cold-{vendor.lower()}", match_labels={"pool": vendor})
        _create(group, vendor)
    for vendor, fits, fails, reason in COLD_CASES:
        tmpl = _cold(f"cold-{vendor.lower()}")
        name = tmpl["metadata"]["name"]
        answer = _filter(live_server.url, fits, [tmpl])
        assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == [name], (vendor, answer)
        answer = _filter(live_server.url, fails, [tmpl])
        assert answer["FailedNodes"] == {name: reason}, (vendor, answer)
    # a cold template of a group whose profile is of another vendor: HAMi's own answer, not a fit
    answer = _filter(live_server.url, COLD_CASES[0][1], [_cold("cold-dcu")])
    assert list(answer["FailedNodes"].values()) == ["NodeInsufficientDevice"]


@pytest.mark.api
def test_resolver_serves_vendor_profiles_without_queries(client, db, django_assert_max_num_queries, settings):
    from hami_sim.runtime.simulator import get_simulator
    from profiles.inventory import resolve

    settings.PROFILE_CACHE_CHECK_SECONDS = 3600
    for vendor in ("MLU", "Ascend910B4"):
        group = NodeGroupFactory(name=f"g-{vendor.lower()}")
        _create(group, vendor)
    nodes = [_cold("g-mlu", str(i)) for i in range(30)] + [
        _cold("g-ascend910b4", f"{i}-e-{i}") for i in range(30)
    ]
    sim = get_simulator()
    resolve(nodes[0], sim)  # load the catalog
    with django_assert_max_num_queries(0):
        for n in nodes:
            inv = resolve(n, sim)
            assert inv.source == "profile" and len(inv.devices) in (4, 8)


# ---- YAML --------------------------------------------------------------------------------------


def test_yaml_names_the_bad_vendor_entry_and_round_trips_extras():
    from profiles.models import DeviceProfile, NodeGroup
    from profiles.yamlio import ProfileImportError, dump_yaml, export_profiles, import_profiles

    good = {
        "name": "npu",
        "match_labels": {"pool": "npu"},
        "profiles": [
            {"vendor": "Ascend910B4", "devices": PROFILES["Ascend910B4"]},
            {"vendor": "Enflame", "devices": PROFILES["Enflame"]},
        ],
    }
    bad = {"name": "mlu", "profiles": [{"vendor": "MLU", "devices": [{"devmem": 1000, "quantity": 2}]}]}
    with pytest.raises(ProfileImportError) as exc:
        import_profiles(dump_yaml({"node_groups": [good, bad]}))
    assert "node_groups[1] (mlu): profiles[0].devices[0].devmem: devmem must be a multiple of 256" in str(
        exc.value
    )
    assert NodeGroup.objects.count() == 0
    assert import_profiles(dump_yaml({"node_groups": [good]}))["profiles"] == 2
    exported = export_profiles()
    rows = exported["node_groups"][0]["profiles"][0]["devices"]
    assert rows[0]["extra"] == {"custominfo": {"NetworkID": 0}} and "health" not in rows[0]
    DeviceProfile.objects.all().delete()
    import_profiles(dump_yaml(exported))
    assert export_profiles() == exported


# ---- drift ---------------------------------------------------------------------------------------


def test_drift_compares_every_vendor(db, settings):
    from profiles.models import DriftFinding
    from profiles.sync import sync_nodes

    settings.DRIFT_UNREGISTERED_GRACE_SECONDS = 0
    group = NodeGroupFactory(name="mix", match_labels={"pool": "mix"})
    _create(group, "Ascend910B4")
    _create(group, "kunlun")
    good = template_node(
        "mix",
        match_labels={"pool": "mix"},
        profiles=[
            ("Ascend910B4", full("Ascend910B4", PROFILES["Ascend910B4"]), {}),
            ("kunlun", full("kunlun", PROFILES["kunlun"]), {}),
        ],
    )
    good["metadata"]["name"] = "node-good"
    sync_nodes([good])
    assert DriftFinding.objects.count() == 0
    # a node with smaller NPUs, four missing XPUs and an extra DCU registration
    small = [{**r, "devmem": 16384} for r in PROFILES["Ascend910B4"]]
    bad = template_node(
        "mix",
        match_labels={"pool": "mix"},
        profiles=[
            ("Ascend910B4", full("Ascend910B4", small), {}),
            ("kunlun", full("kunlun", [{"quantity": 2, "numa": 0}, {"quantity": 2, "numa": 1}]), {}),
            ("DCU", full("DCU", PROFILES["DCU"]), {}),
        ],
    )
    bad["metadata"]["name"] = "node-bad"
    sync_nodes([good, bad])
    found = {
        (f.field, f.device.split(" ")[0], f.expected, f.actual)
        for f in DriftFinding.objects.filter(inventory__name="node-bad")
    }
    assert ("device count", "kunlun", "8", "4") in found
    assert ("devmem", "Ascend910B4", "32768 MiB", "16384 MiB") in found
    assert ("vendor", "DCU", "no DCU devices", "2 devices") in found
    assert not DriftFinding.objects.filter(inventory__name="node-good").exists()
    # the capacity registration is kept on the inventory
    from profiles.models import NodeInventory

    assert NodeInventory.objects.get(name="node-bad").capacity == {"kunlunxin.com/xpu": "4"}
    # a group node that registers nothing names what the profiles expect
    bare = {
        "metadata": {"name": "node-bare", "labels": {"pool": "mix"}, "annotations": {}},
        "status": {"capacity": {"cpu": "8"}},
    }
    sync_nodes([good, bad, bare])
    finding = DriftFinding.objects.get(inventory__name="node-bare")
    assert (finding.kind, finding.expected) == (
        "unregistered",
        "hami.io/node-register-Ascend910B4, status.capacity[kunlunxin.com/xpu]",
    )


# ---- vendor config from settings ---------------------------------------------------------------


@pytest.mark.api
def test_renaming_a_vendor_resource_in_settings_changes_what_the_extender_reads(client, settings):
    from django.core.exceptions import ImproperlyConfigured

    from hami_sim.runtime.simulator import get_simulator

    dcu = "DCU-0,4,65536,100,DCU-K100,0,true,0,hami-core:"
    n = {
        "metadata": {"name": "n1", "annotations": {"hami.io/node-dcu-register": dcu}},
        "status": {"capacity": {}},
    }
    renamed = _pod(**{"hygon.com/dcu-renamed": 1, "hygon.com/dcumem": 70000})

    def ask(pod):
        body = orjson.dumps({"Pod": pod, "Nodes": {"metadata": {}, "items": [n]}, "NodeNames": None})
        return orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)

    # Helm defaults: the renamed resource is not HAMi's, so the pod asks nothing of the DCU
    assert ask(renamed)["FailedNodes"] == {}
    settings.HAMI = {**settings.HAMI, "VENDORS": {"hygon": {"resourceCountName": "hygon.com/dcu-renamed"}}}
    get_simulator.cache_clear()
    assert ask(renamed)["FailedNodes"] == {"n1": "1/1 CardInsufficientMemory"}
    assert "hygon.com/dcu-renamed" in get_simulator().managed_resources()
    assert "hygon.com/dcunum" not in get_simulator().managed_resources()
    # templates advertise the renamed count resource too
    node = template_node("g", match_labels={}, profiles=[("DCU", full("DCU", PROFILES["DCU"]), {})])
    assert node["status"]["capacity"]["hygon.com/dcu-renamed"] == "8"
    # per-chip overrides and typos
    settings.HAMI = {
        **settings.HAMI,
        "VENDORS": {"ascend": {"Ascend910B4": {"resourceMemoryName": "huawei.com/b4-mem"}}},
    }
    get_simulator.cache_clear()
    assert "huawei.com/b4-mem" in get_simulator().managed_resources()
    settings.HAMI = {**settings.HAMI, "VENDORS": {"hygon": {"resourceCountNam": "x"}}}
    get_simulator.cache_clear()
    with pytest.raises(ImproperlyConfigured, match="resourceCountNam is not a field of HygonConfig"):
        get_simulator()
    for bad, text in (
        ({"hygon": {"resourceCountName": 5}}, "must be a non-empty string"),
        ({"awsneuron": {"coresPerDevice": "2"}}, "must be a non-negative integer"),
        ({"ascend": {"Ascend999": {}}}, "unknown chips"),
        ({"nvidiaa": {}}, "unknown vendors"),
    ):
        settings.HAMI = {**settings.HAMI, "VENDORS": bad}
        get_simulator.cache_clear()
        with pytest.raises(ImproperlyConfigured, match=text):
            get_simulator()


# ---- admin ---------------------------------------------------------------------------------------


def _admin_form(group_id: int, vendor: str, rows: list[dict]) -> dict:
    data = {
        "node_group": str(group_id),
        "vendor": vendor,
        "pair_scores": "{}",
        "notes": "",
        "devices-TOTAL_FORMS": str(len(rows)),
        "devices-INITIAL_FORMS": "0",
        "devices-MIN_NUM_FORMS": "1",
        "devices-MAX_NUM_FORMS": "1000",
    }
    for i, row in enumerate(rows):
        for key, value in {"position": i, "health": "on", **row}.items():
            data[f"devices-{i}-{key}"] = (
                orjson.dumps(value).decode() if key in ("mig_profiles", "extra") else str(value)
            )
    return data


def test_admin_validates_and_renders_vendor_profiles(admin_client, db):
    from django.urls import reverse

    from profiles.models import DeviceProfile

    group = NodeGroupFactory(name="xpu")
    url = reverse("admin:profiles_deviceprofile_add")
    kunlun = [
        {**row_defaults("kunlun"), **r} for r in ({"quantity": 4, "numa": 0}, {"quantity": 4, "numa": 0})
    ]
    for row in kunlun:
        row.pop("extra"), row.pop("health")
    page = admin_client.post(url, _admin_form(group.pk, "kunlun", kunlun)).content.decode()
    assert "rows[1].numa must be 1" in page
    bad = [{**r, "devmem": 1} for r in kunlun]
    page = admin_client.post(url, _admin_form(group.pk, "kunlun", bad)).content.decode()
    assert "devmem must be 98304 for kunlun" in page
    assert DeviceProfile.objects.count() == 0
    kunlun[1]["numa"] = 1
    assert admin_client.post(url, _admin_form(group.pk, "kunlun", kunlun)).status_code == 302
    profile = DeviceProfile.objects.get()
    page = admin_client.get(
        reverse("admin:profiles_deviceprofile_change", args=[profile.pk])
    ).content.decode()
    assert "status.capacity[kunlunxin.com/xpu]" in page and "extra.profiles" in page  # the per-vendor help
    ascend = [{**row_defaults("Ascend910B4"), **PROFILES["Ascend910B4"][0]}]
    ascend[0].pop("health")
    response = admin_client.post(url, _admin_form(group.pk, "Ascend910B4", ascend))
    assert response.status_code == 302
    profile = DeviceProfile.objects.get(vendor="Ascend910B4")
    assert profile.rows_data()[0]["extra"] == {"custominfo": {"NetworkID": 0}}
    page = admin_client.get(
        reverse("admin:profiles_deviceprofile_change", args=[profile.pk])
    ).content.decode()
    assert "hami.io/node-register-Ascend910B4" in page and "NetworkID" in page


def test_admin_creates_a_vendor_profile_from_a_nodes_inventory(admin_client, db):
    from django.urls import reverse

    from profiles.models import DeviceProfile, NodeInventory
    from profiles.sync import sync_nodes

    NodeGroupFactory(name="npu", match_labels={"pool": "npu"})
    real = {
        "metadata": {
            "name": "npu-1",
            "labels": {"pool": "npu"},
            "annotations": {
                "hami.io/node-register-Ascend910B4": mock_annotation("hami.io/node-register-Ascend910B4")
            },
        },
        "status": {"capacity": {"kunlunxin.com/xpu": "2"}},
    }
    sync_nodes([real])
    inv = NodeInventory.objects.get(name="npu-1")
    response = admin_client.post(
        reverse("admin:profiles_nodeinventory_changelist"),
        {"action": "create_profile_from_inventory", "_selected_action": [inv.pk]},
    )
    assert response.status_code == 302
    profiles = {p.vendor: p.rows_data() for p in DeviceProfile.objects.all()}
    assert set(profiles) == {"Ascend910B4", "kunlun"}
    assert profiles["Ascend910B4"][0]["quantity"] == 2 and profiles["Ascend910B4"][0]["devmem"] == 32768
    assert [r["numa"] for r in profiles["kunlun"]] == [0, 1]
    # and the node now agrees with its group's profiles
    from profiles.drift import check_inventories

    assert check_inventories([inv.pk])["open"] == 0


# ---- property: every row the validators accept round-trips -----------------------------------


def test_every_accepted_profile_round_trips():
    from hypothesis import HealthCheck, given
    from hypothesis import settings as hsettings
    from hypothesis import strategies as st

    from hami_sim.runtime.simulator import get_simulator

    sim = get_simulator()
    # mutations of each vendor's realistic profile: often valid, sometimes not
    change = st.fixed_dictionaries(
        {},
        optional={
            "type_suffix": st.sampled_from(["", "-X", " PCIe", ",bad"]),
            "devmem": st.one_of(
                st.integers(min_value=1, max_value=400).map(lambda k: k * 512), st.integers(-1, 200000)
            ),
            "devcore": st.sampled_from([100, 3, 20, 304, 7, 0]),
            "count": st.integers(min_value=0, max_value=16),
            "numa": st.integers(min_value=0, max_value=2),
            "health": st.booleans(),
            "quantity": st.integers(min_value=1, max_value=8),
        },
    )

    @hsettings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(vendor=st.sampled_from(list(SPECS)), changes=st.lists(change, min_size=1, max_size=3))
    def check(vendor, changes):
        base = full(vendor, PROFILES[vendor])
        rows = []
        for i, c in enumerate(changes):
            row = dict(base[i % len(base)])
            row["type"] = row["type"] + c.pop("type_suffix", "")
            row.update(c)
            rows.append(row)
        ACCEPTED.append(vendor)
        if any(row_errors(r, vendor) for r in rows) or profile_errors(vendor, rows):
            ACCEPTED.pop()
            return
        node = template_node("g", match_labels={}, profiles=[(vendor, rows, {})])
        inventory = sim.annotation_inventory(node)
        assert inventory.error == "", (vendor, rows, inventory.error)
        expected = [{**r, "quantity": 1} for r in rows for _ in range(r["quantity"])]
        got = [
            {**r, "quantity": 1}
            for r in rows_from_devices(inventory.devices, vendor)
            for _ in range(r["quantity"])
        ]
        assert got == expected

    ACCEPTED: list[str] = []
    check()
    assert len(set(ACCEPTED)) >= 15  # most vendors had accepted profiles to round-trip

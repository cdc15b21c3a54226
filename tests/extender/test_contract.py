"""The simulation extender's filter and prioritize verbs over HTTP, with Django's test client.

Bodies are built the way kube-scheduler's Go client sends them: field names without JSON tags
(``Pod``, ``Nodes``, ``NodeNames``), unset fields as ``null``.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.factories import container, extender_args, gpu, node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]


@pytest.fixture(autouse=True, params=["split", "encoded"])
def echo_path(request, monkeypatch):
    """Every test here runs twice: fitting nodes echoed as the request's own bytes (msgspec splits
    the body, the default) and encoded again by orjson (the pure-Python path)."""
    monkeypatch.setattr("simulations.extender.SPLIT_NODES", request.param == "split")
    return request.param


REG = "hami.io/node-nvidia-register"
SCORE = "hami.io/node-nvidia-score"


def post(client, path, body):
    if not isinstance(body, bytes | str):
        body = orjson.dumps(body)
    return client.post(path, body, content_type="application/json")


def filter_(client, body):
    response = post(client, "/filter-simulation", body)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/json")
    return orjson.loads(response.content)


def names(answer):
    return [n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items", [])]


def a10(name, n=2, **kw):
    return node(name, [gpu(f"{name}-GPU-{i}", index=i, **kw) for i in range(n)])


def decisions():
    from decisions.models import Decision

    return Decision.objects.count()


# -- wire format --------------------------------------------------------------------------------------


def test_answer_uses_go_field_names_and_null_node_names(client):
    answer = filter_(client, extender_args(pod(gpumem=1000), [a10("n1")]))
    assert set(answer) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    assert answer["NodeNames"] is None and answer["Error"] == ""
    assert names(answer) == ["n1"]
    assert answer["FailedNodes"] == {} and answer["FailedAndUnresolvableNodes"] == {}


@pytest.mark.parametrize("casing", ["go", "lower"])
def test_pascal_and_lower_case_keys(client, casing):
    answer = filter_(client, extender_args(pod(gpumem=30000), [a10("n1"), node("cold")], casing=casing))
    assert answer["FailedNodes"] == {"n1": "2/2 CardInsufficientMemory"}
    assert answer["FailedAndUnresolvableNodes"] == {"cold": "node unregistered"}


def test_camel_case_node_names_and_unknown_keys(client):
    body = {
        "pod": pod(gpumem=100),
        "nodes": {"items": [a10("n1")]},
        "nodeNames": None,
        "Extra": [1, 2],
        "kind": "x",
    }
    assert names(filter_(client, body)) == ["n1"]


def test_exact_key_wins_over_other_casing(client):
    fits, too_big = pod("small", gpumem=100), pod("big", gpumem=30000)
    nodes = {"items": [a10("n1")]}
    for body in (
        {"pod": too_big, "Pod": fits, "Nodes": nodes},
        {"Pod": fits, "pod": too_big, "Nodes": nodes},
    ):
        assert names(filter_(client, body)) == ["n1"]


def test_null_fields_are_accepted(client):
    body = {"Pod": pod(gpumem=100), "Nodes": {"metadata": None, "items": [a10("n1")]}, "NodeNames": None}
    assert names(filter_(client, body)) == ["n1"]
    p = pod(gpumem=100)
    p["metadata"]["annotations"] = None
    p["spec"]["initContainers"] = None
    assert names(filter_(client, {"Pod": p, "Nodes": {"items": [a10("n1")]}})) == ["n1"]


def test_empty_items_answers_no_nodes(client):
    answer = filter_(client, {"Pod": pod(), "Nodes": {"metadata": {}, "items": []}})
    assert answer["Error"] == "" and answer["FailedNodes"] == {}


# -- validation, in the order simulations/extender.py checks ------------------------------------------

GOOD_NODES = {"metadata": {}, "items": [{"metadata": {"name": "n1"}}]}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{", "malformed extender args: "),
        (b"", "malformed extender args: "),
        (b"[]", "malformed extender args: "),
        (b'"Pod"', "malformed extender args: "),
        ({"Nodes": GOOD_NODES}, "extender args missing pod"),
        ({"Pod": None, "Nodes": GOOD_NODES}, "extender args missing pod"),
        ({"Pod": None, "NodeNames": ["n1"]}, "extender args missing pod"),
        (
            {"Pod": {}, "NodeNames": ["n1"], "Nodes": GOOD_NODES},
            "filter-simulation needs full Node objects (nodeCacheCapable: false); got NodeNames",
        ),
        (
            {"Pod": {}, "NodeNames": []},
            "filter-simulation needs full Node objects (nodeCacheCapable: false); got NodeNames",
        ),
        ({"Pod": {}}, "extender args missing Nodes"),
        ({"Pod": {}, "Nodes": None, "NodeNames": None}, "extender args missing Nodes"),
        ({"Pod": {}, "Nodes": {"items": {"a": 1}}}, "malformed extender args: "),
        ({"Pod": {}, "Nodes": {"items": "n1"}}, "malformed extender args: "),
    ],
)
def test_request_validation_errors(client, body, expected):
    answer = filter_(client, body)
    assert answer["Error"].startswith(expected), answer["Error"]
    if not expected.endswith(": "):
        assert answer["Error"] == expected
    assert answer["Nodes"] is None and answer["FailedNodes"] == {}
    assert decisions() == 0


def test_node_without_name_is_named_by_position(client):
    items = [a10("n1"), {"metadata": {"labels": {}}}]
    answer = filter_(client, {"Pod": pod(), "Nodes": {"items": items}})
    assert answer["Error"].startswith("malformed extender args: ") and "[1]" in answer["Error"]
    answer = filter_(client, {"Pod": pod(), "Nodes": {"items": [{"metadata": {"name": ""}}]}})
    assert "[0]" in answer["Error"] and answer["Nodes"] is None


def test_duplicate_node_names_are_named(client):
    answer = filter_(client, {"Pod": pod(), "Nodes": {"items": [a10("n1"), a10("dup"), a10("dup")]}})
    assert answer["Error"].startswith("malformed extender args: ") and "dup" in answer["Error"]
    assert answer["Nodes"] is None and decisions() == 0


def test_body_over_the_limit(client, settings):
    settings.EXTENDER_MAX_BODY_BYTES = 2048
    body = extender_args(pod(), [a10(f"n{i}") for i in range(10)])
    assert len(body) > 2048
    response = post(client, "/filter-simulation", body)
    assert response.status_code in (200, 413)
    answer = orjson.loads(response.content)
    assert "2048" in answer["Error"] and answer["Nodes"] is None
    assert orjson.loads(post(client, "/prioritize-simulation", body).content) == []
    assert decisions() == 0
    settings.EXTENDER_MAX_BODY_BYTES = 64 * 1024 * 1024
    assert names(filter_(client, body)) == [f"n{i}" for i in range(10)]


def test_structurally_bad_pod_is_a_clear_error(client):
    p = pod()
    p["spec"]["containers"] = {"c": 1}
    answer = filter_(client, {"Pod": p, "Nodes": {"items": [a10("n1")]}})
    assert answer["Error"].startswith("malformed extender args: ")
    bad_quantity = pod(containers=[container(gpumem="lots")])
    answer = filter_(client, {"Pod": bad_quantity, "Nodes": {"items": [a10("n1")]}})
    assert answer["Error"].startswith("malformed extender args: ") and "lots" in answer["Error"]


@pytest.mark.parametrize("value", [5, [1], {"a": "b"}, True])
def test_non_string_node_annotation_is_a_request_error(client, value):
    items = [a10("n1"), node("n2", annotations={REG: value})]
    answer = filter_(client, {"Pod": pod(), "Nodes": {"items": items}})
    assert answer["Error"] == (
        f"malformed extender args: Nodes.items[1].metadata.annotations[{REG}] must be a string"
    )
    assert answer["Nodes"] is None and decisions() == 0
    answer = filter_(
        client, {"Pod": pod(), "Nodes": {"items": [{"metadata": {"name": "n", "annotations": []}}]}}
    )
    assert answer["Error"] == "malformed extender args: Nodes.items[0].metadata.annotations must be an object"


def test_null_annotation_value_is_absent(client):
    answer = filter_(client, {"Pod": pod(), "Nodes": {"items": [node("n", annotations={REG: None})]}})
    assert answer["FailedAndUnresolvableNodes"] == {"n": "node unregistered"}


VERB_PATHS = [
    "/filter-simulation",
    "/prioritize-simulation",
    "/sessions/s1/filter-simulation",
    "/sessions/s1/prioritize-simulation",
]


@pytest.mark.parametrize("path", VERB_PATHS)
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "OPTIONS"])
def test_only_post_is_allowed(client, path, method):
    response = client.generic(method, path)
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert response["Content-Type"] == "application/json"
    assert orjson.loads(response.content)["Error"].startswith(f"method {method} not allowed")


@pytest.mark.parametrize("path", VERB_PATHS)
@pytest.mark.parametrize("accept", ["text/html", "application/xml", "*/*"])
def test_accept_header_never_changes_the_answer(client, path, accept):
    """One answer format: a client asking for something else still gets the extender's JSON, not a 406."""
    body = extender_args(pod(gpumem=100), [a10("n1")])
    response = client.post(path, body, content_type="application/json", HTTP_ACCEPT=accept)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    answer = orjson.loads(response.content)
    if path.endswith("filter-simulation"):
        assert set(answer) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    else:
        assert isinstance(answer, list)


# -- semantics ---------------------------------------------------------------------------------------------


def test_k80_template_from_the_hami_design_doc(client):
    k80 = node(
        "tmpl-k80", [gpu(f"GPU-{i}", index=i, devmem=11441, type="NVIDIA-Tesla K80") for i in range(2)]
    )
    answer = filter_(client, extender_args(pod(gpumem=12000, gpucores=40), [k80]))
    assert answer["FailedNodes"] == {"tmpl-k80": "2/2 CardInsufficientMemory"}
    assert answer["Nodes"] is None
    answer = filter_(client, extender_args(pod(gpumem=300, gpucores=40), [k80]))
    assert names(answer) == ["tmpl-k80"] and answer["FailedNodes"] == {}


def test_unregistered_node(client):
    answer = filter_(client, extender_args(pod(), [node("x")]))
    assert answer["FailedAndUnresolvableNodes"] == {"x": "node unregistered"}
    assert answer["FailedNodes"] == {} and answer["Nodes"] is None


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({REG: "[]"}, f"malformed {REG}: no gpu found on node"),
        ({REG: "not json"}, f"malformed {REG}: "),
        (
            {REG: '[{"id":"GPU-0","count":"ten"}]'},
            f"malformed {REG}: json: cannot unmarshal string into Go struct field",
        ),
        (
            {REG: "GPU-0,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"},
            f"malformed {REG}: pre-2.8 colon-separated format; HAMi 2.8+ reads JSON",
        ),
        ({REG: orjson.dumps([gpu("GPU-0")]).decode(), SCORE: "not-valid-json"}, f"malformed {SCORE}: "),
    ],
)
def test_malformed_inventory_is_unresolvable(client, annotations, expected):
    answer = filter_(client, extender_args(pod(), [node("bad", annotations=annotations), a10("ok")]))
    assert answer["FailedAndUnresolvableNodes"]["bad"].startswith(expected)
    assert names(answer) == ["ok"]


def test_pod_without_hami_request_fits_every_node(client):
    plain = pod(gpu_count=None)
    nodes = [a10("n1"), node("cold"), node("bad", annotations={REG: "[]"})]
    answer = filter_(client, extender_args(plain, nodes))
    assert answer["Nodes"]["items"] == nodes
    assert answer["FailedNodes"] == {} and answer["FailedAndUnresolvableNodes"] == {}


def test_bad_weights_annotation_is_a_pod_error(client):
    p = pod("train-0", annotations={"hami.io/device-scoring-weights": "slot=1,core=1"})
    answer = filter_(client, extender_args(p, [a10("n1")]))
    assert answer["Error"] == (
        'calcScore failed invalid hami.io/device-scoring-weights annotation "slot=1,core=1": '
        "expected slot, core, and memory weights for pod train-0"
    )
    assert answer["Nodes"] is None
    # HAMi reads the weights only for pods that request a device
    plain = pod("plain", gpu_count=None, annotations={"hami.io/device-scoring-weights": "nonsense"})
    assert names(filter_(client, extender_args(plain, [a10("n1")]))) == ["n1"]


def test_many_nodes_mixed_verdicts_in_input_order_echoed_unchanged(client):
    nodes = []
    for i in range(50):
        kind = i % 5
        name = f"node-{i:02d}"
        if kind == 0:
            n = a10(name, devmem=8000)  # too small for 10000 MiB
        elif kind == 1:
            n = node(name)  # unregistered
        elif kind == 2:
            n = node(name, annotations={REG: "[]"})
        else:
            n = a10(name, n=1 + i % 3)
            n["metadata"]["labels"]["topology.kubernetes.io/zone"] = f"z{i % 3}"
            n["spec"]["taints"] = [{"key": "gpu", "value": str(i), "effect": "NoSchedule"}]
            n["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "ünïcødé"}]
        nodes.append(n)
    answer = filter_(client, extender_args(pod(gpumem=10000, gpucores=10), nodes))
    fitting = [n for i, n in enumerate(nodes) if i % 5 in (3, 4)]
    assert answer["Nodes"]["items"] == fitting  # parsed equality: echoed as sent, in input order
    assert answer["FailedNodes"] == {f"node-{i:02d}": "2/2 CardInsufficientMemory" for i in range(0, 50, 5)}
    unresolvable = answer["FailedAndUnresolvableNodes"]
    assert {k for k, v in unresolvable.items() if v == "node unregistered"} == {
        f"node-{i:02d}" for i in range(1, 50, 5)
    }
    assert len(unresolvable) == 20 and answer["NodeNames"] is None


def test_configured_resource_names_and_policies(client, settings):
    """The #2046 tests' config: hami.io/gpu, hami.io/gpumem, hami.io/gpucores (settings.HAMI)."""
    hami = {**settings.HAMI, "NVIDIA": dict(settings.HAMI["NVIDIA"])}
    hami["NVIDIA"].update(
        resourceCountName="hami.io/gpu",
        resourceMemoryName="hami.io/gpumem",
        resourceMemoryPercentageName="hami.io/gpumem-percentage",
        resourceCoreName="hami.io/gpucores",
    )
    settings.HAMI = hami
    limits = {"hami.io/gpu": "1", "hami.io/gpucores": "20", "hami.io/gpumem": "16384"}
    p = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}}
    template = node("template-node-unfit", [gpu("GPU-0", devmem=8192, type="NVIDIA-A100")])
    answer = filter_(client, extender_args(p, [template]))
    assert answer["FailedNodes"] == {"template-node-unfit": "1/1 CardInsufficientMemory"}
    # the default nvidia.com/* names are no longer HAMi requests: such a pod fits everywhere
    answer = filter_(client, extender_args(pod(gpumem=16384), [template]))
    assert names(answer) == ["template-node-unfit"]


def test_answers_are_independent_between_calls(client):
    body = extender_args(pod(gpumem=20000), [a10("n1")])
    first = filter_(client, body)
    second = filter_(client, body)
    assert first == second and names(first) == ["n1"]


def test_a_good_answer_is_recorded_once_per_call(client):
    filter_(client, extender_args(pod(gpumem=100), [a10("n1")]))
    assert decisions() == 1


# -- prioritize ---------------------------------------------------------------------------------------------


def prioritize(client, body):
    response = post(client, "/prioritize-simulation", body)
    assert response.status_code == 200
    return orjson.loads(response.content)


def one_card(name, devmem=8000, **kw):
    return node(name, [gpu(f"{name}-0", devmem=devmem, **kw)])


def test_prioritize_lists_fitting_nodes_in_input_order(client):
    nodes = [one_card("b"), node("cold"), one_card("small", devmem=10), one_card("a")]
    got = prioritize(client, extender_args(pod(gpumem=4000, gpucores=50), nodes))
    assert [h["Host"] for h in got] == ["b", "a"]
    assert all(set(h) == {"Host", "Score"} for h in got)


def test_prioritize_binpack_and_spread_scores(client):
    # after placing: 10 x (1/10 + 50/100 + 4000/8000) = 11 -> 11/3 = 3.67 -> 4 (binpack), 6 (spread)
    body = extender_args(pod(gpumem=4000, gpucores=50), [one_card("n1")])
    assert prioritize(client, body) == [{"Host": "n1", "Score": 4}]
    spread = pod(gpumem=4000, gpucores=50, annotations={"hami.io/node-scheduler-policy": "spread"})
    assert prioritize(client, extender_args(spread, [one_card("n1")])) == [{"Host": "n1", "Score": 6}]
    # HAMi reads the annotation verbatim: anything but "spread" is binpack
    odd = pod(gpumem=4000, gpucores=50, annotations={"hami.io/node-scheduler-policy": " spread"})
    assert prioritize(client, extender_args(odd, [one_card("n1")])) == [{"Host": "n1", "Score": 4}]


def test_prioritize_rounds_half_up(client):
    # 10 x (1/10 + 25/100 + 3200/8000) = 7.5 -> 7.5/3 = 2.5 -> 3 (not banker's 2)
    body = extender_args(pod(gpumem=3200, gpucores=25), [one_card("n1")])
    assert prioritize(client, body) == [{"Host": "n1", "Score": 3}]


def test_prioritize_pod_without_request_scores_every_node(client):
    nodes = [one_card("n1"), node("cold")]
    assert prioritize(client, extender_args(pod(gpu_count=None), nodes)) == [
        {"Host": "n1", "Score": 0},
        {"Host": "cold", "Score": 0},
    ]
    spread = pod(gpu_count=None, annotations={"hami.io/node-scheduler-policy": "spread"})
    assert prioritize(client, extender_args(spread, nodes)) == [
        {"Host": "n1", "Score": 10},
        {"Host": "cold", "Score": 10},
    ]


@pytest.mark.parametrize(
    "body",
    [b"{", b"[]", {"Nodes": GOOD_NODES}, {"Pod": {}, "NodeNames": ["n1"]}, {"Pod": {}}],
)
def test_prioritize_errors_answer_an_empty_list(client, body):
    assert prioritize(client, body) == []


def test_prioritize_bad_weights_answer_an_empty_list(client):
    p = pod(annotations={"hami.io/device-scoring-weights": "slot=-1,core=1,memory=1"})
    assert prioritize(client, extender_args(p, [one_card("n1")])) == []


# -- health -----------------------------------------------------------------------------------------------


def test_healthz_and_readyz(client):
    assert client.get("/healthz").status_code == 200
    assert orjson.loads(client.get("/healthz").content)["status"] == "ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200 and orjson.loads(ready.content)["status"] == "ready"


def test_extender_verbs_are_in_the_openapi_schema(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = orjson.loads(response.content)["paths"]
    assert "/filter-simulation" in paths and "/prioritize-simulation" in paths


# -- property: every node is answered exactly once, and nothing is a 500 ------------------------------------

_device = st.fixed_dictionaries(
    {
        "count": st.integers(0, 12),
        "devmem": st.sampled_from([0, 1024, 11441, 23028, 81920]),
        "devcore": st.sampled_from([0, 100, 200]),
        "health": st.booleans(),
        "numa": st.integers(0, 1),
        "type": st.sampled_from(["NVIDIA A10", "NVIDIA-Tesla T4", "Tesla K80", "AMD MI300"]),
    }
)
_node_kind = st.one_of(
    st.lists(_device, min_size=1, max_size=4),
    st.sampled_from(["cold", "[]", "garbage", "legacy"]),
)
_pod_spec = st.fixed_dictionaries(
    {
        "gpu_count": st.sampled_from([None, 1, 2, 3, "0", "500m"]),
        "gpumem": st.sampled_from([None, 100, 12000, "16Gi", "1e3"]),
        "gpucores": st.sampled_from([None, 0, 30, 100, 150]),
        "mem_pct": st.sampled_from([None, 0, 50, 101]),
    }
)
_pod_annotations = st.dictionaries(
    st.sampled_from(
        [
            "hami.io/gpu-scheduler-policy",
            "hami.io/node-scheduler-policy",
            "nvidia.com/numa-bind",
            "nvidia.com/use-gputype",
            "nvidia.com/vgpu-mode",
        ]
    ),
    st.sampled_from(
        ["binpack", "spread", "topology-aware,binpack", "mutex", "numa", "true", "A10", "mig", ""]
    ),
    max_size=3,
)


def _build_node(i, kind):
    name = f"n{i}"
    if kind == "cold":
        return node(name)
    if kind == "[]":
        return node(name, annotations={REG: "[]"})
    if kind == "garbage":
        return node(name, annotations={REG: "{oops"})
    if kind == "legacy":
        return node(name, annotations={REG: "GPU-0,10,1024,100,NVIDIA A10,0,true:"})
    return node(name, [gpu(f"{name}-g{j}", index=j, **d) for j, d in enumerate(kind)])


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(_node_kind, min_size=1, max_size=6), spec=_pod_spec, annos=_pod_annotations)
def test_every_node_answered_exactly_once(client, kinds, spec, annos):
    nodes = [_build_node(i, k) for i, k in enumerate(kinds)]
    answer = filter_(client, extender_args(pod(annotations=annos, **spec), nodes))
    assert answer["Error"] == ""
    fitting = names(answer)
    answered = fitting + list(answer["FailedNodes"]) + list(answer["FailedAndUnresolvableNodes"])
    assert sorted(answered) == sorted(n["metadata"]["name"] for n in nodes)
    assert fitting == [
        n["metadata"]["name"] for n in nodes if n["metadata"]["name"] in fitting
    ]  # input order
    scores = prioritize(client, extender_args(pod(annotations=annos, **spec), nodes))
    assert [s["Host"] for s in scores] == fitting
    assert all(0 <= s["Score"] <= 10 for s in scores)


_NODE_A = {"metadata": {"name": "a", "annotations": {"x": '"<fitting nodes>"'}}}
_NODE_B = {"metadata": {"name": "b"}, "status": {"capacity": {"nvidia.com/gpu": "8"}}}


@pytest.mark.parametrize(
    ("fitting", "failed", "unresolvable", "error", "spliced"),
    [
        ([_NODE_A, _NODE_B], {}, {}, "", True),  # every node fits: the request's own encoding, as is
        ([_NODE_A, _NODE_B], {}, {}, "", False),
        ([_NODE_B], {"a": "1/8 CardInsufficientMemory"}, {}, "", False),
        (None, {}, {"b": "no gpu found on node"}, "", False),
        ([], {}, {}, 'malformed extender args: "<fitting nodes>"', False),
    ],
    ids=["spliced", "encoded", "some-fit", "none-fit", "error"],
)
def test_filter_result_is_what_go_decodes(fitting, failed, unresolvable, error, spliced):
    """The answer's bytes are the plain encoding of ExtenderFilterResult, however its nodes were
    encoded (a node or an error holding the splice placeholder changes nothing)."""
    from hami_sim.project.jsonlimits import encode_if_shallow
    from simulations.extender import filter_result

    nodes_json = [encode_if_shallow(fitting)] if spliced else None
    out = filter_result(fitting, failed, unresolvable, error, fitting_json=nodes_json)
    expected = {
        "Nodes": {"metadata": {}, "items": fitting} if fitting else None,
        "NodeNames": None,
        "FailedNodes": failed,
        "FailedAndUnresolvableNodes": unresolvable,
        "Error": error,
    }
    assert out == orjson.dumps(expected)


@pytest.mark.parametrize(
    ("template", "verbatim_when_split"),
    [
        # Go's field names as sent: each fitting node is echoed as the request's own bytes
        (b'{"Pod": %s, "Nodes": {"metadata": {}, "items": [%s, %s]}, "NodeNames": null}', True),
        # a case variant that our case-insensitive reading picks: encoded again (msgspec reads exact names)
        (b'{"pod": %s, "nodes": {"items": [%s, %s]}}', False),
        (b'{"Pod": %s, "Nodes": {"Items": [%s, %s]}}', False),
    ],
    ids=["go-names", "lower-case", "items-variant"],
)
def test_fitting_nodes_are_echoed_as_sent_or_encoded_again(client, echo_path, template, verbatim_when_split):
    """Both echoes decode to the nodes that fit, in order; only the split path keeps their bytes
    (spacing, escapes, key order) and needs no depth check of its own."""
    first = b'{ "metadata" : { "name" : "n\\u0031", "annotations" : %s } }' % orjson.dumps(
        a10("n1")["metadata"]["annotations"]
    )
    second = orjson.dumps(a10("n2"))
    body = template % (orjson.dumps(pod(gpumem=1000)), first, second)
    response = post(client, "/filter-simulation", body)
    answer = orjson.loads(response.content)
    assert answer["Error"] == "" and names(answer) == ["n1", "n2"]
    assert answer["Nodes"]["items"] == [orjson.loads(first), orjson.loads(second)]
    assert (first in response.content) == (echo_path == "split" and verbatim_when_split)

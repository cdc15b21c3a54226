"""The hand-made bad-input corpus and the helpers the reliability tests share.

Each ``Case`` is one request a confused, buggy or hostile client could send. ``FILTER_ERRORS`` must be
refused with the extender's own error shape; ``FILTER_DEFINED`` are hostile but decodable requests with
one correct answer (HAMi's), checked verdict by verdict; ``SESSION_ERRORS`` are refused by the session
API with a 4xx ``{"detail": ...}``. The corpus is data, so it is easy to extend.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
from django.apps import apps

from tests.factories import gpu, node, pod

__all__ = [
    "Case",
    "FILTER_ERRORS",
    "FILTER_DEFINED",
    "DEEP_FITTING_NODE",
    "SESSION_ERRORS",
    "SESSION_NODE",
    "GOOD_NODE",
    "GOOD_POD",
    "good_filter_body",
    "row_counts",
    "deep",
]

JSON = "application/json"
GOOD_NODE = node("tmpl-good", [gpu("GPU-good-0"), gpu("GPU-good-1", index=1)])
GOOD_POD = pod("good", gpu_count=1, gpumem=1000, gpucores=10, uid="uid-good")


def good_filter_body() -> bytes:
    return orjson.dumps({"Pod": GOOD_POD, "Nodes": {"metadata": {}, "items": [GOOD_NODE]}, "NodeNames": None})


def deep(depth: int, leaf: object = 1) -> bytes:
    """``depth`` nested arrays around ``leaf``, built as bytes (json.dumps would recurse)."""
    return b"[" * depth + orjson.dumps(leaf) + b"]" * depth


def row_counts() -> dict[str, int]:
    """Rows per table of our apps (plus Celery beat and auth): the stored state a bad request must not touch.

    One query for all tables: the fuzzer calls this twice per generated request.
    """
    from django.db import connection

    labels = {"profiles", "simulations", "decisions", "dashboard", "django_celery_beat", "auth", "authtoken"}
    tables = sorted(
        {
            model._meta.db_table
            for model in apps.get_models(include_auto_created=True)
            if model._meta.app_label in labels and not model._meta.proxy and model._meta.managed
        }
    )
    quote = connection.ops.quote_name
    sql = "SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {quote(t)})" for t in tables)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return dict(zip(tables, cursor.fetchone(), strict=True))


@dataclass(frozen=True)
class Case:
    id: str
    body: bytes
    expect: str = ""  # a fragment the error message must contain (case-insensitive)
    content_type: str = JSON
    statuses: tuple[int, ...] = (200, 400)
    extra: dict = field(default_factory=dict)


def _args(
    pod_obj: object = None, nodes: object = None, *, names: object = None, raw: dict | None = None
) -> bytes:
    body = raw if raw is not None else {"Pod": pod_obj, "Nodes": nodes, "NodeNames": names}
    return orjson.dumps(body)


def _list(*items: object) -> dict:
    return {"metadata": {}, "items": list(items)}


GOOD_LIST = _list(GOOD_NODE)
_POD_OK = GOOD_POD


def _pod_with(**changes: object) -> dict:
    p = orjson.loads(orjson.dumps(GOOD_POD))
    for path, value in changes.items():
        target = p
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        last = keys[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return p


def _limits(value: object) -> dict:
    return _pod_with(spec__containers__0__resources__limits={"nvidia.com/gpu": value})


_MALFORMED = "malformed extender args"

FILTER_ERRORS: list[Case] = [
    # -- the body is not a JSON object -------------------------------------------------------------------
    Case("empty-body", b"", _MALFORMED),
    Case("whitespace-body", b" \n\t ", _MALFORMED),
    Case("truncated-object", good_filter_body()[:40], _MALFORMED),
    Case("truncated-in-string", b'{"Pod": {"metadata": {"name": "p', _MALFORMED),
    Case("trailing-garbage", good_filter_body() + b" garbage", _MALFORMED),
    Case("top-level-array", b"[]", _MALFORMED),
    Case("top-level-string", b'"Pod"', _MALFORMED),
    Case("top-level-number", b"42", _MALFORMED),
    Case("top-level-null", b"null", _MALFORMED),
    Case("top-level-true", b"true", _MALFORMED),
    Case("invalid-utf8", b'{"Pod": {"metadata": {"name": "\xff\xfe"}}}', _MALFORMED),
    Case("utf16-encoded", good_filter_body().decode().encode("utf-16"), _MALFORMED),
    Case("nan-literal", b'{"Pod": NaN, "Nodes": null}', _MALFORMED),
    Case("infinity-literal", b'{"Pod": {}, "Nodes": {"items": [Infinity]}}', _MALFORMED),
    Case("number-overflows-double", b'{"Pod": {"x": 1e400}, "Nodes": {"items": []}}', _MALFORMED),
    Case("deeply-nested-pod", b'{"Pod": ' + deep(5000) + b', "Nodes": {"items": []}}', _MALFORMED),
    Case("deeply-nested-top-level", deep(100_000), _MALFORMED),
    Case("single-quoted", b"{'Pod': {}, 'Nodes': {'items': []}}", _MALFORMED),
    Case("json-with-comments", b'{"Pod": {} /* a pod */, "Nodes": {"items": []}}', _MALFORMED),
    Case(
        "form-urlencoded",
        b"Pod=%7B%7D&Nodes=%7B%7D",
        _MALFORMED,
        content_type="application/x-www-form-urlencoded",
    ),
    Case(
        "multipart",
        b'--b\r\nContent-Disposition: form-data; name="Pod"\r\n\r\n{}\r\n--b--\r\n',
        _MALFORMED,
        content_type="multipart/form-data; boundary=b",
    ),
    Case(
        "yaml-body",
        b"Pod:\n  metadata:\n    name: p\nNodes:\n  items: []\n",
        _MALFORMED,
        content_type="application/yaml",
    ),
    # -- top-level fields --------------------------------------------------------------------------------
    Case("empty-object", b"{}", "missing pod"),
    Case("pod-null", _args(None, GOOD_LIST), "missing pod"),
    Case("pod-array", _args([GOOD_POD], GOOD_LIST), "Pod must be an object"),
    Case("pod-string", _args("good", GOOD_LIST), "Pod must be an object"),
    Case("pod-number", _args(7, GOOD_LIST), "Pod must be an object"),
    Case("both-nodes-and-nodenames", _args(GOOD_POD, GOOD_LIST, names=["tmpl-good"]), "got NodeNames"),
    Case("nodenames-only", _args(GOOD_POD, None, names=["tmpl-good"]), "got NodeNames"),
    Case("nodenames-empty-list", _args(GOOD_POD, GOOD_LIST, names=[]), "got NodeNames"),
    Case("neither-nodes-nor-nodenames", _args(raw={"Pod": GOOD_POD}), "missing Nodes"),
    Case("nodes-null", _args(GOOD_POD, None), "missing Nodes"),
    Case("nodes-is-a-list", _args(GOOD_POD, [GOOD_NODE]), "NodeList"),
    Case("nodes-is-a-string", _args(GOOD_POD, "tmpl-good"), "NodeList"),
    Case("items-is-an-object", _args(GOOD_POD, {"items": {"tmpl-good": GOOD_NODE}}), "must be a list"),
    Case("items-is-a-string", _args(GOOD_POD, {"items": "tmpl-good"}), "must be a list"),
    Case("item-null", _args(GOOD_POD, _list(GOOD_NODE, None)), "items[1]"),
    Case("item-string", _args(GOOD_POD, _list("tmpl-good")), "items[0]"),
    Case("node-without-metadata", _args(GOOD_POD, _list({"spec": {}})), "metadata.name"),
    Case("node-metadata-is-a-list", _args(GOOD_POD, _list({"metadata": ["tmpl"]})), "metadata.name"),
    Case("node-name-missing", _args(GOOD_POD, _list({"metadata": {"labels": {}}})), "metadata.name"),
    Case("node-name-empty", _args(GOOD_POD, _list(node(""))), "metadata.name"),
    Case("node-name-number", _args(GOOD_POD, _list({"metadata": {"name": 17}})), "metadata.name"),
    Case(
        "duplicate-node-names",
        _args(GOOD_POD, _list(GOOD_NODE, node("tmpl-good", [gpu("GPU-x")]))),
        "duplicate node name",
    ),
    Case(
        "duplicate-unicode-node-names",
        _args(GOOD_POD, _list(node("tmpl-ü", [gpu("GPU-a")]), node("tmpl-ü", [gpu("GPU-b")]))),
        "duplicate node name",
    ),
    # Go decodes annotations into map[string]string: anything else fails the whole request
    Case(
        "node-annotations-list",
        _args(GOOD_POD, _list({"metadata": {"name": "tmpl-odd", "annotations": ["x"]}})),
        "annotations",
    ),
    Case(
        "node-annotation-value-number",
        _args(
            GOOD_POD,
            _list({"metadata": {"name": "tmpl-odd", "annotations": {"hami.io/node-nvidia-register": 5}}}),
        ),
        "annotations",
    ),
    # -- wrong types inside the pod --------------------------------------------------------------------
    Case("pod-metadata-list", _args(_pod_with(metadata=["good"]), GOOD_LIST), "pod.metadata"),
    Case("pod-name-number", _args(_pod_with(metadata__name=12), GOOD_LIST), "pod.metadata.name"),
    Case("pod-annotations-list", _args(_pod_with(metadata__annotations=["a=b"]), GOOD_LIST), "annotations"),
    Case(
        "pod-annotation-value-number",
        _args(_pod_with(metadata__annotations={"a": 1}), GOOD_LIST),
        "annotations",
    ),
    Case(
        "pod-owner-refs-object",
        _args(_pod_with(metadata__ownerReferences={"kind": "Job"}), GOOD_LIST),
        "ownerReferences",
    ),
    Case("pod-spec-string", _args(_pod_with(spec="containers"), GOOD_LIST), "pod.spec"),
    Case("containers-object", _args(_pod_with(spec__containers={"c": {}}), GOOD_LIST), "containers"),
    Case("container-string", _args(_pod_with(spec__containers=["busybox"]), GOOD_LIST), "containers[0]"),
    Case(
        "init-containers-string",
        _args(_pod_with(spec__initContainers="busybox"), GOOD_LIST),
        "initContainers",
    ),
    Case("resources-list", _args(_pod_with(spec__containers__0__resources=[]), GOOD_LIST), "resources"),
    Case(
        "limits-list",
        _args(_pod_with(spec__containers__0__resources={"limits": ["nvidia.com/gpu"]}), GOOD_LIST),
        "limits",
    ),
    Case("quantity-garbage", _args(_limits("lots"), GOOD_LIST), "nvidia.com/gpu"),
    Case("quantity-bool", _args(_limits(True), GOOD_LIST), "nvidia.com/gpu"),
    Case("quantity-object", _args(_limits({"value": 1}), GOOD_LIST), "nvidia.com/gpu"),
    Case("quantity-nan-string", _args(_limits("NaN"), GOOD_LIST), "nvidia.com/gpu"),
    Case("quantity-too-long", _args(_limits("1" * 200), GOOD_LIST), "nvidia.com/gpu"),
    Case(
        "bad-scoring-weights",
        _args(
            _pod_with(metadata__annotations={"hami.io/device-scoring-weights": "slot=1,core=x,memory=1"}),
            GOOD_LIST,
        ),
        "calcScore failed invalid hami.io/device-scoring-weights",
    ),
]


def _verdicts(answer: dict) -> dict[str, str]:
    out = {n["metadata"]["name"]: "fit" for n in (answer["Nodes"] or {}).get("items") or []}
    out.update({k: f"failed: {v}" for k, v in answer["FailedNodes"].items()})
    out.update({k: f"unresolvable: {v}" for k, v in (answer["FailedAndUnresolvableNodes"] or {}).items()})
    return out


UNICODE_NAMES = ["tmpl-ü", "節點-α", "عقدة", "node-🚀", "zero\u200bwidth", "a" * 253]
TEN_MB = "x" * (10 * 1024 * 1024)

# (case, {node name: "fit" | "failed: <reason>" | "unresolvable: <reason fragment>"})
FILTER_DEFINED: list[tuple[Case, dict[str, str]]] = [
    # HAMi reads a count it cannot use (negative, fractional, beyond int64) as "no request": fits all.
    (Case("negative-gpu-count", _args(_limits("-1"), GOOD_LIST)), {"tmpl-good": "fit"}),
    (Case("negative-gpumem", _args(pod(gpumem="-1024"), GOOD_LIST)), {"tmpl-good": "fit"}),
    (Case("huge-gpu-count", _args(_limits("9" * 40), GOOD_LIST)), {"tmpl-good": "fit"}),
    (
        Case("huge-json-integer", _args(_limits(12345), GOOD_LIST).replace(b"12345", str(2**70).encode())),
        {"tmpl-good": "fit"},
    ),
    (Case("fractional-gpu-count", _args(_limits("500m"), GOOD_LIST)), {"tmpl-good": "fit"}),
    # a decodable pod asking for more than any device has: HAMi's detailed reason
    (Case("gpumem-beyond-int32", _args(pod(gpumem=str(2**40)), GOOD_LIST)), {"tmpl-good": "fit"}),
    (
        Case("gpu-count-1000", _args(pod(gpu_count=1000), GOOD_LIST)),
        {"tmpl-good": "failed: NodeInsufficientDevice"},
    ),
    (
        Case("gpumem-too-big", _args(pod(gpumem=10**6), GOOD_LIST)),
        {"tmpl-good": "failed: 2/2 CardInsufficientMemory"},
    ),
    # unicode everywhere: echoed back byte for byte
    (
        Case(
            "unicode-node-names",
            _args(
                pod(name="пoд-🚀"), _list(*[node(n, [gpu(f"GPU-{i}")]) for i, n in enumerate(UNICODE_NAMES)])
            ),
        ),
        dict.fromkeys(UNICODE_NAMES, "fit"),
    ),
    # registrations that are broken, hostile or huge: the node is unresolvable with a precise reason
    (
        Case(
            "ten-mb-annotation",
            _args(
                GOOD_POD,
                _list(GOOD_NODE, node("tmpl-huge", annotations={"hami.io/node-nvidia-register": TEN_MB})),
            ),
        ),
        {"tmpl-good": "fit", "tmpl-huge": "unresolvable: malformed hami.io/node-nvidia-register"},
    ),
    (
        Case(
            "empty-registration",
            _args(GOOD_POD, _list(node("tmpl-empty", annotations={"hami.io/node-nvidia-register": "[]"}))),
        ),
        {"tmpl-empty": "unresolvable: malformed hami.io/node-nvidia-register: no gpu found on node"},
    ),
    (
        Case(
            "legacy-registration",
            _args(
                GOOD_POD,
                _list(
                    node(
                        "tmpl-old",
                        annotations={
                            "hami.io/node-nvidia-register": "GPU-0,10,23028,100,NVIDIA A10,0,true,0,hami-core:"
                        },
                    )
                ),
            ),
        ),
        {"tmpl-old": "unresolvable: pre-2.8"},
    ),
    (
        Case(
            "registration-int32-overflow",
            _args(GOOD_POD, _list(node("tmpl-big", [gpu("GPU-0", devmem=2**31)]))),
        ),
        {"tmpl-big": "unresolvable: of type int32"},
    ),
    (
        Case(
            "registration-negative-memory",
            _args(GOOD_POD, _list(node("tmpl-neg", [gpu("GPU-0", devmem=-5)]))),
        ),
        {"tmpl-neg": "failed: 1/1 CardInsufficientMemory"},
    ),
    (
        Case(
            "registration-deeply-nested",
            _args(
                GOOD_POD,
                _list(node("tmpl-deep", annotations={"hami.io/node-nvidia-register": deep(3000).decode()})),
            ),
        ),
        {"tmpl-deep": "unresolvable: malformed hami.io/node-nvidia-register"},
    ),
    (
        Case("no-annotation", _args(GOOD_POD, _list(node("tmpl-cold")))),
        {"tmpl-cold": "unresolvable: node unregistered"},
    ),
    # hostile shapes around what we read, and the Go client's own variations
    (
        Case("deep-json-in-unread-field", good_filter_body()[:-1] + b', "Extra": ' + deep(900) + b"}"),
        {"tmpl-good": "fit"},
    ),
    (
        Case("lowercase-keys", orjson.dumps({"pod": GOOD_POD, "nodes": GOOD_LIST, "nodenames": None})),
        {"tmpl-good": "fit"},
    ),
    (Case("empty-items", _args(GOOD_POD, _list())), {}),
    # HAMi's route decodes the body whatever the Content-Type says; so do we (CA always sends JSON)
    (Case("json-as-text-plain", good_filter_body(), content_type="text/plain"), {"tmpl-good": "fit"}),
]


def _session_pod(**kw: object) -> dict:
    return pod("sp", gpu_count=1, gpumem=1000, uid="uid-sp", **kw)


SESSION_NODE = node("tmpl-s", [gpu("GPU-s0"), gpu("GPU-s1", index=1)])

# POST /api/v1/sessions/<id>/placements unless ``extra["path"]`` says otherwise.
SESSION_ERRORS: list[Case] = [
    Case("s-empty-body", b"", "JSON object", statuses=(400,)),
    Case("s-truncated", b'{"pod": {"metadata": ', "malformed JSON", statuses=(400,)),
    Case("s-top-level-array", b"[]", "JSON object", statuses=(400,)),
    Case("s-nan", b'{"pod": NaN}', "malformed JSON", statuses=(400,)),
    Case("s-invalid-utf8", b'{"pod": "\xff"}', "malformed JSON", statuses=(400,)),
    Case("s-deeply-nested", b'{"pod": ' + deep(5000) + b"}", "malformed JSON", statuses=(400,)),
    Case(
        "s-form-encoded",
        b"pod=x&node=y",
        "",
        content_type="application/x-www-form-urlencoded",
        statuses=(400, 415),
    ),
    Case("s-pod-missing", orjson.dumps({"node": SESSION_NODE}), "pod", statuses=(400,)),
    Case("s-pod-string", orjson.dumps({"pod": "sp", "node": SESSION_NODE}), "pod", statuses=(400,)),
    Case("s-node-and-nodename-missing", orjson.dumps({"pod": _session_pod()}), "node", statuses=(400,)),
    Case("s-node-string", orjson.dumps({"pod": _session_pod(), "node": "tmpl-s"}), "node", statuses=(400,)),
    Case(
        "s-node-without-name",
        orjson.dumps({"pod": _session_pod(), "node": {"metadata": {}}}),
        "metadata.name",
        statuses=(400,),
    ),
    Case(
        "s-unknown-nodename",
        orjson.dumps({"pod": _session_pod(), "nodeName": "never-seen"}),
        "nodeName",
        statuses=(400,),
    ),
    Case(
        "s-nodename-mismatch",
        orjson.dumps({"pod": _session_pod(), "node": SESSION_NODE, "nodeName": "other"}),
        "differs",
        statuses=(400,),
    ),
    Case(
        "s-quantity-garbage",
        orjson.dumps({"pod": pod("sp", gpu_count="lots", uid="uid-sp"), "node": SESSION_NODE}),
        "malformed pod",
        statuses=(400,),
    ),
    Case(
        "s-containers-wrong-type",
        orjson.dumps(
            {
                "pod": {"metadata": {"name": "sp", "uid": "u"}, "spec": {"containers": {}}},
                "node": SESSION_NODE,
            }
        ),
        "malformed pod",
        statuses=(400,),
    ),
    Case(
        "s-does-not-fit",
        orjson.dumps({"pod": pod("sp", gpu_count=1, gpumem=10**6, uid="uid-big"), "node": SESSION_NODE}),
        "does not fit",
        statuses=(422,),
    ),
    Case(
        "s-unregistered-node",
        orjson.dumps({"pod": _session_pod(), "node": node("tmpl-cold")}),
        "does not fit",
        statuses=(422,),
    ),
    Case(
        "s-bad-weights",
        orjson.dumps(
            {
                "pod": _session_pod(annotations={"hami.io/device-scoring-weights": "slot=-1"}),
                "node": SESSION_NODE,
            }
        ),
        "does not fit",
        statuses=(422,),
    ),
    Case(
        "s-ten-mb-annotation",
        orjson.dumps(
            {
                "pod": _session_pod(),
                "node": node("tmpl-huge", annotations={"hami.io/node-nvidia-register": TEN_MB}),
            }
        ),
        "does not fit",
        statuses=(422,),
    ),
    Case(
        "s-negative-devmem-node",
        orjson.dumps({"pod": _session_pod(), "node": node("tmpl-neg", [gpu("GPU-n", devmem=-5)])}),
        "does not fit",
        statuses=(422,),
    ),
    Case(
        "s-if-match-garbage",
        orjson.dumps({"pod": _session_pod(), "node": SESSION_NODE}),
        "If-Match",
        statuses=(400,),
        extra={"headers": {"HTTP_IF_MATCH": "abc"}},
    ),
    Case(
        "s-if-match-stale",
        orjson.dumps({"pod": _session_pod(), "node": SESSION_NODE}),
        "",
        statuses=(412,),
        extra={"headers": {"HTTP_IF_MATCH": "99"}},
    ),
    Case(
        "s-unknown-session",
        orjson.dumps({"pod": _session_pod(), "node": SESSION_NODE}),
        "unknown or expired",
        statuses=(404,),
        extra={"path": "/api/v1/sessions/does-not-exist/placements"},
    ),
    # session creation
    Case(
        "s-create-negative-ttl",
        orjson.dumps({"ttlSeconds": -5}),
        "ttlSeconds",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case(
        "s-create-huge-ttl",
        b'{"ttlSeconds": 1000000000000000000000000000000}',
        "ttlSeconds",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case(
        "s-create-ttl-string",
        orjson.dumps({"ttlSeconds": "900"}),
        "ttlSeconds",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case(
        "s-create-ttl-float",
        orjson.dumps({"ttlSeconds": 1.5}),
        "ttlSeconds",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case(
        "s-create-ttl-bool",
        orjson.dumps({"ttlSeconds": True}),
        "ttlSeconds",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case(
        "s-create-name-number",
        orjson.dumps({"name": 5}),
        "name",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case(
        "s-create-name-huge",
        orjson.dumps({"name": "n" * 10_000}),
        "name",
        statuses=(400,),
        extra={"path": "/api/v1/sessions"},
    ),
    Case("s-create-array", b"[1, 2]", "JSON object", statuses=(400,), extra={"path": "/api/v1/sessions"}),
    # checkpoints
    Case(
        "s-revert-without-fork",
        b"",
        "checkpoint",
        statuses=(409,),
        extra={"path": "/api/v1/sessions/{id}/revert"},
    ),
    Case(
        "s-commit-without-fork",
        b"",
        "checkpoint",
        statuses=(409,),
        extra={"path": "/api/v1/sessions/{id}/commit"},
    ),
    Case(
        "s-remove-unplaced-pod",
        b"",
        "not placed",
        statuses=(404,),
        extra={"path": "/api/v1/sessions/{id}/placements/uid-nobody", "method": "delete"},
    ),
]


# -- hostile requests against the whole HTTP surface --------------------------------------------------
#
# Each ``Probe`` is one hostile request (``item`` numbers the weakness it probes, in its test id), sent as
# ``auth``: "anon" (no credentials), "viewer" (logged in, no model permissions), "operator" (in the
# ``operators`` group). ``statuses`` are the acceptable answers (never a 5xx); ``expect`` is a fragment
# the answer must contain. tests/reliability/test_hardening.py replays them through Django's test
# client; test_gunicorn_corpus.py replays every case of this file against gunicorn.


@dataclass(frozen=True)
class Probe:
    id: str
    item: int
    method: str
    path: str
    body: bytes | dict = b""
    statuses: tuple[int, ...] = (400,)
    expect: str = ""
    auth: str = "operator"
    content_type: str = JSON


def _alias_bomb(levels: int = 9, fan: int = 10) -> str:
    """``levels`` anchors, each a list of ``fan`` aliases of the previous one: fan**levels leaves."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]")
    return "kind: Pod\nspec: {containers: []}\n" + "\n".join(lines) + "\n"


def _deep_yaml(depth: int) -> str:
    return "kind: Pod\nspec: {containers: []}\nx: " + "[" * depth + "1" + "]" * depth + "\n"


def _what_if(pod_text: str) -> dict:
    return {"pod": pod_text, "count": "1", "groups": ["gpu-a10"], "expander": "least-waste"}


def _group(**capacity: str) -> bytes:
    return orjson.dumps({"name": "probe-group", "capacity": {"cpu": "8", **capacity}})


HARDENING: list[Probe] = [
    # YAML alias bombs are refused before they expand
    Probe("what-if-alias-bomb", 6, "POST", "/what-if/", _what_if(_alias_bomb()), expect="aliases"),
    Probe("what-if-merge-key-alias", 6, "POST", "/what-if/",
          _what_if("base: &b {name: c}\nkind: Pod\nspec:\n  containers: [{<<: *b}]\n"), expect="aliases"),
    # deep YAML nesting is a 400, not a RecursionError
    Probe("what-if-yaml-900-deep", 5, "POST", "/what-if/", _what_if(_deep_yaml(900)), expect="nested deeper"),
    # capacities must be Kubernetes quantities, non-negative, within int64
    Probe("group-capacity-1e309", 11, "POST", "/api/v1/node-groups/", _group(memory="1e309"),
          expect="not a Kubernetes quantity"),
    Probe("group-capacity-negative", 11, "POST", "/api/v1/node-groups/", _group(memory="-1Gi"),
          expect="negative"),
    Probe("group-capacity-beyond-int64", 11, "POST", "/api/v1/node-groups/", _group(memory="9Ei"),
          expect="int64"),
    Probe("group-capacity-garbage", 11, "POST", "/api/v1/node-groups/", _group(pods="lots"),
          expect="not a Kubernetes quantity"),
]  # fmt: skip


def _estimate(groups: list[dict], *, count: int = 1, expander: object = "least-waste") -> bytes:
    pending = {"pod": pod("est", gpu_count=1, gpumem=1000, uid="uid-est"), "count": count}
    return orjson.dumps({"pods": [pending], "nodeGroups": groups, "expander": expander})


def _inline_group(name: str) -> dict:
    return {"name": name, "template": node(f"template-node-for-{name[:40]}", [gpu(f"GPU-{name[:20]}")])}


_REDOS_NAMES = ["a" * 28 + "!", "a" * 27 + "!"]
HARDENING += [
    # a catastrophic-backtracking priority regex against names the caller chooses: RE2 is linear
    Probe("estimate-redos-priority", 1, "POST", "/api/v1/estimate",
          _estimate([_inline_group(n) for n in _REDOS_NAMES],
                    expander={"name": "priority,least-waste", "priorities": {"10": ["(a+)+$"]}}),
          statuses=(200,), expect="options"),
    Probe("estimate-backreference-refused", 1, "POST", "/api/v1/estimate",
          _estimate([_inline_group("g1")], expander={"name": "priority", "priorities": {"1": ["(a)\\1"]}}),
          expect="RE2"),
    Probe("estimate-huge-pattern-refused", 1, "POST", "/api/v1/estimate",
          _estimate([_inline_group("g1")], expander={"name": "priority", "priorities": {"1": ["a" * 5000]}}),
          expect="characters"),
    # 100,000 pods x 100 inline groups is refused before any packing
    Probe("estimate-over-work-budget", 2, "POST", "/api/v1/estimate",
          _estimate([_inline_group(f"g{i}") for i in range(100)], count=100_000), expect="work budget"),
]  # fmt: skip


def _deep_node(depth: int) -> bytes:
    """A node that fits, with ``depth`` levels of nesting in its spec (a fitting node is echoed).
    Built as bytes: orjson itself cannot write more than 254 levels."""
    return orjson.dumps(GOOD_NODE)[:-1] + b', "spec": {"x": ' + deep(depth) + b"}}"


def _filter_bytes(pod_json: bytes, node_json: bytes) -> bytes:
    return b'{"Pod": ' + pod_json + b', "Nodes": {"metadata": {}, "items": [' + node_json + b"]}}"


#: A fitting node nested 600 deep. HAMi (Go reads 10,000 levels) answers it like any other,
#: and so does the extender, which echoes each node as the request's own bytes; only the pure-Python
#: path (``simulations.extender.SPLIT_NODES`` off), which encodes the nodes again and orjson writes at
#: most 254 levels, refuses it where it is parsed ("nested deeper")
DEEP_FITTING_NODE = Case(
    "fitting-node-spec-600-deep", _filter_bytes(orjson.dumps(GOOD_POD), _deep_node(600)), "nested deeper"
)
FILTER_DEFINED += [(DEEP_FITTING_NODE, {"tmpl-good": "fit"})]
# a pod deeper than orjson can write back (254) is refused where it is parsed
FILTER_ERRORS += [
    Case(
        "pod-spec-600-deep",
        _filter_bytes(orjson.dumps(GOOD_POD)[:-1] + b', "x": ' + deep(600) + b"}", orjson.dumps(GOOD_NODE)),
        "nested deeper",
    ),
]
SESSION_ERRORS += [
    Case("s-node-600-deep", b'{"pod": ' + orjson.dumps(_session_pod()) + b', "node": ' + _deep_node(600) + b"}",
         "nested deeper", statuses=(400,)),
]  # fmt: skip
HARDENING += [
    Probe("node-groups-json-1000-deep", 5, "POST", "/api/v1/node-groups/",
          b'{"name": "deep", "labels": ' + deep(1000) + b"}", expect="nested deeper"),
    Probe("device-profiles-json-1000-deep", 5, "POST", "/api/v1/device-profiles/",
          b'{"node_group": "gpu-a10", "devices": ' + deep(1000) + b"}", expect="nested deeper"),
    Probe("sessions-json-1000-deep", 5, "POST", "/api/v1/sessions", b'{"name": ' + deep(1000) + b"}",
          expect="nested deeper"),
]  # fmt: skip

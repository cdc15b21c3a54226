"""The kube-scheduler extender wire protocol (``k8s.io/kube-scheduler/extender/v1``).

The Go types have no JSON tags: the client sends ``Pod``, ``Nodes``, ``NodeNames`` and decodes our
answer case-insensitively. We accept any casing of the top-level keys (an exact match wins, as in
Go) and answer with the Go field names. A body is checked in Go's order (JSON, an object, the pod,
no ``NodeNames``, ``Nodes.items``, each node), and the first problem is the whole request's
``Error`` with HTTP 200 (docs/architecture.md, the extender verbs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from hami_sim.engine.sightings import SightedNodes, Sightings
from hami_sim.project.jsonlimits import MAX_DEPTH, encode_if_shallow, too_deep

try:  # optional (wheels for every platform we ship): without it, answers re-encode their nodes
    import msgspec
except ImportError:  # pragma: no cover - the pure-Python path is tested with SPLIT_NODES off
    msgspec = None

__all__ = [
    "ExtenderArgs",
    "ExtenderArgsError",
    "parse_extender_args",
    "FilterResult",
    "filter_result",
    "SPLIT_NODES",
]

_FIELDS = {"pod": "Pod", "nodes": "Nodes", "nodenames": "NodeNames"}

#: Echo fitting nodes as the request's own bytes (``ExtenderArgs.raw_nodes``, split by msgspec)
#: rather than encoding them again; False (or msgspec missing) is the pure-Python path.
SPLIT_NODES = msgspec is not None


class ExtenderArgsError(ValueError):
    """A request-level failure; ``str()`` is the text for ``ExtenderFilterResult.Error``, ``body``
    the request's body (its access line names the pod when the body does)."""

    body: bytes = b""


@dataclass(slots=True)
class ExtenderArgs:
    """The pod and the Node objects, and how to echo the nodes without encoding them again.

    ``raw_nodes[i]`` is ``Nodes.items[i]`` exactly as the request encoded it (the nodes' depth is
    then only what parsing allows: nothing encodes them again); otherwise ``nodes_json`` is
    ``Nodes.items`` encoded once, when the depth check made it. ``body`` is the request's body
    (an access line of a refusal names the pod as the body spells it). ``nodes`` is a list, or,
    for the usual body, ``SightedNodes``: a node is decoded when first read (the filter reads none
    it has seen before).
    """

    pod: dict
    nodes: Sequence[dict]
    nodes_json: bytes | memoryview | None = None
    raw_nodes: Sequence[Any] | None = None
    body: bytes = b""

    def echo(self, indices: Sequence[int] | None = None) -> list | None:
        """The JSON array of the nodes at ``indices`` (every node: None), as pieces to splice
        (``filter_result``); None when they must be encoded, or there are none."""
        if self.raw_nodes is not None:
            parts = self.raw_nodes if indices is None else [self.raw_nodes[i] for i in indices]
            if not parts:
                return None
            pieces: list = [b","] * (2 * len(parts) + 1)
            pieces[0], pieces[-1] = b"[", b"]"
            pieces[1::2] = parts
            return pieces
        if indices is None and self.nodes_json is not None:
            return [self.nodes_json]
        return None


if msgspec is not None:

    class _Items(msgspec.Struct):
        items: list[msgspec.Raw] = []

    class _Body(msgspec.Struct):
        Nodes: _Items | None = None

    _SPLITTER = msgspec.json.Decoder(_Body)

    _ABSENT = msgspec.Raw()

    class _ExactItems(msgspec.Struct, forbid_unknown_fields=True):
        items: list[msgspec.Raw] | None = None
        metadata: msgspec.Raw = _ABSENT
        kind: msgspec.Raw = _ABSENT
        apiVersion: msgspec.Raw = _ABSENT  # noqa: N815 (the wire's name)

    class _ExactBody(msgspec.Struct, forbid_unknown_fields=True):
        Pod: msgspec.Raw = _ABSENT  # noqa: N815
        Nodes: _ExactItems | None = None  # noqa: N815
        NodeNames: msgspec.Raw = _ABSENT  # noqa: N815

    _EXACT = msgspec.json.Decoder(_ExactBody)


def _split_items(body: bytes, data: Mapping, items: list) -> list | None:
    """``Nodes.items`` as the bytes of each node, when the body names both exactly (``Nodes``,
    ``items``: msgspec reads exact names, where our case-insensitive reading could pick a variant)
    and msgspec splits it into as many nodes as orjson read (duplicate keys: the last, for both)."""
    nodes = data.get("Nodes")
    if not SPLIT_NODES or not isinstance(nodes, dict) or "items" not in nodes:
        return None
    try:
        split = _SPLITTER.decode(body).Nodes
    except (msgspec.DecodeError, RecursionError):  # (ValidationError is a DecodeError)
        return None
    if split is None or len(split.items) != len(items):
        return None
    return split.items


def _pick(body: Mapping) -> dict[str, object]:
    picked: dict[str, object] = {}
    exact: set[str] = set()
    for key, value in body.items():
        lower = key.lower() if isinstance(key, str) else ""
        go_name = _FIELDS.get(lower)
        if go_name is None or lower in exact:
            continue
        if key == go_name:
            exact.add(lower)
        picked[lower] = value
    return picked


def parse_extender_args(
    body: bytes, *, verb: str = "filter-simulation", sightings: Sightings | None = None
) -> ExtenderArgs:
    """Go's ``ExtenderArgs`` from a request body: the pod and the full Node objects, checked as the
    Go decoder and the engine need them; any problem is one ``ExtenderArgsError`` for the caller.

    ``sightings`` (the simulator's): a node sent before byte for byte passed these checks then and
    is not decoded (``_parse_exact``); its sighting goes to the filter with it."""
    try:
        exact = _parse_exact(body, sightings) if SPLIT_NODES else None
        return exact if exact is not None else _parse(body, verb)
    except ExtenderArgsError as exc:
        exc.body = body
        raise


def _parse_exact(body: bytes, sightings: Sightings | None) -> ExtenderArgs | None:
    """The usual body (CA's: exactly ``Pod``, ``Nodes.items``, no ``NodeNames``, every node valid)
    split by msgspec into the pod and each node's bytes; only the pod and the nodes not sighted
    before are decoded. None for anything else (other key casings, a bad node, malformed JSON):
    ``_parse`` then reads it the long way and says what is wrong, as before."""
    try:
        split = _EXACT.decode(body)
        nodes = split.Nodes
        pod_raw = bytes(split.Pod)
        if (
            not pod_raw
            or bytes(split.NodeNames) not in (b"", b"null")
            or nodes is None
            or nodes.items is None
        ):
            return None
        pod = _checked_pod(orjson.loads(pod_raw))
        raw = [bytes(item) for item in nodes.items]
        sighted = [sightings.get(r) for r in raw] if sightings is not None else [None] * len(raw)
        decoded: list = [None] * len(raw)
        names = set()
        for i, sighting in enumerate(sighted):
            if sighting is None:
                decoded[i] = orjson.loads(raw[i])
                names.add(_checked_node(i, decoded[i], deep_check=False))
            else:
                names.add(sighting.name)
    except (msgspec.DecodeError, RecursionError, orjson.JSONDecodeError, ExtenderArgsError):
        return None
    if len(names) != len(raw):  # a duplicate name: said by ``_parse``
        return None
    return ExtenderArgs(pod, SightedNodes(raw, sighted, decoded), None, raw, body)


def _parse(body: bytes, verb: str) -> ExtenderArgs:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ExtenderArgsError(f"malformed extender args: {exc}") from None
    if not isinstance(data, dict):
        raise ExtenderArgsError(f"malformed extender args: expected a JSON object, got {type(data).__name__}")
    fields = _pick(data)
    pod = _checked_pod(fields.get("pod"))
    if fields.get("nodenames") is not None:
        raise ExtenderArgsError(f"{verb} needs full Node objects (nodeCacheCapable: false); got NodeNames")
    items = _node_items(fields.get("nodes"))
    # Echoed as sent, the nodes need no depth check (orjson read them, within its 1,024 levels);
    # encoded again, orjson writes at most 254: one C call checks every node's depth and encodes
    # them, and only a too-deep (or unencodable) list is walked node by node, for the first bad
    # node's index and name.
    raw_nodes = _split_items(body, data, items)
    nodes_json = encode_if_shallow(items, MAX_DEPTH + 1) if raw_nodes is None else None
    deep_check = raw_nodes is None and nodes_json is None
    seen: set[str] = set()
    for i, node in enumerate(items):
        name = _checked_node(i, node, deep_check=deep_check)
        if name in seen:
            raise ExtenderArgsError(f"malformed extender args: duplicate node name {name!r} in Nodes.items")
        seen.add(name)
    return ExtenderArgs(pod, items, nodes_json, raw_nodes, body)


def _checked_pod(pod: object) -> dict:
    if pod is None:
        raise ExtenderArgsError("extender args missing pod")
    if not isinstance(pod, dict):
        raise ExtenderArgsError("malformed extender args: Pod must be an object")
    if too_deep(pod):
        raise ExtenderArgsError(f"malformed extender args: Pod nested deeper than {MAX_DEPTH} levels")
    return pod


def _node_items(nodes: object) -> list:
    """``Nodes.items`` as Go's case-insensitive decoder finds it (an exact ``items`` key wins)."""
    if nodes is None:
        raise ExtenderArgsError("extender args missing Nodes")
    if not isinstance(nodes, dict):
        raise ExtenderArgsError("malformed extender args: Nodes must be a NodeList object")
    items = None
    for key, value in nodes.items():
        if isinstance(key, str) and key.lower() == "items" and (items is None or key == "items"):
            items = value
    if items is None:
        return []
    if not isinstance(items, list):
        raise ExtenderArgsError("malformed extender args: Nodes.items must be a list")
    return items


def _checked_node(i: int, node: object, deep_check: bool = True) -> str:
    """The node's name, once the node is an object Go would decode and we can echo back
    (``deep_check=False``: the caller knows no node nests deeper than ``MAX_DEPTH``)."""
    if not isinstance(node, dict):
        raise ExtenderArgsError(f"malformed extender args: Nodes.items[{i}] must be a Node object")
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise ExtenderArgsError(f"malformed extender args: Nodes.items[{i}] has no metadata.name")
    if deep_check and too_deep(node):  # a fitting node is echoed; orjson writes at most 254 levels
        raise ExtenderArgsError(
            f"malformed extender args: Nodes.items[{i}] ({name}) nested deeper than {MAX_DEPTH} levels"
        )
    # annotations are ``map[string]string``: Go rejects the whole request otherwise, and the engine
    # reads them as strings (null is Go's zero value: treated as absent)
    annotations = meta.get("annotations")  # type: ignore[union-attr]
    if annotations is None:
        return name
    if type(annotations) is not dict:
        raise ExtenderArgsError(
            f"malformed extender args: Nodes.items[{i}].metadata.annotations must be an object"
        )
    for key, value in annotations.items():
        if type(value) is not str and value is not None:
            raise ExtenderArgsError(
                f"malformed extender args: Nodes.items[{i}].metadata.annotations[{key}] must be a string"
            )
    return name


@dataclass(slots=True)
class FilterResult:
    """An ``ExtenderFilterResult`` before encoding (``ExtenderRenderer`` calls ``encode``):
    ``fitting`` the nodes to encode, or ``fitting_json`` the fitting nodes already encoded."""

    fitting: list[dict] | None = None
    failed: dict[str, str] = field(default_factory=dict)
    unresolvable: dict[str, str] = field(default_factory=dict)
    error: str = ""
    fitting_json: Sequence[Any] | None = None

    def encode(self) -> bytes:
        return filter_result(self.fitting, self.failed, self.unresolvable, self.error, self.fitting_json)


def filter_result(
    fitting: list[dict] | None,
    failed: dict[str, str],
    unresolvable: dict[str, str],
    error: str = "",
    fitting_json: Sequence[Any] | None = None,
) -> bytes:
    """``ExtenderFilterResult`` with Go field names; ``Nodes`` is null when nothing fits (as HAMi).

    ``fitting_json``: ``fitting`` already encoded, as pieces (``ExtenderArgs.echo``): spliced
    between the encoded fields around it, so a large answer is copied once.
    """
    nodes = (
        {"metadata": {}, "items": _SPLICED if fitting_json is not None else fitting}
        if fitting or fitting_json is not None
        else None
    )
    encoded = orjson.dumps(
        {
            "Nodes": nodes,
            "NodeNames": None,
            "FailedNodes": failed,
            "FailedAndUnresolvableNodes": unresolvable,
            "Error": error,
        }
    )
    if fitting_json is None:
        return encoded
    head, _, tail = encoded.partition(_SPLICED_JSON)
    return b"".join([head, *fitting_json, tail])


#: stands for the fitting nodes: ``Nodes`` is the first field and its ``items`` come right after
#: ``"metadata":{}``, so the first occurrence of the placeholder is always this one
_SPLICED_JSON = b'"<fitting nodes>"'
_SPLICED = orjson.Fragment(_SPLICED_JSON)

"""A filter answer as the decision recorder queues it: the question, the nodes it keeps, what it costs.

The answering thread builds these (``recorder.record``), so they do as little as they can: the first
``DECISION_DETAIL_NODES`` nodes are kept slimmed, or as the bytes the wire sent them in, and the
estimate of what a queued question keeps alive (``queued_bytes``, counted against
``DECISION_QUEUE_MAX_BYTES``) adds up the lengths of its strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hami_sim.engine.requests import PodView
from hami_sim.engine.sightings import SightedNodes
from hami_sim.engine.simulate import NodeVerdict

from .summary import fold_digest, summarize

__all__ = ["FilterQuestion", "held", "queued_bytes"]


@dataclass(slots=True)
class FilterQuestion:
    """A filter answer: the pod, the nodes (slimmed while queued) and each node's verdict.

    ``nodes`` are the first nodes as a queued call keeps them: slimmed Node objects, or, for nodes
    the wire sent as ``SightedNodes``, only their bytes (``raw``): decoded by the writer, and only
    for a question not on record yet. Never changed once built (not frozen: a frozen dataclass
    costs the answering thread one ``object.__setattr__`` call per field)."""

    pod: PodView
    nodes: Sequence[Any]
    verdicts: Sequence[NodeVerdict]
    raw: bool = False
    spec: Any = None  # the pod as asked (a reference: ``summary.pod_spec`` slims it in the writer)

    def digest(self, caller: str) -> str:
        return fold_digest(self.pod, self.verdicts, caller)

    def summarize(self, **kwargs: Any) -> dict:
        nodes = self.nodes
        if self.raw:
            nodes = SightedNodes.unseen(nodes)  # type: ignore[arg-type]
        return summarize(self.pod, nodes, self.verdicts, spec=self.spec, **kwargs)

    def queued_bytes(self) -> int:
        return queued_bytes(self.pod, self.nodes, self.verdicts, self.raw) + _spec_bytes(self.spec)


#: what a queued call costs besides its strings: the tuple, the question, the PodView and the lists
_CALL_BYTES = 2048
#: a ``NodeVerdict`` kept alive by a queued call (its fit and reason are shared with the engine's memo)
_VERDICT_BYTES = 256
#: a slimmed node's dicts, labels and capacity, besides its annotations' text
_NODE_BYTES = 1024
#: a node kept as its bytes: the bytes object and its slot in the list, besides its length
_RAW_NODE_BYTES = 64


def _text_bytes(mapping: object) -> int:
    """The characters of a mapping's string keys and values (annotations: what can be megabytes)."""
    if type(mapping) is not dict and not isinstance(mapping, Mapping):
        return 0
    try:
        return sum(map(len, mapping.values())) + sum(map(len, mapping.keys()))
    except TypeError:  # not all strings (a session's or the UI's own node): count what is
        return sum(len(v) for v in (*mapping.keys(), *mapping.values()) if isinstance(v, str))


#: a kept pod's containers (names and resources; its annotations are the PodView's, counted already)
_CONTAINER_BYTES = 512


def _spec_bytes(spec: Any) -> int:
    """What the pod as asked adds to a queued call: its containers (an estimate, no encoding)."""
    inner = spec.get("spec") if isinstance(spec, Mapping) else None
    if not isinstance(inner, Mapping):
        return 0
    return _CONTAINER_BYTES * sum(
        len(inner[key]) for key in ("containers", "initContainers") if isinstance(inner.get(key), list)
    )


def queued_bytes(pod: PodView, nodes: Sequence[Any], verdicts: Sequence[NodeVerdict], raw: bool) -> int:
    """What a queued call counts against ``DECISION_QUEUE_MAX_BYTES``: an estimate of the memory it
    keeps alive, from the lengths of its strings (cheap: the answering thread computes it)."""
    size = _CALL_BYTES + _text_bytes(getattr(pod, "annotations", None)) + _VERDICT_BYTES * len(verdicts)
    if raw:  # the nodes' own bytes
        return size + sum(map(len, nodes)) + _RAW_NODE_BYTES * len(nodes)
    for node in nodes:
        meta = node["metadata"]
        size += _NODE_BYTES + _text_bytes(meta.get("annotations")) + _text_bytes(meta.get("labels"))
    return size


def held(
    pod: PodView, nodes: Sequence[Mapping], verdicts: Sequence[NodeVerdict], count: int, spec: Any = None
) -> FilterQuestion:
    """The question as queued, with its first ``count`` nodes: nodes as the wire sent them
    (``SightedNodes``) as their bytes alone, decoded by the writer only for a question not on
    record yet (CA's next loop asks the same: nothing decoded on the answering thread); others
    slimmed."""
    if type(nodes) is SightedNodes:
        raw = nodes.raw
        return FilterQuestion(pod, raw if len(raw) <= count else raw[:count], verdicts, True, spec)
    return FilterQuestion(pod, [_slim(node) for node in nodes[:count]], verdicts, spec=spec)


def _slim(node: Mapping) -> dict:
    """What a record reads of a queued node (its device inventory and group): a Node from CA also
    carries a spec, images, conditions and managed fields, 10-50 KB that a queued record must not
    hold while the database is slow (``queued_bytes`` charges what is kept)."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    return {
        "metadata": {k: meta[k] for k in ("name", "uid", "labels", "annotations") if k in meta},
        "status": {k: status[k] for k in ("capacity", "allocatable") if k in status},
    }

"""Nesting depth of parsed JSON, bounded at parse time, so what we accept we can also write back.

orjson reads documents 1024 levels deep but writes at most 254, so a fitting node with a 600-deep
``spec`` was accepted and then failed when the extender echoed it (an HTTP 500); JSON 1,000 deep sent
to the REST API failed the same way. Nothing we accept comes near ``MAX_DEPTH`` (a Node is about 10
deep), so deeper documents are refused where they are parsed, with a clear error.

The one exception is what is never encoded again: the extender echoes each fitting node as the
request's own bytes (``simulations.extender.SPLIT_NODES``), so a node may nest as deep as orjson
reads (1,024 levels, as HAMi's Go decoder would accept it); the pod is still bounded here.
"""

from __future__ import annotations

import threading

import orjson

__all__ = ["MAX_DEPTH", "too_deep", "encode_if_shallow"]

MAX_DEPTH = 128
#: orjson encodes at most this many nested containers (a 255th raises "Recursion limit reached")
ORJSON_MAX_DEPTH = 254


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests dicts/lists more than ``limit`` levels (iterative: no recursion)."""
    if type(value) is not dict and type(value) is not list:
        return False
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        children = current.values() if type(current) is dict else current  # type: ignore[attr-defined]
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def encode_if_shallow(value: object, limit: int = MAX_DEPTH) -> bytes | memoryview | None:
    """``orjson.dumps(value)`` when ``not too_deep(value, limit)``; None when it is deeper (or when
    orjson cannot encode it for any other reason: the caller then asks ``too_deep``).

    The depth check runs inside orjson's encoder: ``value`` is wrapped in as many one-element lists
    as make orjson's own nesting limit fall exactly on ``limit``, so one C call both checks a whole
    request's nodes and encodes them (the extender reuses the bytes when it echoes every node).
    The encoding is a view into orjson's output (a slice would copy megabytes a second time).
    """
    if type(value) is not dict and type(value) is not list:
        return orjson.dumps(value)
    wrappers = ORJSON_MAX_DEPTH - limit
    if wrappers <= 0:
        if wrappers < 0:
            return None
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            return None
    outer, inner = _chain(wrappers)
    inner[0] = value
    try:
        encoded = orjson.dumps(outer)
    except orjson.JSONEncodeError:
        return None
    finally:
        inner[0] = None
    return memoryview(encoded)[wrappers : len(encoded) - wrappers]


_CHAINS = threading.local()


def _chain(wrappers: int) -> tuple[object, list]:
    """This thread's ``wrappers`` nested one-element lists (outermost, innermost), built once."""
    chains = getattr(_CHAINS, "chains", None)
    if chains is None:
        chains = _CHAINS.chains = {}
    chain = chains.get(wrappers)
    if chain is None:
        inner: list = [None]
        outer: object = inner
        for _ in range(wrappers - 1):
            outer = [outer]
        chain = chains[wrappers] = (outer, inner)
    return chain

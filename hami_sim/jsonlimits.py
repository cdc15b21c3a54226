"""Nesting depth of parsed JSON, bounded at parse time (issue 16 item 5).

orjson reads documents 1024 levels deep but writes at most 254, so a fitting node with a 600-deep
``spec`` was accepted and then failed when the extender echoed it (an HTTP 500); JSON 1,000 deep sent
to the REST API failed the same way. Nothing we accept comes near ``MAX_DEPTH`` (a Node is about 10
deep), so deeper documents are refused where they are parsed, with a clear error.
"""

from __future__ import annotations

__all__ = ["MAX_DEPTH", "too_deep"]

MAX_DEPTH = 128


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

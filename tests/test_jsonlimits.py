"""The depth limit checked inside orjson's encoder agrees with the walk it replaces, at every boundary."""

from __future__ import annotations

import orjson
import pytest

from hami_sim.project.jsonlimits import encode_if_shallow, too_deep

pytestmark = pytest.mark.api


def nested(depth: int, innermost: object, kind: str) -> object:
    """``depth`` containers (dicts, lists or both in turn) around ``innermost``, with leaves beside."""
    value = innermost
    for level in range(depth - 1):
        use_dict = kind == "dict" or (kind == "mixed" and level % 2)
        value = {"k": value, "s": "[[{{", "n": None} if use_dict else [1, value, "]]}}"]
    return value


@pytest.mark.parametrize("limit", [1, 2, 64, 128, 129, 200, 254])
@pytest.mark.parametrize("kind", ["dict", "list", "mixed"])
@pytest.mark.parametrize(
    "innermost", [{}, [], {"a": 1}, [1]], ids=["empty-dict", "empty-list", "dict", "list"]
)
def test_encode_if_shallow_refuses_exactly_what_too_deep_refuses(limit, kind, innermost):
    for depth in range(max(1, limit - 2), limit + 3):
        value = nested(depth, innermost, kind)
        encoded = encode_if_shallow(value, limit)
        assert (encoded is None) == too_deep(value, limit), (limit, kind, depth)
        if encoded is not None:
            assert encoded == orjson.dumps(value)


@pytest.mark.parametrize("value", [1, "x", None, 2.5, True])
def test_encode_if_shallow_encodes_scalars(value):
    assert encode_if_shallow(value) == orjson.dumps(value)

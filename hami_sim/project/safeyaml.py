"""YAML from untrusted users: no aliases, bounded nesting, bounded size.

``yaml.safe_load`` constructs only plain data, but it still expands aliases: 519 bytes of nested
``&a [*b, *b, ...]`` anchors became 10**7 leaves (a "billion laughs"), and each further level
multiplies the cost by ten. It also composes nesting recursively, so 900 levels of ``[`` end in a
``RecursionError`` (an HTTP 500). No document we accept (a Pod, a profile export) needs an alias or
more than a few dozen levels, so this loader refuses both with a ``yaml.YAMLError`` that callers
already turn into a clear 400 / validation message.

The document is read by libyaml (``yaml.CSafeLoader``) when PyYAML was built with it: its event
stream is checked for aliases and depth first (libyaml's parser keeps its own stack, it does not
recurse), then libyaml composes and constructs. The pure-Python loader took 9 s for the what-if
page's 256 KiB limit (``bench/yaml_bench.py`` prints both). Without libyaml the Python composer
below enforces the same limits.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent

__all__ = ["MAX_DEPTH", "UnsafeYAMLError", "dump", "load", "FAST"]

#: libyaml's safe loader, when PyYAML has it (the wheels do)
FAST: type | None = getattr(yaml, "CSafeLoader", None)

MAX_DEPTH = 64  # a kubectl Pod is ~10 deep; a profile export ~6


class UnsafeYAMLError(ComposerError):
    """A document uses an alias or nests deeper than ``MAX_DEPTH`` (a ``yaml.YAMLError``)."""


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` whose composer refuses aliases and counts depth before it recurses."""

    max_depth = MAX_DEPTH

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            raise UnsafeYAMLError(
                None, None, "YAML aliases (*name) are not accepted; write the value out", event.start_mark
            )
        if not isinstance(event, CollectionStartEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise UnsafeYAMLError(
                    None, None, f"YAML nested deeper than {self.max_depth} levels", event.start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """One YAML document as plain data (like ``yaml.safe_load``), refusing aliases and deep nesting."""
    if FAST is not None:
        _check_events(text, max_depth)
        return yaml.load(text, Loader=FAST)  # noqa: S506 (libyaml's *safe* loader)
    loader = _Loader(text)
    loader.max_depth = max_depth
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _check_events(text: str | bytes, max_depth: int) -> None:
    """Refuse an alias or nesting deeper than ``max_depth`` from libyaml's events, before anything
    is composed (the first offending event stops the parse)."""
    depth = 0
    for event in yaml.parse(text, Loader=FAST):
        if isinstance(event, AliasEvent):
            raise UnsafeYAMLError(
                None, None, "YAML aliases (*name) are not accepted; write the value out", event.start_mark
            )
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise UnsafeYAMLError(
                    None, None, f"YAML nested deeper than {max_depth} levels", event.start_mark
                )
        elif isinstance(event, CollectionEndEvent):
            depth -= 1


class _NoAliasDumper(yaml.SafeDumper):
    """``SafeDumper`` that writes shared objects out again instead of as ``&id``/``*id`` aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(data: Any, **options: Any) -> str:
    """``yaml.safe_dump`` without aliases, so whatever we write, ``load`` reads back."""
    return yaml.dump(data, Dumper=_NoAliasDumper, **options)

"""orjson for DRF: the parser and renderer of every endpoint (``REST_FRAMEWORK`` in settings).

Why orjson: it is what the extender verbs already use (several times faster than the standard
library on Node lists), so the whole API encodes and decodes one way. Kept apart from
``hami_sim.project.rest`` because DRF imports its renderer setting while loading ``rest_framework.views``:
this module must not import that.
"""

from __future__ import annotations

import orjson
from django.conf import settings
from rest_framework import exceptions, parsers, status
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.utils.encoders import JSONEncoder

from .jsonlimits import MAX_DEPTH, encode_if_shallow, too_deep
from .middleware import is_simulation_path

__all__ = [
    "PayloadTooLarge",
    "read_bounded",
    "OrjsonParser",
    "FormParser",
    "MultiPartParser",
    "OrjsonRenderer",
]

_fallback = JSONEncoder().default  # DRF's own conversions (datetime, Decimal, lazy text, ...)
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "request body too large"
    default_code = "too_large"


def read_bounded(stream, limit: int, declared: int = 0) -> bytes:
    """A request body of at most ``limit`` bytes, else ``PayloadTooLarge`` naming the limit: a
    ``declared`` length (``Content-Length``) over it is refused before anything is read, a body
    that runs longer than it said after ``limit + 1`` bytes."""
    if declared > limit:
        raise PayloadTooLarge(f"request body of {declared} bytes exceeds the limit of {limit} bytes")
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes")
    return raw


class OrjsonParser(BaseParser):
    """JSON bodies through orjson, bounded like the views used to bound them.

    The body limit is ``EXTENDER_MAX_BODY_BYTES`` on the simulation API (whole Node lists) and Django's
    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` elsewhere; ``BodyLimitMiddleware`` refuses a declared length up
    front, this catches a body that runs longer than it said. A whitespace-only body parses to None
    (the views decide whether an empty body is allowed).
    """

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None) -> object:
        request = (parser_context or {}).get("request")
        limit = _body_limit(request.path_info if request is not None else "")
        raw = read_bounded(stream, limit) if limit is not None else stream.read()
        if not raw.strip():
            return None
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise exceptions.ParseError(f"malformed JSON: {exc}") from None
        # orjson's encoder checks the depth in C (0.08 s for 10,000 pods where the Python walk takes
        # 0.28 s); the walk only decides the rare body orjson cannot re-encode for another reason
        if encode_if_shallow(data) is None and too_deep(data):
            raise exceptions.ParseError(f"malformed JSON: nested deeper than {MAX_DEPTH} levels")
        return data


def check_form_depth(data) -> None:
    """400 for a form field holding JSON nested deeper than ``MAX_DEPTH``.

    A form-encoded or multipart body reaches DRF's ``JSONField``, which decodes a field's text with
    the standard library's recursive decoder: 5,000 nested brackets were a ``RecursionError``, a 500.
    orjson reads the text first (in C, refusing past 1,024 levels), so the field decodes safely later.
    """
    for key, values in data.lists():
        for value in values:
            if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
                continue
            try:
                too = too_deep(orjson.loads(value))
            except orjson.JSONDecodeError as exc:
                too = "depth limit" in str(exc)  # anything else is the field's own error to report
            if too:
                raise exceptions.ParseError(f"{key}: JSON nested deeper than {MAX_DEPTH} levels")


class FormParser(parsers.FormParser):
    """DRF's form parser, with JSON-looking fields bounded in depth (``check_form_depth``)."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        check_form_depth(data)
        return data


class MultiPartParser(parsers.MultiPartParser):
    """DRF's multipart parser, with JSON-looking fields bounded in depth (``check_form_depth``)."""

    def parse(self, stream, media_type=None, parser_context=None):
        result = super().parse(stream, media_type, parser_context)
        check_form_depth(result.data)
        return result


def _body_limit(path: str) -> int | None:
    if is_simulation_path(path):
        return settings.EXTENDER_MAX_BODY_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class OrjsonRenderer(BaseRenderer):
    """JSON answers through orjson; an ``orjson.Fragment`` (pre-encoded JSON) passes through as is."""

    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if data is None:
            return b""
        option = _OPTIONS
        if (renderer_context or {}).get("indent") or "indent=" in (accepted_media_type or ""):
            option |= orjson.OPT_INDENT_2
        return orjson.dumps(data, default=_fallback, option=option)

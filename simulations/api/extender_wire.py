"""DRF's extension points for the extender wire format (``k8s.io/kube-scheduler/extender/v1``).

The extender verbs are DRF views like every endpoint; these classes make DRF speak Go's protocol:

- ``ExtenderArgsParser``: the bounded body (``EXTENDER_MAX_BODY_BYTES``) read once and decoded by
  ``parse_extender_args`` (Go's rules: any key casing, the depth limit) into ``ExtenderArgs``.
- ``ExtenderRenderer``: orjson, and an ``ExtenderFilterResult`` that splices the fitting nodes'
  own request bytes in verbatim (``FilterResult.encode``).
- ``FixedNegotiation``: one request format and one answer format; a client's ``Content-Type`` or
  ``Accept`` never turns an answer into a 415 or a 406.
- ``extender_exception_handler``: request-level failures in Go's shape instead of the API's
  ``{"detail": ...}``: HTTP 200 with ``Error`` set (``[]`` for prioritize) for bad args, 413 over the
  body limit, a JSON 405 naming the method, ``{"error": ...}`` for a refused client.
"""

from __future__ import annotations

import orjson
from django.conf import settings
from django.utils.datastructures import MultiValueDict
from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser, DataAndFiles
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response

from hami_sim.project.restjson import PayloadTooLarge, read_bounded
from hami_sim.runtime.simulator import get_simulator

from ..extender import ExtenderArgsError, FilterResult, parse_extender_args

__all__ = ["ExtenderArgsParser", "ExtenderRenderer", "FixedNegotiation", "extender_exception_handler"]


class ExtenderArgsParser(BaseParser):
    """``ExtenderArgs`` from any request type (Go's client sends ``application/json``; the verbs
    always read JSON); the view's ``wire_name`` names the verb in the errors. Returned as DRF's
    ``DataAndFiles`` (no files), which DRF unpacks without a failed attribute lookup."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None) -> DataAndFiles:
        context = parser_context or {}
        meta = context["request"]._request.META
        try:
            declared = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        body = read_bounded(stream, settings.EXTENDER_MAX_BODY_BYTES, declared)
        args = parse_extender_args(body, verb=context["view"].wire_name, sightings=get_simulator().sightings)
        return DataAndFiles(args, MultiValueDict())


class ExtenderRenderer(BaseRenderer):
    """orjson; a ``FilterResult`` encodes itself (the fitting nodes echoed as sent)."""

    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if type(data) is FilterResult:
            return data.encode()
        return orjson.dumps(data)


class FixedNegotiation(BaseContentNegotiation):
    """The view's one parser and one renderer, whatever the request says it sends or accepts."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def extender_exception_handler(exc: Exception, context: dict) -> Response | None:
    """The extender verbs' exception handler (``ExtenderVerbView.get_exception_handler``)."""
    view = context["view"]
    if isinstance(exc, ExtenderArgsError):
        return Response(view.rejected(exc))
    if isinstance(exc, PayloadTooLarge):
        return Response(view.too_large(str(exc.detail)), status=exc.status_code)
    if isinstance(exc, exceptions.MethodNotAllowed):
        method = context["request"].method
        return Response({"Error": f"method {method} not allowed; POST ExtenderArgs as JSON"}, status=405)
    if isinstance(exc, exceptions.APIException):  # a refused client (403), as the listener refuses
        return Response({"error": str(exc.detail)}, status=exc.status_code)
    return None

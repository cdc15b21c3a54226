"""Extender verbs: ``POST /filter-simulation`` and ``POST /prioritize-simulation`` (design.md 2).

DRF views, like every endpoint, but shaped for the hot path: CA calls these thousands of times per
loop, so there is no authentication, permission or throttle class (mTLS and the NetworkPolicy guard
them, design.md 8), no parser (the bounded raw body is parsed once, by ``parse_extender_args``), no
serializer, and no content negotiation (the extender protocol has one answer format: a client's
``Accept`` must not turn an answer into a 406). The verb encodes its answer once with orjson and DRF
passes the finished response through. Go's wire format is kept exactly: 200 with ``Error`` for
request-level failures, 413 over the body limit, a JSON 405 naming the method for anything but POST.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import orjson
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request
from rest_framework.views import APIView

from hami_sim.engine.model import NodeState
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.logcontext import bind_filter_verdict, bind_prioritize_verdict, bind_rejected
from hami_sim.restjson import OrjsonRenderer
from hami_sim.runtime.simulator import get_simulator
from usage.live import live_usage

from ..extender import ExtenderArgsError, filter_result, parse_extender_args
from ..metrics import EXTENDER_LATENCY, EXTENDER_NODE_VERDICTS, EXTENDER_REQUESTS
from ..signals import filter_answered

__all__ = [
    "ExtenderVerbView",
    "FilterSimulationView",
    "PrioritizeSimulationView",
    "run_filter",
    "run_prioritize",
    "read_body",
    "BodyTooLarge",
]

log = logging.getLogger("hami_sim.extender")


class BodyTooLarge(Exception):
    pass


def read_body(request: HttpRequest) -> bytes:
    """The raw body, bounded by ``EXTENDER_MAX_BODY_BYTES`` (Django's own limit is for forms)."""
    limit = settings.EXTENDER_MAX_BODY_BYTES
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit:
        raise BodyTooLarge(f"request body of {length} bytes exceeds the limit of {limit} bytes")
    body = request.read(limit + 1)
    if len(body) > limit:
        raise BodyTooLarge(f"request body exceeds the limit of {limit} bytes")
    return body


# Labelled metric children, looked up once per label set instead of on every answer (``labels()``
# takes a lock and builds a key); prometheus_client follows a fork with its own pid check.
_VERDICTS = {v: EXTENDER_NODE_VERDICTS.labels(v) for v in ("fit", "failed", "unresolvable")}
_REQUESTS: dict[tuple[str, str], Any] = {}
_LATENCIES: dict[str, Any] = {}


def _count_verdicts(fit: int, failed: int, unresolvable: int) -> None:
    for label, n in (("fit", fit), ("failed", failed), ("unresolvable", unresolvable)):
        if n:
            _VERDICTS[label].inc(n)


def _request_counter(verb: str, outcome: str) -> Any:
    child = _REQUESTS.get((verb, outcome))
    if child is None:
        child = _REQUESTS[verb, outcome] = EXTENDER_REQUESTS.labels(verb, outcome)
    return child


def _latency(verb: str) -> Any:
    child = _LATENCIES.get(verb)
    if child is None:
        child = _LATENCIES[verb] = EXTENDER_LATENCY.labels(verb)
    return child


def run_filter(
    body: bytes,
    *,
    caller: str = "extender",
    states: Mapping[str, NodeState] | None = None,
) -> tuple[bytes, str]:
    """Answer one filter request; returns (response body, outcome label for metrics)."""
    started = time.perf_counter()
    try:
        args = parse_extender_args(body)
    except ExtenderArgsError as exc:
        bind_rejected("bad_request", body=body)
        return filter_result(None, {}, {}, str(exc)), "bad_request"
    simulator = get_simulator()
    try:
        ctx = simulator.pod_context(args.pod)
    except PodError as exc:
        bind_rejected("bad_request", args.pod)
        return filter_result(None, {}, {}, f"malformed extender args: {exc}"), "bad_request"
    except WeightsError as exc:
        bind_rejected("pod_error", args.pod)
        name = (
            args.pod.get("metadata", {}).get("name", "") if isinstance(args.pod.get("metadata"), dict) else ""
        )
        return filter_result(None, {}, {}, f"calcScore failed {exc} for pod {name}"), "pod_error"
    verdicts = simulator.filter_nodes(ctx, args.nodes, states, live=live_usage)
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    if all(verdict.fits for verdict in verdicts):
        fitting = args.nodes
        out = filter_result(fitting, failed, unresolvable, fitting_json=args.echo())
    else:
        fitting = []
        indices = []
        for i, (node, verdict) in enumerate(zip(args.nodes, verdicts, strict=True)):
            if verdict.fits:
                fitting.append(node)
                indices.append(i)
            elif verdict.unresolvable:
                unresolvable[verdict.name] = verdict.reason
            else:
                failed[verdict.name] = verdict.reason
        out = filter_result(fitting, failed, unresolvable, fitting_json=args.echo(indices))
    _count_verdicts(len(fitting), len(failed), len(unresolvable))
    bind_filter_verdict(args.pod, len(fitting), len(verdicts))
    # ``receivers`` is empty when no app listens (no decision recording): skip building the kwargs
    if filter_answered.receivers:
        filter_answered.send_robust(
            sender=run_filter,
            ctx=ctx,
            args=args,
            verdicts=verdicts,
            caller=caller,
            seconds=time.perf_counter() - started,
        )
    return out, "fit" if fitting else "no_fit"


def run_prioritize(body: bytes, *, states: Mapping[str, NodeState] | None = None) -> tuple[bytes, str]:
    """``HostPriorityList`` for the nodes that pass the filter; ``[]`` on any error."""
    try:
        args = parse_extender_args(body, verb="prioritize-simulation")
        simulator = get_simulator()
        ctx = simulator.pod_context(args.pod)
    except (ExtenderArgsError, PodError, WeightsError) as exc:
        bind_rejected("bad_request", body=body)
        log.warning("prioritize-simulation rejected: %s", exc)
        return b"[]", "bad_request"
    verdicts = simulator.filter_nodes(ctx, args.nodes, states, live=live_usage)
    priorities = [{"Host": v.name, "Score": simulator.prioritize_score(ctx, v)} for v in verdicts if v.fits]
    bind_prioritize_verdict(args.pod, len(priorities), len(verdicts))
    return orjson.dumps(priorities), "ok"


def _answer(content: bytes, status: int = 200) -> HttpResponse:
    """The answer, encoded once by the verb: DRF passes a finished ``HttpResponse`` through as is."""
    return HttpResponse(content, content_type=OrjsonRenderer.media_type, status=status)


class ExtenderVerbView(APIView):
    """An extender verb: ``POST`` a bounded ``ExtenderArgs`` body, answer in Go's shape.

    Subclasses set ``verb`` (the metrics label), ``too_large`` (the 413 body; None: an
    ``ExtenderFilterResult`` with ``Error`` set) and ``answer(body, **kwargs)``.
    """

    authentication_classes: tuple = ()
    permission_classes: tuple = ()
    throttle_classes: tuple = ()
    parser_classes: tuple = ()
    renderer_classes = (OrjsonRenderer,)
    http_method_names = ["post"]
    schema = None  # documented by ``simulations.schema.add_extender_paths`` (Go field names)
    verb = ""
    too_large: bytes | None = None

    # Allow: POST on every answer (DRF would recompute it from ``http_method_names`` per request)
    default_response_headers = {"Allow": "POST"}

    def initialize_request(self, request: HttpRequest, *args, **kwargs) -> Request:
        """DRF's request wrapper, without building the parser and authenticator lists it would not use."""
        return Request(request, parser_context={"view": self, "args": args, "kwargs": kwargs})

    def initial(self, request, *args, **kwargs) -> None:
        """DRF's per-request policy steps, minus the ones that cannot apply here.

        No authentication (mTLS did it; ``request.user`` stays Django's), no permission or throttle
        class, no API version, no format suffix, one answer format: so only the renderer is set.
        """
        self.format_kwarg = None
        request.accepted_renderer = self._renderer
        request.accepted_media_type = self._renderer.media_type

    _renderer = OrjsonRenderer()

    def answer(self, body: bytes, **kwargs: str) -> tuple[bytes, str]:
        raise NotImplementedError

    def post(self, request, **kwargs: str) -> HttpResponse:
        started = time.perf_counter()
        try:
            body = read_body(request._request)
        except BodyTooLarge as exc:
            bind_rejected("too_large")
            EXTENDER_REQUESTS.labels(self.verb, "too_large").inc()
            payload = filter_result(None, {}, {}, str(exc)) if self.too_large is None else self.too_large
            return _answer(payload, 413)
        content, outcome = self.answer(body, **kwargs)
        _request_counter(self.verb, outcome).inc()
        _latency(self.verb).observe(time.perf_counter() - started)
        return _answer(content)

    def http_method_not_allowed(self, request, *args, **kwargs) -> HttpResponse:
        """Anything but POST: a JSON 405 naming the method (``Allow: POST`` comes from DRF)."""
        return _answer(
            orjson.dumps({"Error": f"method {request.method} not allowed; POST ExtenderArgs as JSON"}), 405
        )


class FilterSimulationView(ExtenderVerbView):
    verb = "filter"

    def answer(self, body: bytes, **kwargs: str) -> tuple[bytes, str]:
        return run_filter(body)


class PrioritizeSimulationView(ExtenderVerbView):
    verb = "prioritize"
    too_large = b"[]"

    def answer(self, body: bytes, **kwargs: str) -> tuple[bytes, str]:
        return run_prioritize(body)

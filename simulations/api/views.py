"""Extender verbs: ``POST /filter-simulation`` and ``POST /prioritize-simulation`` (docs/architecture.md).

DRF views, like every endpoint, with DRF's own extension points set for the extender protocol
(``simulations.api.extender_wire``): a parser that reads the bounded body into ``ExtenderArgs`` by Go's rules,
a renderer that echoes the fitting nodes as sent, one fixed format (a client's ``Accept`` must not
turn an answer into a 406), and an exception handler that keeps Go's wire format: 200 with ``Error``
for request-level failures, 413 over the body limit, a JSON 405 naming the method for anything but
POST. Who may call: the client certificate on the extender listener (``ClientCertificateAuthentication``
and the allow-list as the permission class ``ExtenderClientCertificate``); a login or a token names
the caller elsewhere. No throttle: CA calls these thousands of times per loop (mTLS and the
NetworkPolicy guard them instead), and no serializer: the engine reads the Node objects as sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from django.http import HttpResponse
from rest_framework.views import APIView

from hami_sim.engine.model import NodeState
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.project.authentication import (
    ClientCertificateAuthentication,
    LoginSessionAuthentication,
    TokenUserAuthentication,
)
from hami_sim.project.logcontext import bind_filter_verdict, bind_prioritize_verdict, bind_rejected
from hami_sim.project.permissions import ExtenderClientCertificate
from hami_sim.runtime.simulator import get_simulator
from usage.live import live_usage_reader

from ..extender import ExtenderArgs, ExtenderArgsError, FilterResult, parse_extender_args
from ..metrics import EXTENDER_LATENCY, EXTENDER_NODE_VERDICTS, EXTENDER_REQUESTS
from ..signals import filter_answered
from .extender_wire import ExtenderArgsParser, ExtenderRenderer, FixedNegotiation, extender_exception_handler

__all__ = [
    "ExtenderVerbView",
    "FilterSimulationView",
    "PrioritizeSimulationView",
    "run_filter",
    "filter_answer",
    "prioritize_answer",
]

log = logging.getLogger("hami_sim.extender")


# Labelled metric children, looked up once per label set instead of on every answer (``labels()``
# takes a lock and builds a key); prometheus_client follows a fork with its own pid check.
_VERDICTS = {v: EXTENDER_NODE_VERDICTS.labels(v) for v in ("fit", "failed", "unresolvable")}
_REQUESTS: dict[tuple[str, str], Any] = {}
_LATENCIES: dict[str, Any] = {}


#: stateless DRF policy objects (authenticators, permissions, parsers, renderers), by declaration
_BUILT: dict[tuple, tuple] = {}


def _built(classes: Sequence[type]) -> tuple:
    """One instance of each class, built the first time a view declares that tuple of classes."""
    key = tuple(classes)
    built = _BUILT.get(key)
    if built is None:
        built = _BUILT[key] = tuple(cls() for cls in key)
    return built


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
    """Answer one filter request body; returns (response body, outcome label for metrics).

    What the view does, in one call: parse (``parse_extender_args``), answer, encode."""
    started = time.perf_counter()
    try:
        args = parse_extender_args(body, sightings=get_simulator().sightings)
    except ExtenderArgsError as exc:
        return filter_rejected(exc).encode(), "bad_request"
    result, outcome = filter_answer(args, caller=caller, states=states, started=started)
    return result.encode(), outcome


def filter_rejected(exc: ExtenderArgsError) -> FilterResult:
    """The answer to a body that is no ``ExtenderArgs``: ``Error`` set, nothing fits."""
    bind_rejected("bad_request", body=exc.body)
    return FilterResult(error=str(exc))


def filter_answer(
    args: ExtenderArgs,
    *,
    caller: str = "extender",
    states: Mapping[str, NodeState] | None = None,
    started: float | None = None,
) -> tuple[FilterResult, str]:
    """The ``ExtenderFilterResult`` for parsed args and its outcome label; a pod HAMi rejects is
    an answer with ``Error`` set."""
    started = time.perf_counter() if started is None else started
    simulator = get_simulator()
    try:
        ctx = simulator.pod_context(args.pod)
    except PodError as exc:
        bind_rejected("bad_request", args.pod)
        return FilterResult(error=f"malformed extender args: {exc}"), "bad_request"
    except WeightsError as exc:
        bind_rejected("pod_error", args.pod)
        name = (
            args.pod.get("metadata", {}).get("name", "") if isinstance(args.pod.get("metadata"), dict) else ""
        )
        return FilterResult(error=f"calcScore failed {exc} for pod {name}"), "pod_error"
    verdicts = simulator.filter_nodes(ctx, args.nodes, states, live=live_usage_reader())
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    indices: list[int] | None = None  # the fitting nodes' positions (None: every node fits)
    if not all(verdict.fits for verdict in verdicts):
        indices = []
        for i, verdict in enumerate(verdicts):
            if verdict.fits:
                indices.append(i)
            elif verdict.unresolvable:
                unresolvable[verdict.name] = verdict.reason
            else:
                failed[verdict.name] = verdict.reason
    echo = args.echo(indices)  # (the nodes as sent: none is decoded to be answered)
    fitting = None if echo is not None else _picked(args.nodes, indices)
    result = FilterResult(fitting, failed, unresolvable, fitting_json=echo)
    fitting_count = len(verdicts) if indices is None else len(indices)
    _count_verdicts(fitting_count, len(failed), len(unresolvable))
    bind_filter_verdict(args.pod, fitting_count, len(verdicts))
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
    return result, "fit" if fitting_count else "no_fit"


def _picked(nodes: Sequence[dict], indices: list[int] | None) -> list[dict]:
    return list(nodes) if indices is None else [nodes[i] for i in indices]


def prioritize_rejected(exc: Exception, body: bytes) -> list:
    """``[]``, CA's answer to anything it cannot score (the reason goes to the log)."""
    bind_rejected("bad_request", body=body)
    log.warning("prioritize-simulation rejected: %s", exc)
    return []


def prioritize_answer(
    args: ExtenderArgs, *, states: Mapping[str, NodeState] | None = None
) -> tuple[list[dict[str, Any]], str]:
    """``HostPriorityList`` for the nodes that pass the filter; ``[]`` for a pod HAMi rejects."""
    simulator = get_simulator()
    try:
        ctx = simulator.pod_context(args.pod)
    except (PodError, WeightsError) as exc:
        return prioritize_rejected(exc, args.body), "bad_request"
    verdicts = simulator.filter_nodes(ctx, args.nodes, states, live=live_usage_reader())
    priorities = [{"Host": v.name, "Score": simulator.prioritize_score(ctx, v)} for v in verdicts if v.fits]
    bind_prioritize_verdict(args.pod, len(priorities), len(verdicts))
    return priorities, "ok"


class ExtenderVerbView(APIView):
    """An extender verb: ``POST`` an ``ExtenderArgs`` body, answer in Go's shape.

    Subclasses set ``verb`` (the metrics label), ``wire_name`` (the verb in parse errors) and
    ``answer(request, **kwargs)``, and say what a refused body gets (``rejected``, ``too_large``).
    """

    authentication_classes = (
        ClientCertificateAuthentication,
        LoginSessionAuthentication,
        TokenUserAuthentication,
    )
    permission_classes = (ExtenderClientCertificate,)
    throttle_classes = ()
    parser_classes = (ExtenderArgsParser,)
    renderer_classes = (ExtenderRenderer,)
    content_negotiation_class = FixedNegotiation
    http_method_names = ["post"]
    schema = None  # documented by ``simulations.schema.add_extender_paths`` (Go field names)
    verb = ""
    wire_name = "filter-simulation"
    started = 0.0

    # Allow: POST on every answer (DRF would recompute it from ``http_method_names`` per request)
    default_response_headers = {"Allow": "POST"}

    def get_exception_handler(self):
        return extender_exception_handler

    # DRF builds a view's authenticators, permissions, parsers, renderers, throttles and negotiator
    # anew for every request: these are stateless, so the verbs build each declaration's once
    # (``_built``), a few microseconds of every CA call. The ``*_classes`` above stay what decides.
    def get_authenticators(self) -> tuple:
        return _built(self.authentication_classes)

    def get_permissions(self) -> tuple:
        return _built(self.permission_classes)

    def get_parsers(self) -> tuple:
        return _built(self.parser_classes)

    def get_renderers(self) -> tuple:
        return _built(self.renderer_classes)

    def get_throttles(self) -> tuple:
        return _built(self.throttle_classes)

    def get_content_negotiator(self):
        return _built((self.content_negotiation_class,))[0]

    def post(self, request, **kwargs: str) -> HttpResponse:
        self.started = time.perf_counter()
        data, outcome = self.answer(request, **kwargs)
        self.count(outcome)
        return self.rendered(request, data)

    @staticmethod
    def rendered(request, data: object, status: int = 200) -> HttpResponse:
        """``data`` encoded by the renderer DRF negotiated, as a finished response DRF passes through.

        Not DRF's ``Response``: that is a template response, rendered after the view by one more
        pass through the middleware (about 70 Python calls, a tenth of what CA's smallest call
        costs above a fixed answer); the errors' responses take that path."""
        return HttpResponse(
            request.accepted_renderer.render(data), content_type=request.accepted_media_type, status=status
        )

    def extender_args(self, request) -> ExtenderArgs:
        """The parsed body; an empty one is Go's decoding error too (DRF parses no empty body)."""
        data = request.data
        if type(data) is ExtenderArgs:
            return data
        return parse_extender_args(b"", verb=self.wire_name)

    def answer(self, request, **kwargs: str) -> tuple[object, str]:
        raise NotImplementedError

    def count(self, outcome: str) -> None:
        _request_counter(self.verb, outcome).inc()
        _latency(self.verb).observe(time.perf_counter() - self.started)

    def rejected(self, exc: ExtenderArgsError) -> object:
        """The answer to a body that is no ``ExtenderArgs`` (HTTP 200, as Go's extender answers)."""
        self.count("bad_request")
        return filter_rejected(exc)

    def too_large(self, message: str) -> object:
        """The answer to a body over ``EXTENDER_MAX_BODY_BYTES`` (HTTP 413)."""
        bind_rejected("too_large")
        _request_counter(self.verb, "too_large").inc()
        return FilterResult(error=message)


class FilterSimulationView(ExtenderVerbView):
    verb = "filter"

    def answer(self, request, **kwargs: str) -> tuple[object, str]:
        return filter_answer(self.extender_args(request), started=self.started)


class PrioritizeSimulationView(ExtenderVerbView):
    verb = "prioritize"
    wire_name = "prioritize-simulation"

    def answer(self, request, **kwargs: str) -> tuple[object, str]:
        return prioritize_answer(self.extender_args(request))

    def rejected(self, exc: ExtenderArgsError) -> object:
        self.count("bad_request")
        return prioritize_rejected(exc, exc.body)

    def too_large(self, message: str) -> object:
        super().too_large(message)
        return []

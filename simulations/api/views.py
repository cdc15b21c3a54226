"""Extender verbs: ``POST /filter-simulation`` and ``POST /prioritize-simulation``.

Plain Django views on purpose: CA calls these thousands of times per loop, so the body is parsed
once with orjson and never goes through DRF's parsers, negotiation or serializers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

import orjson
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from hami_sim.engine.model import NodeState
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.engine.simulate import NodeVerdict, PodContext
from hami_sim.logcontext import bind_prioritize_verdict, bind_rejected
from usage.live import for_inventory as live_usage

from ..engine import get_simulator
from ..extender import ExtenderArgs, ExtenderArgsError, filter_result, parse_extender_args
from ..metrics import EXTENDER_LATENCY, EXTENDER_NODE_VERDICTS, EXTENDER_REQUESTS

__all__ = ["filter_simulation", "prioritize_simulation", "run_filter", "run_prioritize", "read_body"]

log = logging.getLogger("hami_sim.extender")
JSON = "application/json"

# Called after every answered filter with (ctx, args, verdicts, caller, seconds); set by the
# decisions recorder. It must never raise into the answer.
FilterObserver = Callable[[PodContext, ExtenderArgs, list[NodeVerdict], str, float], None]
_observers: list[FilterObserver] = []


def add_filter_observer(observer: FilterObserver) -> None:
    if observer not in _observers:
        _observers.append(observer)


def _notify(
    ctx: PodContext, args: ExtenderArgs, verdicts: list[NodeVerdict], caller: str, seconds: float
) -> None:
    for observer in _observers:
        try:
            observer(ctx, args, verdicts, caller, seconds)
        except Exception:  # recording must never fail the answer
            log.exception("filter observer failed")


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
    fitting: list[dict] = []
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    for node, verdict in zip(args.nodes, verdicts, strict=True):
        if verdict.fits:
            fitting.append(node)
        elif verdict.unresolvable:
            unresolvable[verdict.name] = verdict.reason
        else:
            failed[verdict.name] = verdict.reason
    out = filter_result(fitting, failed, unresolvable)
    EXTENDER_NODE_VERDICTS.labels("fit").inc(len(fitting))
    EXTENDER_NODE_VERDICTS.labels("failed").inc(len(failed))
    EXTENDER_NODE_VERDICTS.labels("unresolvable").inc(len(unresolvable))
    if _observers:
        _notify(ctx, args, verdicts, caller, time.perf_counter() - started)
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


def _respond(
    verb: str, request: HttpRequest, handler: Callable[[bytes], tuple[bytes, str]], empty: bytes | None
) -> HttpResponse:
    """Read the bounded body, answer, count. ``empty`` is the 413 body (None: an ExtenderFilterResult)."""
    started = time.perf_counter()
    try:
        body = read_body(request)
    except BodyTooLarge as exc:
        bind_rejected("too_large")
        EXTENDER_REQUESTS.labels(verb, "too_large").inc()
        payload = filter_result(None, {}, {}, str(exc)) if empty is None else empty
        return HttpResponse(payload, content_type=JSON, status=413)
    content, outcome = handler(body)
    EXTENDER_REQUESTS.labels(verb, outcome).inc()
    EXTENDER_LATENCY.labels(verb).observe(time.perf_counter() - started)
    return HttpResponse(content, content_type=JSON)


def _not_post(request: HttpRequest) -> HttpResponse | None:
    """Extender verbs are POST only: anything else is a JSON 405 naming the method."""
    if request.method == "POST":
        return None
    body = orjson.dumps({"Error": f"method {request.method} not allowed; POST ExtenderArgs as JSON"})
    response = HttpResponse(body, content_type=JSON, status=405)
    response["Allow"] = "POST"
    return response


@csrf_exempt
def filter_simulation(request: HttpRequest) -> HttpResponse:
    return _not_post(request) or _respond("filter", request, run_filter, None)


@csrf_exempt
def prioritize_simulation(request: HttpRequest) -> HttpResponse:
    return _not_post(request) or _respond("prioritize", request, run_prioritize, b"[]")

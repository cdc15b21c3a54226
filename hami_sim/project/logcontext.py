"""Binds the pod and the verdict of an answered extender request into the log context.

``simulations.api.views.run_filter`` calls ``bind_filter_verdict`` for every answered filter, so the
extender's hot path does little extra work: two context-variable writes per answer. ``run_prioritize``
calls ``bind_prioritize_verdict`` the same way, giving its access line the pod and how many hosts were
scored.

A request the extender cannot answer (malformed args, a pod HAMi rejects, an unknown session) binds
its outcome as the verdict with ``bind_rejected``, and the pod when the body names one, so its
access line says why it got an ``Error`` (or ``[]``) rather than leaving the verdict empty.
"""

from __future__ import annotations

import orjson

from . import logconfig as log_context

__all__ = ["pod_label", "pod_from_body", "bind_filter_verdict", "bind_prioritize_verdict", "bind_rejected"]


def pod_label(pod: object) -> str:
    """``<namespace>/<name>`` of a Pod object, as the access lines show it."""
    meta = pod.get("metadata") if isinstance(pod, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def bind_filter_verdict(pod: object, fits: int, total: int) -> None:
    """``verdict`` = ``fit <nodes that fit>/<nodes asked about>`` (``no_fit 0/<n>`` when none fits)."""
    verdict = f"fit {fits}/{total}" if fits else f"no_fit 0/{total}"
    log_context.bind(pod=pod_label(pod), verdict=verdict)


def bind_prioritize_verdict(pod: object, scored: int, total: int) -> None:
    """``verdict`` = ``scored <hosts scored>/<nodes asked about>`` (only fitting nodes get a score)."""
    log_context.bind(pod=pod_label(pod), verdict=f"scored {scored}/{total}")


def pod_from_body(body: bytes) -> object | None:
    """The ``Pod`` object of a raw ExtenderArgs body (any key case, as Go decodes), or None.

    Only used on the error paths, where the body did not parse into ``ExtenderArgs`` (or was never
    parsed, for an unknown session): one more ``orjson.loads`` there costs nothing that matters.
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    pod = data.get(
        "Pod", next((v for k, v in data.items() if isinstance(k, str) and k.lower() == "pod"), None)
    )
    return pod if isinstance(pod, dict) else None


def bind_rejected(outcome: str, pod: object | None = None, body: bytes | None = None) -> None:
    """``verdict`` = the outcome label (``bad_request``, ``pod_error``, ``unknown_session``); ``pod``
    from ``pod`` or, failing that, from the raw ``body`` when it names one."""
    if pod is None and body is not None:
        pod = pod_from_body(body)
    if isinstance(pod, dict):
        log_context.bind(pod=pod_label(pod), verdict=outcome)
    else:
        log_context.bind(verdict=outcome)

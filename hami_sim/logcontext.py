"""Binds the pod and the verdict of an answered extender request into the log context.

``bind_filter_verdict`` is registered as a filter observer (``simulations.api.views.add_filter_observer``),
so the extender's hot path does no extra work when nothing is logged: two context-variable writes per
answer. Prioritize answers have no observers (nothing records them), so ``run_prioritize`` calls
``bind_prioritize_verdict`` itself: the same two writes, giving its access line the pod and how many
hosts were scored.
"""

from __future__ import annotations

from . import logging as log_context

__all__ = ["pod_label", "bind_filter_verdict", "bind_prioritize_verdict"]


def pod_label(pod: object) -> str:
    """``<namespace>/<name>`` of a Pod object, as the access lines show it."""
    meta = pod.get("metadata") if isinstance(pod, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def bind_filter_verdict(ctx, args, verdicts, caller, seconds) -> None:
    pod = pod_label(args.pod)
    fits = sum(1 for v in verdicts if v.fits)
    verdict = f"fit {fits}/{len(verdicts)}" if fits else f"no_fit 0/{len(verdicts)}"
    log_context.bind(pod=pod, verdict=verdict)


def bind_prioritize_verdict(pod: object, scored: int, total: int) -> None:
    """``verdict`` = ``scored <hosts scored>/<nodes asked about>`` (only fitting nodes get a score)."""
    log_context.bind(pod=pod_label(pod), verdict=f"scored {scored}/{total}")

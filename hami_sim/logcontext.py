"""Binds the pod and the verdict of an answered filter request into the log context.

Registered as a filter observer (``simulations.api.views.add_filter_observer``), so the extender's
hot path does no extra work when nothing is logged: two context-variable writes per answer.
"""

from __future__ import annotations

from . import logging as log_context

__all__ = ["bind_filter_verdict"]


def bind_filter_verdict(ctx, args, verdicts, caller, seconds) -> None:
    meta = args.pod.get("metadata") if isinstance(args.pod, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    pod = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
    fits = sum(1 for v in verdicts if v.fits)
    verdict = f"fit {fits}/{len(verdicts)}" if fits else f"no_fit 0/{len(verdicts)}"
    log_context.bind(pod=pod, verdict=verdict)

"""Signals the simulation app sends; other apps listen without ``simulations`` knowing them.

``filter_answered`` is sent after every answered filter question: the extender verbs (plain and
session-scoped, ``caller`` ``extender`` / ``session:<id>``) and the estimate's per-group checks
(``caller`` ``estimate``). Keyword arguments:

- ``ctx``: the pod's ``PodContext`` (``ctx.pod`` is the parsed ``PodView``, policies in force)
- ``args``: ``ExtenderArgs`` (``args.pod`` the raw Pod, ``args.nodes`` the raw Nodes asked about)
- ``verdicts``: one ``NodeVerdict`` per node, in ``args.nodes`` order
- ``caller``: who asked; ``seconds``: how long the answer took

``expander_answered`` is sent after every answered gRPC expander call (``BestOptions``): ``ctx`` (the
call's first pod), ``options`` (one ``hami_sim.engine.hami_expander.OptionVerdict`` per scale-up
option CA offered, in CA's order, each kept or not and why), ``seconds``, ``wire`` (the request
form CA used) and ``spec`` (that first pod as CA sent it). An expander call is not a filter question: it is recorded as its own kind of decision.

Why a signal: ``decisions`` records these answers, and it sits above ``simulations`` in the layers
(docs/architecture.md: code points only down, as import-linter checks). Receivers run in the
answering thread and must be cheap (the decision recorder only queues); the sender uses
``send_robust``, so a failing receiver is logged and never fails the answer.
"""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["filter_answered", "expander_answered"]

filter_answered = Signal(use_caching=True)  # receivers looked up once per sender, not per answer
expander_answered = Signal()

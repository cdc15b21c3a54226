"""Node scores as the pod page and the what-if page show them.

``score`` in a decision record is the node's score after placing the pod (``NodeVerdict.score_after``):
HAMi's 0..30 for most nodes, but a vendor ``ScoreNode`` adds its own term (MetaX sGPU: +-10000 x the
topology score), so one page can hold 12.5 next to 20012.5 and -9990.25. Nothing may assume a fixed
range: a score is written with thousands separators, and its bar shows the node's place between the
lowest and the highest fitting score of the same answer (always 0..100 % of the cell).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["format_score", "with_score_bars"]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def format_score(value: object) -> str:
    """``20012.5`` -> ``"20,012.5"``; at most 4 decimals (what the recorder keeps); non-numbers as text."""
    number = _number(value)
    if number is None:
        return "" if value is None else str(value)
    text = f"{number:,.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def with_score_bars(nodes: Sequence[Mapping]) -> list[dict]:
    """Copies of the recorded nodes with ``score_text`` and ``score_pct`` (0..100, ``None`` when the
    node does not fit or has no usable score). Equal scores, or a single fitting node, fill the bar."""
    scores = [_number(n.get("score")) for n in nodes]
    fitting = [s for n, s in zip(nodes, scores, strict=True) if n.get("fits") and s is not None]
    low, high = (min(fitting), max(fitting)) if fitting else (0.0, 0.0)
    out = []
    for node, score in zip(nodes, scores, strict=True):
        row = dict(node)
        row["score_text"] = format_score(node.get("score"))
        if node.get("fits") and score is not None:
            row["score_pct"] = round(100.0 * (score - low) / (high - low), 1) if high > low else 100.0
        else:
            row["score_pct"] = None
        out.append(row)
    return out

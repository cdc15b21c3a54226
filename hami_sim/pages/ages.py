"""How long something has waited, as people say it (the blind-spot list, the overview)."""

from __future__ import annotations

__all__ = ["human_age"]

_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))


def human_age(seconds: float) -> str:
    """An age in its two largest units, rounded down: "45 s", "12 min", "3 h 5 min", "2 d 7 h"."""
    left = max(0, int(seconds))
    parts: list[str] = []
    for unit, size in _UNITS:
        amount, rest = divmod(left, size)
        if amount:
            parts.append(f"{amount} {unit}")
            left = rest
        elif parts:
            break  # "1 h 0 min 40 s" reads "1 h"
        if len(parts) == 2:
            break
    return " ".join(parts) or "0 s"

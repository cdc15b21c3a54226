"""When to stop working on a gRPC expander call.

CA gives each ``BestOptions`` call a deadline (5 s) and may cancel it; past either, nothing we answer
is read, so the work stops between options and pod decodes, and the estimator gets the time left as
its own limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["CallAbandoned", "Deadline", "NO_DEADLINE"]


class CallAbandoned(Exception):
    """CA's deadline has passed or CA cancelled the call: nothing we answer is read any more."""


class Deadline:
    """When to stop working on a call. ``expired`` asks grpc (``time_remaining``, ``is_active``) so a
    call CA gave up on (its 5 s deadline, a cancel) stops between options and pod decodes, and the
    estimator gets the time left as its own limit."""

    def __init__(self, remaining: Callable[[], float | None], active: Callable[[], bool]) -> None:
        self._remaining, self._active = remaining, active

    @classmethod
    def of(cls, context, most: float | None = None) -> Deadline:
        """The call's deadline, or ``most`` seconds from now when that is sooner (a client that sets
        no deadline, or a far one, still cannot hold a work slot for long)."""
        if most is None:
            return cls(context.time_remaining, context.is_active)
        until = time.monotonic() + most

        def remaining() -> float:
            return min(context.time_remaining(), until - time.monotonic())

        return cls(remaining, context.is_active)

    def seconds(self) -> float | None:
        return self._remaining()

    def check(self) -> None:
        left = self._remaining()
        if (left is not None and left <= 0) or not self._active():
            raise CallAbandoned("the client's deadline has passed or it cancelled the call")


NO_DEADLINE = Deadline(lambda: None, lambda: True)

"""The suite's one way to wait on another process or thread: poll for the condition the test asserts.

A fixed sleep before an assertion is a bet on how fast a busy machine gets there (a clean-clone CI
lost it); ``eventually`` instead returns as soon as the condition holds. Its bound only ends a hang:
it is generous because a machine running a second suite beside this one is slow, and it is never
the thing tested (speed lives in ``bench/``).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(check: Callable[[], object], within: float = 30.0) -> object:
    """Poll ``check`` until it returns something truthy, or ``within`` seconds pass; its last value
    (the caller asserts it, so a timeout fails with what was last seen)."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)

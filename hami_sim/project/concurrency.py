"""How many heavy requests a web process runs at once: an estimate can take a thread for 20 s.

Two estimates from one read-only token held both of a web pod's threads for about 20 s, and
``/healthz`` waited 19.97 s behind them. A ``Gate`` admits at most ``ESTIMATE_MAX_CONCURRENT``
estimates per process (fewer than its threads, ``HAMI_SIM_THREADS``, so health checks and other users
always find a free thread) and one per identity (``hami_sim.project.permissions.Caller``) at a time;
anything more is refused at once, never queued: **429** with ``Retry-After`` when the caller already
has one running, **503** with ``Retry-After`` when the process's estimates are all taken by others.
Per process: with several workers and replicas an identity may run one in each.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from rest_framework import status
from rest_framework.exceptions import APIException, Throttled

from .conf import conf

__all__ = ["Gate", "GateFull", "ESTIMATES"]

#: seconds a refused client is told to wait (an estimate's time limit is 20 s)
RETRY_AFTER = 5


class GateFull(APIException):
    """503: the process runs as many of these requests as it may; ``wait`` becomes ``Retry-After``."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "busy"

    def __init__(self, detail: str, wait: int = RETRY_AFTER) -> None:
        super().__init__(detail)
        self.wait = wait


class Gate:
    """At most ``limit()`` requests of one kind at once in this process, one per identity."""

    def __init__(self, kind: str, setting: str, limit) -> None:
        self.kind, self.setting, self.limit = kind, setting, limit
        self._running: Counter[str] = Counter()
        self._lock = threading.Lock()

    @contextmanager
    def slot(self, identity: str) -> Iterator[None]:
        """Hold a slot while the request runs; raise ``Throttled`` (429) or ``GateFull`` (503) at once."""
        with self._lock:
            if self._running[identity]:
                raise Throttled(
                    wait=RETRY_AFTER,
                    detail=f"an {self.kind} of yours is still running here; one at a time, "
                    "retry when it has answered",
                )
            limit = max(1, self.limit())
            if sum(self._running.values()) >= limit:
                raise GateFull(
                    f"this server is running {limit} {self.kind}(s), its limit ({self.setting}); "
                    "retry in a few seconds"
                )
            self._running[identity] += 1
        try:
            yield
        finally:
            with self._lock:
                self._running[identity] -= 1
                if self._running[identity] <= 0:
                    del self._running[identity]


#: ``POST /api/v1/estimate`` and the what-if page
ESTIMATES = Gate("estimate", "ESTIMATE_MAX_CONCURRENT", lambda: conf().estimate_max_concurrent)

"""Which CA generation sent an expander call, and which one ``CA_VERSION`` says the cluster runs.

CA 1.32 to 1.34.1 send objects (``nodeMap``, ``Option.pod``), CA 1.34.2+ bytes as well, 1.35+ bytes
only. A call in another form than the configured release sends means CA runs at another version
than hami-sim follows (its binpacking differs): counted and warned once per pair.
"""

from __future__ import annotations

import logging

from hami_sim.engine.ca_releases import Wire
from hami_sim.project.conf import configured_ca_release

from ..metrics import EXPANDER_REQUESTS, EXPANDER_WIRE_MISMATCH
from .protos import expander_pb2 as pb

__all__ = ["wire_of", "count_wire"]

log = logging.getLogger("hami_sim.expander")


def wire_of(request: pb.BestOptionsRequest) -> Wire | None:
    """Which CA generation encoded the request: ``objects`` (fields 2 and 4 only: CA 1.32 to 1.34.1),
    ``both`` (CA 1.34.2+ before 1.35), ``bytes`` (3 and 5 only: CA 1.35+); None when it carries no
    pod and no template at all."""
    new = bool(request.nodeBytesMap) or any(o.podBytes for o in request.options)
    old = bool(request.nodeMap) or any(o.pod for o in request.options)
    if new and old:
        return Wire.BOTH
    return Wire.BYTES if new else Wire.OBJECTS if old else None


_WARNED: set[tuple[str, str]] = set()


def count_wire(wire: Wire | None) -> str:
    """Count the request's wire generation; warn (once per pair, and in a counter) when it is not
    the one the configured ``CA_VERSION`` sends: CA runs at another version than hami-sim follows."""
    label = wire.value if wire is not None else "none"
    release = configured_ca_release()
    expected = release.wire
    EXPANDER_REQUESTS.labels(wire=label).inc()
    if wire is not None and wire is not expected:
        EXPANDER_WIRE_MISMATCH.labels(wire=label, expected=expected.value).inc()
        if (label, expected.value) not in _WARNED:
            _WARNED.add((label, expected.value))
            log.warning(
                "CA sent the %r wire form, but CA_VERSION %s sends %r: set CA_VERSION to the CA release "
                "the cluster runs",
                label,
                release.version,
                expected.value,
            )
    return label

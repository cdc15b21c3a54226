"""The DRA blind spot: pending pods whose claims a node group could hold (under HAMi's DRA driver)
but whose group CA cannot scale from zero, because the template slices CA's clusterapi provider
builds lack what the claims ask (``capacity`` they never publish, a ``type`` they do not carry).

CA simulates a cold group with its provider's template slices; when no template admits a pod, CA
adds no node for it, and nothing says why. This lists each such (pod, group) with the reason the
first template device gives. Pods that already fit a live node are left out: CA needs no scale-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from profiles.models import NodeGroup

from .dra import DraState, dra_state
from .dra_verdicts import group_verdicts, is_dra_pod, live_verdicts, pod_claims
from .models import PendingPod

__all__ = ["DraBlindSpot", "MAX_PODS", "dra_blind_spot", "dra_pending"]

#: pending DRA pods judged per call (the newest first): bounded work per page view
MAX_PODS = 200


@dataclass(frozen=True)
class DraBlindSpot:
    pod: str  # namespace/name
    group: str
    reason: str


def dra_pending(limit: int = MAX_PODS) -> list[PendingPod]:
    """Pending pods that hold ResourceClaims (the newest first, at most ``limit``)."""
    pods = PendingPod.objects.filter(pod__spec__has_key="resourceClaims").order_by("-observed_at")
    return [p for p in pods[:limit] if is_dra_pod(p.pod)]


def _first_reason(reasons: Sequence) -> str:
    return next((f"{r.device}: {r.reason}" for r in reasons if r.reason), "")


def dra_blind_spot(state: DraState | None = None) -> list[DraBlindSpot]:
    """Every (pending pod, clusterapi group) pair the blind spot holds (module docstring)."""
    state = state if state is not None else dra_state()
    groups = list(NodeGroup.objects.filter(provider="clusterapi").prefetch_related("profiles__devices"))
    found = []
    for pending in dra_pending():
        claims = pod_claims(pending.pod, state)
        if not claims.claims or claims.error:
            continue
        if any(t.verdict.fits for t in live_verdicts(pending.pod, claims.claims, state)):
            continue
        verdicts = {
            (t.name, t.kind): t.verdict for t in group_verdicts(pending.pod, claims.claims, state, groups)
        }
        for group in groups:
            hami, capi = (
                verdicts.get((group.name, "HAMi template")),
                verdicts.get((group.name, "clusterapi template")),
            )
            if hami is not None and hami.fits and capi is not None and not capi.fits:
                reason = capi.error or _first_reason(capi.reasons)
                found.append(DraBlindSpot(f"{pending.namespace}/{pending.name}", group.name, reason))
    return found

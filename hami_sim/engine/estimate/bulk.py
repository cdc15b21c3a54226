"""Bulk filling: the pods of one equivalence group that CA's second step puts on fresh nodes, a whole
node at a time.

In that step each pod tries the last added node, else a new one; a new node is a copy of the
template, so every one of them goes through the same states as the pods of one shape arrive (the
usage after the first pod, after the second, ..., until one does not fit). Those states are worked
out once per shape and group on a scratch copy of the template (``FreshFill``); a fresh node that
took its first pod then takes the rest at once (``fill``): the pods, the resources they take and the
devices' final state, without asking each pod's fit again. The answer is the one pod-by-pod packing
gives (``tests/estimate/test_bulk_fill_property.py`` compares them); the packer uses it only where a
node's fit depends on nothing but the node itself (no pod affinity or topology spread in the
estimate), and never in the reference packing (``estimate(fast=False)``).
"""

from __future__ import annotations

from ..model import DeviceUsage, NodeState
from .fitter import Fitter, PackedNode

__all__ = ["FreshFill", "fill"]


class FreshFill:
    """One pod shape on a fresh node of the group, pod after pod: the devices and signature after each
    placement, as far as asked so far (``complete``: until the next pod does not fit)."""

    __slots__ = ("node", "steps", "complete")

    def __init__(self, fresh: PackedNode) -> None:
        self.node = fresh  # the scratch copy of the template the pods are placed on
        self.steps: list[tuple[list[DeviceUsage], tuple]] = []
        self.complete = False

    def extend(self, fitter: Fitter, count: int) -> None:
        """Work out the states of the first ``count`` pods (fewer when the node holds fewer)."""
        node = self.node
        while not self.complete and len(self.steps) < count:
            why, devices, sig = fitter.probe(node)
            if why:
                self.complete = True
                break
            fitter.place(node, "", devices, sig)
            self.steps.append((node.state.devices, node.sig))


def fill(plan: FreshFill, fitter: Fitter, node: PackedNode, ids: list[str], start: int) -> int:
    """Place ``ids[start:]`` on ``node``, a fresh node holding the shape's first pod, as far as the
    shape fills it; returns how many were placed (0 when the node is not in the state the plan
    expects, so the caller goes on pod by pod)."""
    left = len(ids) - start
    plan.extend(fitter, left + 1)
    if not plan.steps or node.sig != plan.steps[0][1] or len(node.pods) != 1:
        return 0
    count = min(len(plan.steps) - 1, left)
    if count <= 0:
        return 0
    demand = fitter.demand
    free = node.free
    for _ in range(count):
        free.take(demand)
    node.pods.extend(ids[start : start + count])
    if fitter.terms.ports:
        node.ports = set(node.ports or ()) | fitter.terms.ports
    devices, sig = plan.steps[count]
    if devices is not node.state.devices:
        node.state = NodeState(node.name, devices, node.state.pair_scores, node.state.cordoned)
        node.sig = sig
    return count

"""Every test's rows and objects come from here.

``tests.factories.kube`` (re-exported here): Pod and Node JSON as the Kubernetes API (and CA's
templates) would send them, plain functions with no Django, so the engine tests import them alone.
``tests.factories.models``: one factory-boy factory per database model (node groups, device
profiles, inventories, pod allocations, decisions, CA events and statuses, task runs, sessions,
users with roles, role groups, tokens, the usage state).
"""

from __future__ import annotations

from tests.factories.kube import (
    ALLOCATABLE,
    ALLOCATED,
    CAPACITY,
    NVIDIA_REGISTER,
    container,
    extender_args,
    gpu,
    gpu_node,
    hami_pod,
    hami_workload,
    node,
    pod,
    register,
)

__all__ = [
    "ALLOCATABLE",
    "ALLOCATED",
    "CAPACITY",
    "NVIDIA_REGISTER",
    "container",
    "extender_args",
    "gpu",
    "gpu_node",
    "hami_pod",
    "hami_workload",
    "node",
    "pod",
    "register",
]

"""A node group's profile as DRA template ResourceSlices, for scale-from-zero (docs/dra.md).

The same NVIDIA profile that renders a group's template capacity renders the ResourceSlice HAMi's DRA
driver would publish on a fresh node of the group (``hami``), and, for a clusterapi group, the slice CA
itself builds from the MachineSet's ``dra-driver`` and ``gpu-count`` annotations (``clusterapi``):
the difference between the two is why HAMi-DRA pods cannot scale such a group from zero.
"""

from __future__ import annotations

from hami_sim.engine.dra.hamidra import GpuSpec, clusterapi_slice, profile_slice
from hami_sim.engine.vendors.nvidia import NVIDIA
from hami_sim.project.conf import conf

from .models import NodeGroup

__all__ = ["template_node_name", "group_gpus", "dra_template_slices"]


def template_node_name(group: NodeGroup) -> str:
    return f"template-{group.name}"


def group_gpus(group: NodeGroup) -> list[GpuSpec]:
    """The group's NVIDIA GPUs, one per device of its profile (a row's quantity expanded)."""
    gpus = []
    for profile in group.profiles.all():
        if profile.vendor != NVIDIA:
            continue
        for row in profile.devices.all():
            gpus.extend(GpuSpec(row.type, row.devmem, row.devcore) for _ in range(row.quantity))
    return gpus


def dra_template_slices(group: NodeGroup) -> dict:
    """``{"node", "hami", "clusterapi"}``: the template node's name and its two kinds of slices
    (None where the group has no NVIDIA GPU, or is not a clusterapi group)."""
    node = template_node_name(group)
    gpus = group_gpus(group)
    hami = profile_slice(node, gpus) if gpus else None
    capi = (
        clusterapi_slice(node, conf().dra_clusterapi_driver, len(gpus))
        if group.provider == "clusterapi"
        else None
    )
    return {"node": node, "hami": hami, "clusterapi": capi}

"""Template Node for a node group (``GET /api/v1/node-groups/<name>/template``)."""

from __future__ import annotations

from .models import NodeGroup
from .render import kwok_node, template_node

__all__ = ["group_template"]


def group_template(
    group: NodeGroup, *, kwok: bool = False, profiles: list[tuple[str, list, dict]] | None = None
) -> dict:
    """Labels, capacity/allocatable (``nvidia.com/gpu`` = devices x split count) and the annotations;
    each vendor's resource names are its configured engine vendor's (``profiles.render``). ``profiles`` ((vendor, rows, pair scores) each) replaces the group's own non-empty profiles: the
    resolver's catalog passes those whose vendor the engine knows, as it read them already."""
    if profiles is None:
        profiles = []
        for profile in group.profiles.all():
            rows = [row.as_dict() for row in profile.devices.all()]
            if rows:
                profiles.append((profile.vendor, rows, profile.pair_scores))
    node = template_node(
        group.name,
        match_labels=group.match_labels or {},
        labels=group.labels or {},
        taints=group.taints or [],
        capacity=group.capacity or {},
        instance_type=group.machine_type,
        profiles=profiles,
    )
    return kwok_node(node) if kwok else node

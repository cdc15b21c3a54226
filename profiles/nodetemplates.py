"""Template Node for a node group (``GET /api/v1/node-groups/<name>/template``), and the groups as the
estimator takes them (``estimate_groups``: one answer for the API, the what-if page and the blind spot)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count

from hami_sim.engine.estimate import GroupTemplate

from .models import NodeGroup, NodeInventory
from .render import kwok_node, template_node

__all__ = ["group_template", "estimate_groups"]


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


def estimate_groups(names: Iterable[str] | None = None) -> list[GroupTemplate]:
    """The node groups (``names``, in that order; None: all, by name) as the estimator takes them: the
    template Node, ``max_size`` and the current size (its live nodes in the inventory), as CA's cloud
    provider reports them. A ``max_size`` of 0 never grows. Unknown names are left out. Every caller
    (``POST /api/v1/estimate``, the what-if page, the blind-spot report) reads the groups here, so
    they give one answer for the same pods."""
    groups = NodeGroup.objects.prefetch_related("profiles__devices")
    wanted = None if names is None else list(names)
    if wanted is not None:
        groups = groups.filter(name__in=wanted)
    live = dict(
        NodeInventory.objects.filter(gone_at__isnull=True, node_group__in=groups)
        .values("node_group__name")
        .annotate(n=Count("id"))
        .values_list("node_group__name", "n")
    )
    out = {
        g.name: GroupTemplate(g.name, group_template(g), None, g.max_size, live.get(g.name, 0))
        for g in groups
    }
    order = sorted(out) if wanted is None else [n for n in wanted if n in out]
    return [out[name] for name in order]

"""The node groups' admin: each group with its profiles, live nodes, open drift and template."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from ..models import NodeGroup
from .common import OPEN_FINDINGS, drift_cell, yes_no_filter

__all__ = ["NodeGroupAdmin"]

HasProfileFilter = yes_no_filter("has a device profile", "has_profile", Q(profiles__isnull=False))


@admin.register(NodeGroup)
class NodeGroupAdmin(SimpleHistoryAdmin):
    list_display = ["name", "provider", "machine_type", "inventory_source", "profile", "nodes", "drift"]
    list_filter = ["provider", "inventory_source", HasProfileFilter]
    search_fields = ["name", "machine_type", "description"]
    readonly_fields = ["created_at", "updated_at", "template_link"]
    fieldsets = [
        (None, {"fields": ["name", "description", "provider", "machine_type", "min_size", "max_size"]}),
        ("Recognising nodes", {"fields": ["match_labels", "inventory_source"]}),
        ("Template node", {"fields": ["labels", "taints", "capacity", "template_link"]}),
        ("Times", {"fields": ["created_at", "updated_at"]}),
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                open_findings=Count("findings", filter=OPEN_FINDINGS, distinct=True),
                live_nodes=Count("inventories", filter=Q(inventories__gone_at__isnull=True), distinct=True),
            )
            .prefetch_related("profiles__devices")
        )

    @admin.display(description="profile")
    def profile(self, obj: NodeGroup):
        profiles = list(obj.profiles.all())
        if not profiles:
            return format_html('<span style="color:#999">{}</span>', "no profile")
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            (
                (
                    reverse("admin:profiles_deviceprofile_change", args=[p.pk]),
                    "; ".join(str(r) for r in p.devices.all()) or p.vendor,
                )
                for p in profiles
            ),
        )

    @admin.display(description="nodes", ordering="live_nodes")
    def nodes(self, obj: NodeGroup) -> int:
        return obj.live_nodes

    @admin.display(description="drift", ordering="open_findings")
    def drift(self, obj: NodeGroup):
        url = reverse("admin:profiles_driftfinding_changelist") + f"?node_group__id__exact={obj.pk}&open=yes"
        return drift_cell(obj.open_findings, url)

    @admin.display(description="template node")
    def template_link(self, obj: NodeGroup):
        if not obj.pk:
            return "-"
        url = f"/api/v1/node-groups/{obj.name}/template"
        return format_html('<a href="{}">JSON</a> · <a href="{}?format=kwok">kwok YAML</a>', url, url)

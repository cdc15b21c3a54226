"""The cluster's side in the admin: node inventories (view only: the sync owns them) and drift findings.

An operator reads here what each node registered and whether it matches its group's profile, and
can turn a node's registration into its group's profile (``create_profile_from_inventory``).
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import reverse

from hami_sim.engine.vendors import default_word

from ..drift import devices_from_json
from ..models import DeviceProfile, DriftFinding, NodeInventory
from ..render import rows_from_devices
from ..services import save_profile
from ..vendors import SPECS
from .common import OPEN_FINDINGS, drift_cell, yes_no_filter

__all__ = ["NodeInventoryAdmin", "DriftFindingAdmin"]

RegisteredFilter = yes_no_filter("registered by HAMi", "registered", Q(registered_at__isnull=False))


class GoneFilter(admin.SimpleListFilter):
    title = "present"
    parameter_name = "present"

    def lookups(self, request, model_admin):
        return [("yes", "present"), ("no", "gone")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(gone_at__isnull=True)
        if self.value() == "no":
            return queryset.filter(gone_at__isnull=False)
        return queryset


@admin.register(NodeInventory)
class NodeInventoryAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "node_group",
        "device_summary",
        "registered_at",
        "last_seen",
        "stale",
        "present",
        "drift",
    ]
    list_filter = ["node_group", GoneFilter, "stale", RegisteredFilter]
    search_fields = ["name", "uid"]
    list_select_related = ["node_group"]
    actions = ["create_profile_from_inventory"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in NodeInventory._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # the cluster sync owns these rows; view only

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(open_findings=Count("findings", filter=OPEN_FINDINGS))

    @admin.display(description="devices")
    def device_summary(self, obj: NodeInventory) -> str:
        if obj.parse_error:
            return obj.parse_error
        rows = rows_from_devices(devices_from_json(obj.devices))
        unhealthy = sum(1 for d in obj.devices if not d.get("health"))
        text = "; ".join(f"{r['quantity']} x {r['type']} {r['devmem']} MiB" for r in rows) or "unregistered"
        return f"{text} ({unhealthy} unhealthy)" if unhealthy else text

    @admin.display(description="present", boolean=True)
    def present(self, obj: NodeInventory) -> bool:
        return obj.gone_at is None

    @admin.display(description="drift", ordering="open_findings")
    def drift(self, obj: NodeInventory):
        url = reverse("admin:profiles_driftfinding_changelist") + f"?inventory__id__exact={obj.pk}&open=yes"
        return drift_cell(obj.open_findings, url)

    @admin.action(description="Create profile from this node's inventory", permissions=["view"])
    def create_profile_from_inventory(self, request, queryset):
        if not request.user.has_perm("profiles.add_deviceprofile"):
            self.message_user(request, "you may not add device profiles", messages.ERROR)
            return
        for inv in queryset.select_related("node_group"):
            if inv.node_group is None:
                self.message_user(request, f"{inv.name}: belongs to no node group", messages.ERROR)
            elif not inv.devices:
                self.message_user(request, f"{inv.name}: has no parsed registration to copy", messages.ERROR)
            else:
                devices = devices_from_json(inv.devices)
                vendors = list(dict.fromkeys((d.device_vendor or default_word()) for d in devices))
                for vendor in vendors:
                    if vendor not in SPECS:
                        continue
                    if inv.node_group.profiles.filter(vendor=vendor).exists():
                        self.message_user(
                            request,
                            f"{inv.name}: node group {inv.node_group.name} already has a profile"
                            + ("" if vendor == default_word() else f" for {vendor}")
                            + "; edit it",
                            messages.WARNING,
                        )
                        continue
                    rows = rows_from_devices(devices, vendor)
                    for row in rows:  # a profile describes a fresh node: healthy devices
                        row.pop("health", None)
                    profile = DeviceProfile(
                        node_group=inv.node_group, vendor=vendor, notes=f"created from node {inv.name}"
                    )
                    save_profile(profile, rows=rows)
                    self.message_user(
                        request,
                        f"{inv.name}: created the profile of node group {inv.node_group.name}"
                        + ("" if vendor == default_word() else f" for {vendor}"),
                    )


class OpenFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "open"

    def lookups(self, request, model_admin):
        return [("yes", "open"), ("no", "resolved")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(resolved_at__isnull=True)
        if self.value() == "no":
            return queryset.filter(resolved_at__isnull=False)
        return queryset


@admin.register(DriftFinding)
class DriftFindingAdmin(admin.ModelAdmin):
    list_display = [
        "inventory",
        "node_group",
        "kind",
        "field",
        "device",
        "expected",
        "actual",
        "severity",
        "opened_at",
        "resolved_at",
    ]
    list_filter = [OpenFilter, "kind", "severity", "node_group", "field"]
    search_fields = ["inventory__name", "device", "field"]
    list_select_related = ["inventory", "node_group"]
    date_hierarchy = "opened_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

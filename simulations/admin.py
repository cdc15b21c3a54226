"""Sessions in the admin: read-mostly (state changes go through the API, which keeps revisions)."""

from django.contrib import admin

from .models import SessionCheckpoint, SessionNode, SessionPlacement, SimulationSession


class SessionNodeInline(admin.TabularInline):
    model = SessionNode
    extra = 0
    can_delete = False
    fields = ("position", "name", "node_group", "devices")
    readonly_fields = fields


class SessionPlacementInline(admin.TabularInline):
    model = SessionPlacement
    extra = 0
    can_delete = False
    fields = ("seq", "pod_uid", "namespace", "name", "node_name", "containers")
    readonly_fields = fields


@admin.register(SimulationSession)
class SimulationSessionAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "revision", "depth", "expires_at", "created_at")
    search_fields = ("id", "name")
    list_filter = ("created_at",)
    readonly_fields = ("id", "revision", "depth", "created_at", "updated_at")
    inlines = [SessionNodeInline, SessionPlacementInline]


@admin.register(SessionCheckpoint)
class SessionCheckpointAdmin(admin.ModelAdmin):
    list_display = ("session", "depth", "created_at")
    readonly_fields = ("session", "depth", "snapshot", "created_at")

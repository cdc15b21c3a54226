"""Admin: decisions and events are read-only records (they come from the extender and the cluster)."""

from django.contrib import admin

from .models import AutoscalerStatus, CAEvent, Decision


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ("pod_namespace", "pod_name", "verdict", "caller", "top_reason", "count", "last_seen")
    list_filter = ("verdict", "caller")
    search_fields = ("pod_name", "pod_namespace", "pod_uid", "top_reason")
    date_hierarchy = "last_seen"


@admin.register(CAEvent)
class CAEventAdmin(ReadOnlyAdmin):
    list_display = ("reason", "pod_namespace", "pod_name", "count", "last_seen")
    list_filter = ("reason",)
    search_fields = ("pod_name", "pod_namespace", "pod_uid", "message")


@admin.register(AutoscalerStatus)
class AutoscalerStatusAdmin(ReadOnlyAdmin):
    list_display = ("fetched_at", "error")

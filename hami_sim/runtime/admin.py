"""Task runs in the admin: read-only, they are written by the tasks themselves."""

from __future__ import annotations

from django.contrib import admin

from .models import TaskRun

__all__ = ["TaskRunAdmin"]


@admin.register(TaskRun)
class TaskRunAdmin(admin.ModelAdmin):
    list_display = ["task", "started_at", "duration_ms", "outcome", "counts", "error"]
    list_filter = ["task", "outcome"]
    search_fields = ["task", "task_id", "error"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

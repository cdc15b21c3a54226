"""What the profiles app's admin pages share: the drift cell and readable yes/no filters."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q
from django.utils.html import format_html

__all__ = ["OPEN_FINDINGS", "drift_cell", "yes_no_filter"]

#: the open drift findings of a group or an inventory, for ``Count(..., filter=OPEN_FINDINGS)``
OPEN_FINDINGS = Q(findings__resolved_at__isnull=True)


def drift_cell(count: int | None, url: str):
    """A changelist cell: "none" in green, else the open findings' count linking to them, in red."""
    if not count:
        return format_html('<span style="color:#2e7d32">{}</span>', "none")
    return format_html('<a href="{}" style="color:#c62828;font-weight:bold">{} open</a>', url, count)


def yes_no_filter(title: str, parameter: str, yes: Q) -> type[admin.SimpleListFilter]:
    """A "yes / no" admin filter with a readable title (Django's EmptyFieldListFilter reads "By profiles:
    Empty / Not empty")."""

    class YesNoFilter(admin.SimpleListFilter):
        parameter_name = parameter

        def lookups(self, request, model_admin):
            return [("yes", "yes"), ("no", "no")]

        def queryset(self, request, queryset):
            if self.value() == "yes":
                return queryset.filter(yes).distinct()
            if self.value() == "no":
                return queryset.exclude(yes).distinct()
            return queryset

    YesNoFilter.title = title
    return YesNoFilter

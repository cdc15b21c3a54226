"""FilterSets shared by the REST API and the dashboard tables (one query layer, as NetBox)."""

from __future__ import annotations

from datetime import UTC

import django_filters
from django import forms
from django.db.models import Q
from django_filters.fields import IsoDateTimeField

from .models import CAEvent, Decision

__all__ = ["DecisionFilterSet", "CAEventFilterSet", "UtcIsoDateTimeFilter"]


class UtcIsoDateTimeField(IsoDateTimeField):
    """ISO 8601, normalised to UTC: PostgreSQL rejects UTC offsets beyond +-15:59 that Python accepts
    (``time zone displacement out of range`` was a 500); a value that leaves the calendar is a 400."""

    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        try:
            return value.astimezone(UTC)
        except OverflowError:
            raise forms.ValidationError("date/time out of range", code="invalid") from None


class UtcIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcIsoDateTimeField


class DecisionFilterSet(django_filters.FilterSet):
    """``?q=`` searches pod name/namespace/uid and the top reason; ``?node_group=`` any candidate group."""

    q = django_filters.CharFilter(method="search", label="Search")
    pod_uid = django_filters.CharFilter()
    pod_namespace = django_filters.CharFilter()
    pod_name = django_filters.CharFilter(lookup_expr="icontains")
    verdict = django_filters.MultipleChoiceFilter(choices=Decision.Verdict.choices)
    caller = django_filters.MultipleChoiceFilter(choices=Decision.Caller.choices)
    node_group = django_filters.CharFilter(method="filter_node_group", label="Node group")
    top_reason = django_filters.CharFilter(lookup_expr="icontains")
    since = UtcIsoDateTimeFilter(
        field_name="last_seen", lookup_expr="gte", label="Last seen since (ISO 8601)"
    )
    until = UtcIsoDateTimeFilter(
        field_name="last_seen", lookup_expr="lte", label="Last seen until (ISO 8601)"
    )

    class Meta:
        model = Decision
        fields = [
            "q",
            "pod_uid",
            "pod_namespace",
            "pod_name",
            "verdict",
            "caller",
            "node_group",
            "top_reason",
        ]

    def search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(pod_name__icontains=value)
            | Q(pod_namespace__icontains=value)
            | Q(pod_uid=value)
            | Q(top_reason__icontains=value)
        )

    def filter_node_group(self, queryset, name, value):
        # node_groups is a small JSON list; a text match on its serialised form works on PostgreSQL
        # and SQLite alike (JSON containment lookups are PostgreSQL-only).
        return queryset.filter(node_groups__icontains=f'"{value}"') if value else queryset


class CAEventFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    reason = django_filters.MultipleChoiceFilter(choices=CAEvent.Reason.choices)
    pod_uid = django_filters.CharFilter()
    pod_namespace = django_filters.CharFilter()
    pod_name = django_filters.CharFilter(lookup_expr="icontains")
    group = django_filters.CharFilter(method="filter_group", label="Node group")

    class Meta:
        model = CAEvent
        fields = ["q", "reason", "pod_uid", "pod_namespace", "pod_name", "group"]

    def search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(pod_name__icontains=value) | Q(pod_namespace__icontains=value) | Q(message__icontains=value)
        )

    def filter_group(self, queryset, name, value):
        return queryset.filter(groups__icontains=f'"{value}"') if value else queryset

"""FilterSets shared by the REST API and the pages (NetBox style: one query layer)."""

from __future__ import annotations

import django_filters
from django.db.models import Q

from hami_sim.runtime.models import TaskRun

from .choices import DriftKind, InventorySource, Severity, vendor_choices
from .models import DeviceProfile, DriftFinding, NodeGroup, NodeInventory

__all__ = [
    "NodeGroupFilterSet",
    "DeviceProfileFilterSet",
    "NodeInventoryFilterSet",
    "DriftFindingFilterSet",
    "TaskRunFilterSet",
]


class NodeGroupFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    name = django_filters.CharFilter(lookup_expr="iexact", label="Name")
    provider = django_filters.CharFilter(lookup_expr="iexact")
    instance_type = django_filters.CharFilter(field_name="machine_type", lookup_expr="iexact")
    inventory_source = django_filters.ChoiceFilter(choices=InventorySource.choices)
    has_profile = django_filters.BooleanFilter(method="filter_has_profile", label="Has a device profile")

    class Meta:
        model = NodeGroup
        fields = ["q", "name", "provider", "instance_type", "inventory_source", "has_profile"]

    def search(self, queryset, name, value):
        return queryset.filter(
            Q(name__icontains=value) | Q(machine_type__icontains=value) | Q(description__icontains=value)
        )

    def filter_has_profile(self, queryset, name, value):
        return queryset.filter(profiles__isnull=not value).distinct()


class DeviceProfileFilterSet(django_filters.FilterSet):
    node_group = django_filters.CharFilter(field_name="node_group__name")
    vendor = django_filters.ChoiceFilter(choices=vendor_choices)
    type = django_filters.CharFilter(field_name="devices__type", lookup_expr="icontains", distinct=True)

    class Meta:
        model = DeviceProfile
        fields = ["node_group", "vendor", "type"]


class NodeInventoryFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Search")
    node_group = django_filters.CharFilter(field_name="node_group__name", label="Node group")
    gone = django_filters.BooleanFilter(
        field_name="gone_at", lookup_expr="isnull", exclude=True, label="Gone from the cluster"
    )
    registered = django_filters.BooleanFilter(
        field_name="registered_at", lookup_expr="isnull", exclude=True, label="Registered by HAMi"
    )
    stale = django_filters.BooleanFilter(label="Stale (last read failed)")
    malformed = django_filters.BooleanFilter(method="filter_malformed", label="Malformed registration")

    class Meta:
        model = NodeInventory
        fields = ["q", "node_group", "gone", "registered", "stale", "malformed", "uid"]

    def filter_malformed(self, queryset, name, value):
        return queryset.exclude(parse_error="") if value else queryset.filter(parse_error="")


class DriftFindingFilterSet(django_filters.FilterSet):
    node = django_filters.CharFilter(field_name="inventory__name", label="Node")
    node_group = django_filters.CharFilter(field_name="node_group__name", label="Node group")
    kind = django_filters.ChoiceFilter(choices=DriftKind.choices)
    severity = django_filters.ChoiceFilter(choices=Severity.choices)
    open = django_filters.BooleanFilter(
        field_name="resolved_at", lookup_expr="isnull", label="Open (not resolved)"
    )

    class Meta:
        model = DriftFinding
        fields = ["node", "node_group", "kind", "severity", "open", "field"]


class TaskRunFilterSet(django_filters.FilterSet):
    task = django_filters.CharFilter()
    outcome = django_filters.ChoiceFilter(choices=TaskRun.Outcome.choices)

    class Meta:
        model = TaskRun
        fields = ["task", "outcome"]

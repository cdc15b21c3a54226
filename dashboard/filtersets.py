"""FilterSets of the dashboard's lists: the apps' own (shared with the REST API), plus sessions.

Simulation sessions have no list endpoint in the API, so their FilterSet lives here.
"""

from __future__ import annotations

import contextlib
import uuid

import django_filters
from django import forms
from django.db.models import Q
from django.utils import timezone

from decisions.filtersets import CAEventFilterSet, DecisionFilterSet
from profiles.filtersets import (
    DriftFindingFilterSet,
    NodeGroupFilterSet,
    NodeInventoryFilterSet,
    TaskRunFilterSet,
)
from simulations.models import SimulationSession

__all__ = [  # the FilterSets; ``for_people`` is the pages' view of any of them
    "CAEventFilterSet",
    "DecisionFilterSet",
    "DriftFindingFilterSet",
    "NodeGroupFilterSet",
    "NodeInventoryFilterSet",
    "SessionFilterSet",
    "TaskRunFilterSet",
]


class SessionFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    expired = django_filters.BooleanFilter(method="filter_expired", label="Expired")

    class Meta:
        model = SimulationSession
        fields = ["q", "expired"]

    def search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        q = Q(name__icontains=value)
        with contextlib.suppress(ValueError):  # a session id pasted into the search box
            q |= Q(pk=uuid.UUID(value))
        return queryset.filter(q)

    def filter_expired(self, queryset, name, value):
        now = timezone.now()
        return queryset.filter(expires_at__lte=now) if value else queryset.filter(expires_at__gt=now)


#: A yes/no filter's choices on a page: "any" rather than Django's "Unknown".
ANY_YES_NO = [("", "any"), ("true", "yes"), ("false", "no")]


def for_people(filterset: django_filters.FilterSet) -> django_filters.FilterSet:
    """The FilterSet's form as a page shows it (the API's query parameters stay the same): yes/no
    filters start at "any", several-of choices are check boxes (a 4-row list box hid its fifth
    choice and needed Ctrl-click)."""
    for field in filterset.form.fields.values():
        if isinstance(field, forms.NullBooleanField):
            field.widget = forms.Select(choices=ANY_YES_NO)
        elif isinstance(field, forms.MultipleChoiceField):
            field.widget = forms.CheckboxSelectMultiple(choices=field.choices)
    return filterset

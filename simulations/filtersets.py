"""The sessions list's FilterSet (sessions have no list endpoint in the API, so it is the page's own)."""

from __future__ import annotations

import contextlib
import uuid

import django_filters
from django.db.models import Q
from django.utils import timezone

from .models import SimulationSession

__all__ = ["SessionFilterSet"]


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

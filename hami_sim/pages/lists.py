"""A list page: a FilterSet (the REST API's own), a django-tables2 table, pagination, panels."""

from __future__ import annotations

import django_filters
from django import forms
from django.conf import settings
from django.core.paginator import EmptyPage, PageNotAnInteger
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_tables2 import RequestConfig

from . import panels

__all__ = ["PAGE", "ANY_YES_NO", "choice", "for_people", "list_page", "paginate"]

#: rows per page of a list
PAGE = 25

#: A yes/no filter's choices on a page: "any" rather than Django's "Unknown".
ANY_YES_NO = [("", "any"), ("true", "yes"), ("false", "no")]


def _number(request: HttpRequest, name: str, default: int, most: int) -> int:
    """A positive page number or size from the query, at most ``most``; anything else is ``default``."""
    try:
        value = int(request.GET.get(name, default))
    except ValueError:
        value = default
    return min(max(value, 1), most)


def paginate(request: HttpRequest, table, per_page: int = PAGE, prefix: str = ""):
    """``table`` sorted and paginated by the request's query (``prefix``: several tables on a page).

    ``?per_page=`` is capped at ``API_MAX_PAGE_SIZE``, as the REST API caps ``?limit=``: a page of
    100,000 decisions held a web worker for 139 s and 418 MiB. A page past the end shows the last."""
    if prefix:
        table.prefix = prefix
    RequestConfig(request, paginate=False).configure(table)  # sorting, and the request for links
    size = _number(request, table.prefixed_per_page_field, per_page, settings.API_MAX_PAGE_SIZE)
    number = _number(request, table.prefixed_page_field, 1, 1 << 31)
    try:
        table.paginate(page=number, per_page=size)
    except (PageNotAnInteger, EmptyPage):
        table.paginate(page=table.paginator.num_pages, per_page=size)
    return table


def choice(request: HttpRequest, name: str, choices: dict, default: str) -> str:
    """A query parameter from a fixed set; anything else is the default (never a 400 on a page)."""
    value = request.GET.get(name, default)
    return value if value in choices else default


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


def list_page(
    request: HttpRequest,
    title: str,
    queryset,
    filterset_class,
    table_class,
    api: str = "",
    *,
    page: str = "",
    template: str = "dashboard/list.html",
    extra: dict | None = None,
) -> HttpResponse:
    """A filtered, paginated, sortable table; an invalid filter shows an empty table, never a 500.

    ``page`` names the list for ``panels``: what other apps add below the table."""
    filterset = for_people(filterset_class(request.GET, queryset=queryset))
    table = paginate(request, table_class(filterset.qs if filterset.is_valid() else queryset.none()))
    if any(request.GET.get(name) not in (None, "") for name in filterset.filters):
        table.empty_text = f"No {title.lower()} match these filters."
    context = {
        "title": title,
        "filter": filterset,
        "table": table,
        "api": api,
        "panels": panels.render(request, page, None) if page else {},
        **(extra or {}),
    }
    return render(request, template, context)

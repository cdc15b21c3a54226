"""``{% nav_links %}``: the header's links, the current section marked ``aria-current="page"``."""

from __future__ import annotations

from django import template
from django.urls import reverse

from dashboard.nav import NAV, section_of

register = template.Library()


@register.simple_tag(takes_context=True)
def nav_links(context) -> list[dict]:
    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    current = section_of(match.url_name, match.namespace) if match else None
    return [
        {
            "label": item.label,
            "href": item.target if item.target.startswith("/") else reverse(f"dashboard:{item.target}"),
            "current": item is current,
        }
        for item in NAV
    ]

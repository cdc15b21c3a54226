"""Panels: a section one app adds to another app's page without that page importing it.

Layers only point down (``.importlinter``): a node group's page belongs to ``profiles`` and cannot
import the decisions that name the group (``decisions``, a layer up). So the upper app registers a
panel for the page in its ``AppConfig.ready``, as NetBox's template extensions do, and the page
shows what is registered at its named slots (``{% for html in panels.<slot> %}{{ html }}``).
A panel names its view function by dotted path, imported on first use: registering one at start-up
loads no page code into the extender or the worker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString

__all__ = ["Panel", "register", "render"]


@dataclass(frozen=True, slots=True)
class Panel:
    #: the page it goes on (``"node-group"``, ``"drift"``) and where on it (a slot the page names)
    page: str
    slot: str
    #: the panel's own template, rendered with what ``context`` returns (and the request)
    template: str
    #: dotted path of ``(request, the page's object) -> context``; a None context leaves the panel out
    context: str
    order: int = 0


_PANELS: dict[tuple[str, str, str], Panel] = {}


def register(panel: Panel) -> Panel:
    """Add ``panel`` (once: registering the same page, slot and template again replaces it)."""
    _PANELS[(panel.page, panel.slot, panel.template)] = panel
    return panel


def render(request: HttpRequest, page: str, obj: object) -> dict[str, list[SafeString]]:
    """Per slot of ``page``, each registered panel's HTML in order (panels that return None left out)."""
    out: dict[str, list[SafeString]] = {}
    for panel in sorted(_PANELS.values(), key=lambda p: (p.order, p.template)):
        if panel.page != page:
            continue
        view: Callable[[HttpRequest, object], Mapping | None] = import_string(panel.context)
        context = view(request, obj)
        if context is not None:
            out.setdefault(panel.slot, []).append(render_to_string(panel.template, context, request))
    return out

"""The dashboard's navigation: one list of sections, and which one a page belongs to.

A detail page highlights its list's section (a pod page is under Decisions, a node under Nodes), so
the current place is visible on every page, not just on the lists.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NAV", "NavItem", "section_of"]


@dataclass(frozen=True, slots=True)
class NavItem:
    label: str
    #: the list page's URL name in the ``dashboard`` namespace, or a plain path (the API docs)
    target: str
    #: every URL name (without the namespace) whose pages belong to this section
    pages: tuple[str, ...] = ()


NAV: tuple[NavItem, ...] = (
    NavItem("Overview", "overview", ("overview",)),
    NavItem("Decisions", "decisions", ("decisions", "decision", "pod")),
    NavItem("CA events", "events", ("events",)),
    NavItem("Node groups", "node-groups", ("node-groups", "node-group")),
    NavItem("Nodes", "nodes", ("nodes", "node")),
    NavItem("DRA", "dra", ("dra",)),
    NavItem("Drift", "drift", ("drift",)),
    NavItem("Sessions", "sessions", ("sessions", "session")),
    NavItem("What-if", "what-if", ("what-if",)),
    NavItem("Upgrade", "upgrade", ("upgrade",)),
    NavItem("Task runs", "task-runs", ("task-runs",)),
    NavItem("Diagnostics", "diagnostics", ("diagnostics",)),
    NavItem("API", "/api/docs/"),
)


def section_of(url_name: str | None, namespace: str | None = "dashboard") -> NavItem | None:
    """The nav item a dashboard page belongs to; None for pages outside the dashboard."""
    if namespace != "dashboard" or not url_name:
        return None
    return next((item for item in NAV if url_name in item.pages), None)

"""The blind-spot list: the pods upstream CA cannot see, as every view lists them (the REST endpoint
``/api/v1/blind-spot``, the full list page, the overview's summary). One filter, one row shape, one
way to group identical pods and to say how long they have waited."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hami_sim.engine.blindspot import PodViews
from hami_sim.pages.ages import human_age

from .blindspot import GroupAnswer, Report, banner

__all__ = ["InvisibleRow", "PodGroup", "invisible_rows", "grouped"]


@dataclass(slots=True)
class InvisibleRow:
    """One invisible pod: both views, how long it has been pending, the one-line message, and the
    estimator's answer for its node group (the same for every pod of the group)."""

    view: PodViews
    age_seconds: float
    message: str
    answer: GroupAnswer | None

    @property
    def age(self) -> str:
        return human_age(self.age_seconds)


@dataclass(slots=True)
class PodGroup:
    """Invisible pods that read the same (namespace, node CA puts them on, message): one line."""

    namespace: str
    node_group: str
    message: str
    rows: list[InvisibleRow] = field(default_factory=list)

    @property
    def oldest(self) -> str:
        return human_age(max(r.age_seconds for r in self.rows))

    @property
    def names(self) -> list[str]:
        return sorted(r.view.name for r in self.rows)


def _matches(view: PodViews, node_group: str, namespace: str, q: str) -> bool:
    return (
        (not node_group or view.ca_node_group == node_group)
        and (not namespace or view.namespace == namespace)
        and (not q or q.lower() in view.name.lower())
    )


def invisible_rows(
    report: Report, node_group: str = "", namespace: str = "", q: str = ""
) -> list[InvisibleRow]:
    """The invisible pods of ``report`` that match (``node_group``: the group CA thinks takes them;
    ``q``: part of the pod's name), oldest first, then by namespace and name."""
    rows = [
        InvisibleRow(
            v,
            report.ages.get(v.pod, 0.0),
            banner(v),
            report.groups.get(v.ca_node_group or "(no node group)"),
        )
        for v in report.invisible
        if _matches(v, node_group, namespace, q)
    ]
    rows.sort(key=lambda r: (-r.age_seconds, r.view.namespace, r.view.name))
    return rows


def grouped(rows: Iterable[InvisibleRow]) -> list[PodGroup]:
    """Identical pods on one line each (first seen first): 32 replicas waiting for the same card read
    as one group of 32, not 32 rows."""
    groups: dict[tuple[str, str, str], PodGroup] = {}
    for row in rows:
        key = (row.view.namespace, row.view.ca_node_group, row.message)
        found = groups.get(key)
        if found is None:
            found = groups[key] = PodGroup(*key)
        found.rows.append(row)
    return list(groups.values())

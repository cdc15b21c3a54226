"""django-tables2 tables of decisions and CA events; every name links to its page."""

from __future__ import annotations

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html

from hami_sim.engine.hami_expander import unjudged_head
from profiles.tables import ATTRS, group_links

from .models import CAEvent, Decision

__all__ = ["DecisionTable", "CAEventTable"]


class DecisionTable(tables.Table):
    pod = tables.Column(accessor="pod_name", verbose_name="Pod", order_by=("pod_namespace", "pod_name"))
    verdict = tables.Column()
    node_groups = tables.Column(verbose_name="Node groups", orderable=False)
    fit_groups = tables.Column(verbose_name="Fits", orderable=False)
    top_reason = tables.Column(verbose_name="Top reason")
    caller = tables.Column()
    count = tables.Column(verbose_name="Asked")
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = Decision
        empty_text = (
            "No decisions yet: one is recorded each time CA (or the what-if page) asks hami-sim about a pod."
        )
        fields = ("pod", "verdict", "node_groups", "fit_groups", "top_reason", "caller", "count", "last_seen")
        attrs = ATTRS
        order_by = "-last_seen"

    def render_pod(self, record):
        return format_html(
            '<a class="pod-link" href="{}">{}/{}</a>',
            record.get_absolute_url(),
            record.pod_namespace,
            record.pod_name,
        )

    def render_verdict(self, record):
        return format_html('<span class="badge v-{}">{}</span>', record.verdict, record.get_verdict_display())

    def render_top_reason(self, record, value):
        """A pod that fits has no failure reason to headline (some nodes' rejections are detail), but an
        expander option kept without being judged is always named ("kept, not judged: ...")."""
        if value.startswith(unjudged_head(True)):
            return format_html('<span class="badge v-unresolvable unjudged">{}</span>', value)
        return "—" if record.verdict == Decision.Verdict.FIT else value

    def render_node_groups(self, value):
        return group_links(value)

    def render_fit_groups(self, value):
        return group_links(value)


class CAEventTable(tables.Table):
    reason = tables.Column()
    pod = tables.Column(accessor="pod_name", verbose_name="Pod")
    message = tables.Column(orderable=False)
    count = tables.Column()
    last_seen = tables.DateTimeColumn()

    class Meta:
        model = CAEvent
        empty_text = (
            "No Cluster Autoscaler events synced yet (CA's TriggeredScaleUp / NotTriggerScaleUp pod events)."
        )
        fields = ("reason", "pod", "message", "count", "last_seen")
        attrs = ATTRS

    def render_pod(self, record):
        return format_html(
            '<a href="{}">{}/{}</a>',
            reverse("dashboard:pod", args=[record.pod_namespace, record.pod_name]),
            record.pod_namespace,
            record.pod_name,
        )

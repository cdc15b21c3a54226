"""REST representations of decisions, CA events and CA status snapshots."""

from __future__ import annotations

from rest_framework import serializers

from ..models import AutoscalerStatus, CAEvent, Decision

__all__ = [
    "DecisionSerializer",
    "DecisionListSerializer",
    "CAEventSerializer",
    "AutoscalerStatusSerializer",
    "UpgradeSerializer",
]


class DecisionListSerializer(serializers.ModelSerializer):
    """List rows leave out the per-node detail (it can be megabytes for a large CA loop)."""

    url = serializers.HyperlinkedIdentityField(view_name="decision-detail")

    class Meta:
        model = Decision
        fields = [
            "id",
            "url",
            "pod_uid",
            "pod_namespace",
            "pod_name",
            "pod_owner",
            "caller",
            "session",
            "verdict",
            "node_groups",
            "fit_groups",
            "node_count",
            "fit_count",
            "top_reason",
            "hami_release",
            "ca_release",
            "latency_ms",
            "count",
            "first_seen",
            "last_seen",
        ]
        read_only_fields = fields


class DecisionSerializer(DecisionListSerializer):
    class Meta(DecisionListSerializer.Meta):
        fields = [*DecisionListSerializer.Meta.fields, "request", "policies", "nodes", "pod_spec"]
        read_only_fields = fields


class CAEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = CAEvent
        fields = [
            "id",
            "event_uid",
            "reason",
            "source",
            "pod_uid",
            "pod_namespace",
            "pod_name",
            "message",
            "parsed",
            "groups",
            "count",
            "first_seen",
            "last_seen",
            "synced_at",
        ]
        read_only_fields = fields


class AutoscalerStatusSerializer(serializers.ModelSerializer):
    class Meta:
        model = AutoscalerStatus
        fields = ["id", "fetched_at", "raw", "parsed", "error"]
        read_only_fields = fields


# -- GET /api/v1/upgrade (a computed answer: described for the OpenAPI schema, rendered as a dict) --------
class RuleChangeSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="the rule's name (a field of hami_releases.HamiRules)")
    description = serializers.CharField(help_text="what changed, release by release")
    pr = serializers.IntegerField(help_text="the HAMi pull request that changed it")


class UpgradeOutcomeSerializer(serializers.Serializer):
    fits = serializers.BooleanField()
    node = serializers.CharField(allow_null=True, help_text="the live node HAMi would pick; null: a new node")
    nodeGroup = serializers.CharField(allow_null=True)  # noqa: N815
    devices = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="per container, the devices chosen",
    )
    reason = serializers.CharField(help_text="why it fits nowhere (empty when it fits)")


class UpgradePodSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    uid = serializers.CharField()
    source = serializers.ChoiceField(choices=["pending", "decision"])
    decision = serializers.IntegerField(allow_null=True, help_text="the decision it was read from")


class UpgradeChangeSerializer(serializers.Serializer):
    pod = UpgradePodSerializer()
    changed = serializers.ListField(child=serializers.ChoiceField(choices=["verdict", "group", "devices"]))
    current = UpgradeOutcomeSerializer(help_text="under the release hami-sim follows")
    other = UpgradeOutcomeSerializer(help_text="under the release asked about")
    rules = RuleChangeSerializer(many=True)
    together = serializers.BooleanField(help_text="no single rule changes it: the listed rules do together")
    sentence = serializers.CharField()


class UnjudgedSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    error = serializers.CharField()


class UpgradeSerializer(serializers.Serializer):
    current = serializers.CharField(help_text="the release hami-sim follows (HAMI_VERSION)")
    release = serializers.CharField(help_text="the release asked about")
    differences = RuleChangeSerializer(many=True, help_text="every rule that differs between the two")
    judged = serializers.IntegerField(help_text="pods judged under both releases")
    cap = serializers.IntegerField(help_text="the most pods one comparison judges")
    capped = serializers.BooleanField(
        help_text="there were more pods than the cap: only the first were judged"
    )
    changes = UpgradeChangeSerializer(many=True)
    unjudged = UnjudgedSerializer(many=True, help_text="pods that could not be parsed")

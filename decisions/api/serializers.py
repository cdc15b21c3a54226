"""REST representations of decisions, CA events and CA status snapshots."""

from __future__ import annotations

from rest_framework import serializers

from ..models import AutoscalerStatus, CAEvent, Decision

__all__ = ["DecisionSerializer", "DecisionListSerializer", "CAEventSerializer", "AutoscalerStatusSerializer"]


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

"""REST representation of the blind-spot list (``/api/v1/blind-spot``) and its filters."""

from __future__ import annotations

from rest_framework import serializers

__all__ = ["BlindSpotFilterSerializer", "InvisiblePodSerializer"]


class BlindSpotFilterSerializer(serializers.Serializer):
    """The list's filters: the same on the REST endpoint and on the full list page."""

    node_group = serializers.CharField(
        required=False, allow_blank=True, max_length=253, help_text="the node group CA thinks takes the pod"
    )
    namespace = serializers.CharField(required=False, allow_blank=True, max_length=253)
    q = serializers.CharField(
        required=False, allow_blank=True, max_length=253, help_text="part of the pod's name"
    )


class EstimateAnswerSerializer(serializers.Serializer):
    """What the estimator answers for all the invisible pods of the node group (as POST /api/v1/estimate)."""

    node_group = serializers.CharField(allow_null=True, source="estimate_group")
    new_nodes = serializers.IntegerField(source="estimate_nodes")
    pods = serializers.SerializerMethodField(
        help_text="the group's invisible pods the estimate was asked for"
    )
    pods_left = serializers.IntegerField(source="estimate_left")
    reason = serializers.CharField(source="estimate_reason")

    def get_pods(self, answer) -> int:
        return len(answer.pods)


class InvisiblePodSerializer(serializers.Serializer):
    """A pending pod CA's count-only view places on an existing node while HAMi places it nowhere."""

    pod_uid = serializers.CharField(source="view.pod")
    namespace = serializers.CharField(source="view.namespace")
    name = serializers.CharField(source="view.name")
    ca_node = serializers.CharField(source="view.ca_node", help_text="the node CA's filter puts it on")
    ca_node_group = serializers.CharField(source="view.ca_node_group")
    ca_free = serializers.DictField(
        child=serializers.IntegerField(), source="view.ca_free", help_text="what CA counts free there"
    )
    hami_reason = serializers.CharField(source="view.hami_reason")
    device_memory = serializers.IntegerField(source="view.device_memory", help_text="MiB per card asked")
    largest_free_card = serializers.IntegerField(
        source="view.largest_free_card",
        allow_null=True,
        help_text="MiB free on the roomiest card it could use",
    )
    pending_seconds = serializers.IntegerField(source="age_seconds")
    message = serializers.CharField()
    estimate = EstimateAnswerSerializer(source="answer", allow_null=True)

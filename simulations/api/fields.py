"""Strict JSON fields for the API's request serializers: a JSON client sends numbers and strings,
not things that look like them.

DRF's own fields coerce (``"5"`` passes an IntegerField, ``1`` a CharField); a body that does that
is a client bug we would rather name than guess at, so the ``/api/v1`` bodies use these.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

__all__ = ["StrictCharField", "StrictIntegerField", "StrictBooleanField", "JSONObjectField", "JSONListField"]


class StrictCharField(serializers.CharField):
    """A JSON string; DRF's ``CharField`` would turn ``7`` into ``"7"``."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer; DRF's ``IntegerField`` would accept ``"60"``, ``true`` and ``60.0``."""

    def to_internal_value(self, data: object) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true``/``false``; DRF's ``BooleanField`` would accept ``"yes"``, ``1`` and ``"on"``."""

    def to_internal_value(self, data: object) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(serializers.JSONField):
    """A JSON object (a Kubernetes Pod or Node) passed through untouched."""

    default_error_messages = {"invalid": "must be a JSON object"}

    def to_internal_value(self, data: object) -> dict:
        if not isinstance(data, dict):
            self.fail("invalid")
        return data


@extend_schema_field({"type": "array", "items": {}})
class JSONListField(serializers.JSONField):
    """A JSON value (a list, when valid) that the serializer's ``validate_<field>`` checks.

    Unlike ``JSONField`` it does not re-encode the value to prove it is JSON: it came from the JSON
    parser, and an estimate may carry 100,000 pods.
    """

    def to_internal_value(self, data: object) -> object:
        return data

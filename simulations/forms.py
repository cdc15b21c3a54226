"""The sessions page's form: a new session, as ``POST /api/v1/sessions`` makes one."""

from __future__ import annotations

from django import forms

__all__ = ["SessionCreateForm"]


class SessionCreateForm(forms.Form):
    """A new simulation session from the sessions page (the API's ``name`` and ``ttlSeconds``)."""

    name = forms.CharField(max_length=200, required=False)
    ttl_seconds = forms.IntegerField(min_value=1, max_value=86400, initial=3600, label="TTL (s)")

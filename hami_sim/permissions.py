"""Roles for REST writes (issue 16 item 9): reading stays as the API's default permission says,
writing a model needs that model's Django permission (the ``operators`` group has them).

Before this, any logged-in user or token holder, with no permission at all, created, edited and
deleted node groups and profiles; a login is identity, the group membership is the role.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, DjangoModelPermissions

__all__ = ["ModelWritePermissions"]


class ModelWritePermissions(DjangoModelPermissions):
    """``DjangoModelPermissions`` for unsafe methods only; reads are left to the other classes."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return super().has_permission(request, view)

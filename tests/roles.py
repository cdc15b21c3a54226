"""The ``operators`` group, as its data migrations (``dashboard/0001`` and ``0002``) make it.

A ``transaction=True`` test flushes the database when it ends, migration-made rows included, and
pytest-django runs those tests last: a later test must not rely on the migration's row surviving.
"""

from __future__ import annotations

import importlib

from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission

from tests.factories.models import GroupFactory

__all__ = ["operators_group"]

_MIGRATIONS = [
    importlib.import_module("dashboard.migrations.0001_operators_group"),
    importlib.import_module("dashboard.migrations.0002_operators_sessions"),
]


def operators_group() -> Group:
    """The group with the migration's permissions, made again if a flush removed it."""
    group = Group.objects.filter(name="operators").first()
    if group is not None:
        return group
    for app_config in apps.get_app_configs():
        create_permissions(app_config, verbosity=0)
    granted: list[Permission] = []
    for migration in _MIGRATIONS:
        for app_label, models in migration.APP_MODELS.items():
            codenames = [f"{action}_{model}" for model in models for action in migration.ACTIONS]
            granted += Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
    return GroupFactory(name="operators", permissions=granted)

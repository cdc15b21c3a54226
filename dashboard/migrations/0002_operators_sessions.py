"""The ``operators`` group may also create sessions and fork, revert or commit them from the dashboard.

The session pages' buttons are writes (every write needs a role), so they ask for
``simulations.add_simulationsession`` / ``change_simulationsession`` rather than any login. The
session REST API on the extender listener is CA's, authenticated by mTLS, and is not affected.
"""

import importlib

from django.db import migrations

APP_MODELS = {"simulations": ["simulationsession"]}
ACTIONS = ["add", "change"]


def grant(apps, schema_editor):
    first = importlib.import_module("dashboard.migrations.0001_operators_group")
    first.grant_operators(apps, APP_MODELS, ACTIONS)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="operators").first()
    if group is not None:
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="simulations"))


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_operators_group"),
        ("simulations", "0003_session_node_inventory_error"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

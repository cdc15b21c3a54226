"""The ``operators`` group may also create sessions and fork, revert or commit them from the dashboard.

The session pages' buttons are writes (issue 16 item 9: every write needs a role), so they ask for
``simulations.add_simulationsession`` / ``change_simulationsession`` rather than any login. The
session REST API on the extender listener is CA's, authenticated by mTLS, and is not affected.
"""

from django.db import migrations

APP_MODELS = {"simulations": ["simulationsession"]}
ACTIONS = ["add", "change"]


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="operators")
    for app_label, models in APP_MODELS.items():
        codenames = [f"{action}_{model}" for model in models for action in ACTIONS]
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        )


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

"""The ``operators`` group: who may write node groups and device profiles (a login alone only reads).

REST writes to ``/api/v1/node-groups/`` and ``/api/v1/device-profiles/`` need Django model permissions
(DjangoModelPermissions); a login or a token alone only reads. This group holds add/change/delete/view
on the profile catalog; put operators (and GitOps tokens' users) in it. It lives in ``dashboard``
because that app sits above every app whose permissions it grants.
"""

from django.db import migrations

APP_MODELS = {"profiles": ["nodegroup", "deviceprofile", "devicerow"]}
ACTIONS = ["add", "change", "delete", "view"]


def grant_operators(apps, app_models: dict[str, list[str]], actions: list[str]) -> None:
    """Give the ``operators`` group (made if missing) these actions on these models."""
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after migrate (post_migrate); make sure they exist now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="operators")
    for app_label, models in app_models.items():
        codenames = [f"{action}_{model}" for model in models for action in actions]
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        )


def create_operators(apps, schema_editor):
    grant_operators(apps, APP_MODELS, ACTIONS)


def remove_operators(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="operators").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("profiles", "0005_inventory_capacity"),
    ]

    operations = [migrations.RunPython(create_operators, remove_operators)]

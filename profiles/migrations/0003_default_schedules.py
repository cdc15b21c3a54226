"""The catalog generation row, and default schedules for the profiles tasks (editable in the admin)."""

from django.db import migrations

SCHEDULES = [
    ("profiles: sync cluster inventory", "profiles.tasks.sync_cluster_inventory", 300),
    ("profiles: check drift", "profiles.tasks.check_drift", 600),
]


def forwards(apps, schema_editor):
    apps.get_model("profiles", "CatalogVersion").objects.get_or_create(pk=1, defaults={"generation": 0})
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, seconds in SCHEDULES:
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.get_or_create(name=name, defaults={"task": task, "interval": interval, "enabled": True})


def backwards(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[s[0] for s in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("profiles", "0002_profiles_models"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]

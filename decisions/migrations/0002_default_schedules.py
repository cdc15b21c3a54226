"""Default beat schedules for the decisions tasks (editable in the admin afterwards)."""

from django.db import migrations

SCHEDULES = [
    ("hami-sim: sync autoscaler events", "decisions.tasks.sync_autoscaler_events", 60),
    ("hami-sim: prune decisions", "decisions.tasks.prune_decisions", 3600),
]


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, seconds in SCHEDULES:
        interval, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.get_or_create(name=name, defaults={"task": task, "interval": interval})


def remove(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[name for name, _, _ in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(create, remove)]

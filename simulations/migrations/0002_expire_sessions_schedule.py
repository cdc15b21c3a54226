"""Default schedule for ``expire_sessions`` (every minute; editable in the admin)."""

from django.db import migrations

NAME = "simulations: expire sessions"
TASK = "simulations.tasks.expire_sessions"


def forwards(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    interval = IntervalSchedule.objects.filter(every=60, period="seconds").first()
    if interval is None:
        interval = IntervalSchedule.objects.create(every=60, period="seconds")
    PeriodicTask.objects.get_or_create(name=NAME, defaults={"task": TASK, "interval": interval, "enabled": True})


def backwards(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("simulations", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]

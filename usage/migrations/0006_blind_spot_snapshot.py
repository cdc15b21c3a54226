"""The blind spot's series computed off the request path, and their default schedule (editable in the admin)."""

from django.db import migrations, models

SCHEDULES = [("usage: refresh the blind spot's series", "usage.tasks.refresh_blind_spot", 60)]


def forwards(apps, schema_editor):
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
        ("usage", "0005_dra_objects"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.CreateModel(
            name="BlindSpotSnapshot",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("series", models.JSONField(default=dict, help_text="{metric name: [[labels, value], ...]}")),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                ("seconds", models.FloatField(default=0.0, help_text="how long the computation took")),
                (
                    "error",
                    models.TextField(blank=True, help_text="why the last computation failed, empty once one succeeds"),
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]

"""TaskRun moves from ``profiles`` to ``runtime``: state only, the table ``profiles_taskrun`` stays.

The content type is renamed too, so permissions granted on task runs and admin log entries follow.
"""

from django.db import migrations, models


def _move_content_type(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    if ContentType.objects.filter(app_label="runtime", model="taskrun").exists():
        return
    ContentType.objects.filter(app_label="profiles", model="taskrun").update(app_label="runtime")


def _move_content_type_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="runtime", model="taskrun").update(app_label="profiles")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("profiles", "0005_inventory_capacity"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="TaskRun",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("task", models.CharField(db_index=True, max_length=100)),
                        ("task_id", models.CharField(blank=True, max_length=100)),
                        ("started_at", models.DateTimeField(db_index=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("duration_ms", models.PositiveIntegerField(blank=True, null=True)),
                        ("outcome", models.CharField(choices=[("running", "Running"), ("success", "Success"), ("failure", "Failure"), ("retry", "Retry")], db_index=True, default="running", max_length=10)),
                        ("counts", models.JSONField(blank=True, default=dict)),
                        ("error", models.TextField(blank=True)),
                    ],
                    options={
                        "db_table": "profiles_taskrun",
                        "ordering": ["-started_at"],
                        "indexes": [models.Index(fields=["task", "-started_at"], name="profiles_ta_task_ceb160_idx")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_move_content_type, _move_content_type_back),
    ]

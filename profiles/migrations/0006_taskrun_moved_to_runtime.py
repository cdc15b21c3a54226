"""TaskRun now belongs to ``hami_sim.runtime`` (its migration 0001 takes over the same table)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("profiles", "0005_inventory_capacity"),
        ("runtime", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="TaskRun")],
            database_operations=[],
        ),
    ]

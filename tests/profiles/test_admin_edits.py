"""An admin edit of a profile is one version, and its drift findings are in the admin at once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories.models import NodeGroupFactory

from .conftest import A10
from .test_admin import profile_form
from .test_drift import a10_node, open_findings

pytestmark = [pytest.mark.django_db]


def test_admin_edit_and_revert_each_bump_once_and_recheck_drift(
    admin_client, db, django_capture_on_commit_callbacks
):
    from profiles.models import DeviceProfile
    from profiles.sync import sync_nodes

    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    sync_nodes([a10_node()])
    profile = DeviceProfile.objects.get(node_group=group)
    assert profile.version == 1 and open_findings() == set()
    first = profile.history.order_by("history_date").last()
    change_url = reverse("admin:profiles_deviceprofile_change", args=[profile.pk])

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            change_url,
            profile_form(
                group.pk,
                [{**A10, "devmem": 40000, "quantity": 4}],
                initial=[profile.devices.get().pk],
                notes="bigger cards",
            ),
        )
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.version == 2  # header and rows in one form: one version
    assert open_findings() == {("mismatch", "devmem", str(i)) for i in range(4)}
    page = admin_client.get(reverse("admin:profiles_driftfinding_changelist") + "?open=yes").content.decode()
    assert "40000 MiB" in page and "23028 MiB" in page

    # posting the same form again changes nothing: no new version
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            change_url,
            profile_form(
                group.pk,
                [{**A10, "devmem": 40000, "quantity": 4}],
                initial=[profile.devices.get().pk],
                notes="bigger cards",
            ),
        )
    profile.refresh_from_db()
    assert profile.version == 2

    history_url = reverse("admin:profiles_deviceprofile_simple_history", args=[profile.pk, first.history_id])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            history_url, {"node_group": str(group.pk), "vendor": "NVIDIA", "pair_scores": "{}", "notes": ""}
        )
    assert response.status_code == 302
    profile.refresh_from_db()
    assert profile.version == 3 and profile.rows_data()[0]["devmem"] == 23028
    assert open_findings() == set()

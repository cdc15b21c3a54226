"""A profile edit re-checks drift for its group's nodes as soon as it commits (not 10 minutes later)."""

from __future__ import annotations

import pytest

from tests.factories.models import NodeGroupFactory

from .conftest import A10
from .test_drift import _with, a10_node, open_findings

pytestmark = [pytest.mark.api, pytest.mark.django_db]


@pytest.fixture
def registered(db):
    """Group gpu-a10 (4 x A10G) with node n1 registering exactly that, and another group's node n2."""
    from profiles.models import DriftFinding
    from profiles.sync import sync_nodes

    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    other = NodeGroupFactory(name="gpu-other", rows=[{**A10, "quantity": 4}], match_labels={"pool": "other"})
    n2 = _with({0: {"devmem": 16000}}, "n2")
    n2["metadata"]["labels"] = {"pool": "other"}
    sync_nodes([a10_node(), n2])
    assert open_findings() == set()
    assert DriftFinding.objects.filter(inventory__name="n2", resolved_at__isnull=True).count() == 1
    return group, other


def test_devmem_edit_via_the_api_opens_then_resolves_a_finding(
    registered, token_client, django_capture_on_commit_callbacks
):
    from profiles.models import DriftFinding

    group, _ = registered
    url = f"/api/v1/device-profiles/{group.profiles.get().pk}/"
    n2_before = list(DriftFinding.objects.filter(inventory__name="n2").values_list("pk", "resolved_at"))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = token_client.patch(
            url, {"devices": [{**A10, "devmem": 40000, "quantity": 4}]}, format="json"
        )
    assert response.status_code == 200, response.content
    assert len(callbacks) == 1  # one check for the group, however many saves the edit made
    assert open_findings() == {("mismatch", "devmem", str(i)) for i in range(4)}
    finding = DriftFinding.objects.filter(inventory__name="n1", resolved_at__isnull=True).first()
    assert (finding.expected, finding.actual) == ("40000 MiB", "23028 MiB")
    # the other group's node was not touched
    assert (
        list(DriftFinding.objects.filter(inventory__name="n2").values_list("pk", "resolved_at")) == n2_before
    )
    listed = token_client.get("/api/v1/drift-findings/?node=n1&open=true").json()
    assert listed["count"] == 4 and {f["field"] for f in listed["results"]} == {"devmem"}

    with django_capture_on_commit_callbacks(execute=True):
        response = token_client.patch(url, {"devices": [{**A10, "quantity": 4}]}, format="json")
    assert response.status_code == 200, response.content
    assert open_findings() == set()
    assert DriftFinding.objects.filter(inventory__name="n1", resolved_at__isnull=False).count() == 4


def test_a_rejected_edit_checks_nothing(registered, token_client, django_capture_on_commit_callbacks):
    group, _ = registered
    url = f"/api/v1/device-profiles/{group.profiles.get().pk}/"
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = token_client.patch(url, {"devices": [{**A10, "devmem": -1}]}, format="json")
    assert response.status_code == 400
    assert callbacks == [] and open_findings() == set()


def test_a_yaml_import_rechecks_each_changed_group_once(
    registered, tmp_path, django_capture_on_commit_callbacks
):
    from io import StringIO

    import yaml
    from django.core.management import call_command

    from profiles.yamlio import export_profiles

    data = export_profiles()
    data["node_groups"][0]["profiles"][0]["devices"][0]["devmem"] = 30000
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        call_command("import_profiles", str(path), stdout=StringIO())
    assert open_findings() == {("mismatch", "devmem", str(i)) for i in range(4)}
    assert len(callbacks) <= 2  # at most one per group in the file


@pytest.mark.django_db(transaction=True)
def test_really_committed_edit_has_its_findings_when_the_response_arrives(db, token_client):
    """No captured callbacks: the request's transaction really commits and the check runs after it."""
    from profiles.sync import sync_nodes

    group = NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    sync_nodes([a10_node()])
    url = f"/api/v1/device-profiles/{group.profiles.get().pk}/"
    response = token_client.patch(url, {"devices": [{**A10, "devmem": 40000, "quantity": 4}]}, format="json")
    assert response.status_code == 200 and response.json()["version"] == 2
    assert open_findings() == {("mismatch", "devmem", str(i)) for i in range(4)}
    token_client.patch(url, {"devices": [{**A10, "quantity": 4}]}, format="json")
    assert open_findings() == set()

"""The cluster sync reads which HAMi release the cluster runs (its scheduler's and device plugin's
images, through the real ``kubernetes`` client against the API double) and raises a finding, a metric
and an alert when it is not ``HAMI_VERSION``."""

from __future__ import annotations

import time

import pytest

from tests.deploy.promql import as_dicts, evaluate
from tests.factories import hami_workload
from tests.factories.models import UserFactory

pytestmark = [pytest.mark.django_db]


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("docker.io/projecthami/hami:v2.9.0", ("v2.9.0", "2.9")),
        ("projecthami/hami:2.10.0", ("2.10.0", "2.10")),
        ("registry.example.com:5000/mirror/projecthami/hami:v2.8.3", ("v2.8.3", "2.8")),
        ("projecthami/hami:v2.9.0@sha256:0123abcd", ("v2.9.0", "2.9")),
        ("projecthami/hami:v2.10.0-rc.1", ("v2.10.0-rc.1", "2.10")),
        # a HAMi image that names no release: the chart label decides, else unknown
        ("projecthami/hami@sha256:0123abcd", ("", "")),
        ("projecthami/hami:latest", ("", "")),
        ("projecthami/hami", ("", "")),
        # not HAMi's image at all
        ("registry.k8s.io/kube-scheduler:v1.32.2", None),
        ("projecthami/hami-webui:v2.9.0", None),
        ("registry.example.com:5000/hami", ("", "")),
    ],
)
def test_the_release_a_hami_image_names(image, expected):
    from profiles.hami_install import image_version

    assert image_version(image) == expected


@pytest.fixture
def kube(tmp_path, settings):
    from tests.kubeapi import FakeKubeAPI

    settings.KUBE_REQUEST_TIMEOUT = 2.0
    with FakeKubeAPI() as api:
        api.source = f"kubeconfig:{api.write_kubeconfig(tmp_path / 'kubeconfig')}"
        yield api


def _sync(source: str) -> dict:
    from profiles.tasks import sync_cluster_inventory

    return sync_cluster_inventory.apply(kwargs={"source": source}).get()


def _scrape(client) -> str:
    return client.get("/metrics").content.decode()


def test_a_v2_9_cluster_is_detected_and_differs_from_the_configured_release(kube, settings, client):
    from profiles.models import HamiInstall

    settings.HAMI_VERSION = "2.10"
    kube.workloads = [
        hami_workload("Deployment", "docker.io/projecthami/hami:v2.9.0"),
        hami_workload("DaemonSet", "docker.io/projecthami/hami:v2.9.0"),
        # another namespace's HAMi is not the cluster's scheduler
        hami_workload("Deployment", "projecthami/hami:v2.8.3", namespace="other"),
    ]
    counts = _sync(kube.source)
    assert counts["hami_release"] == "2.9"
    install = HamiInstall.objects.get()
    assert (install.release, install.version, install.error) == ("2.9", "v2.9.0", "")
    assert install.basis == "Deployment hami-scheduler, container vgpu-scheduler-extender: image"
    assert {(w["kind"], w["container"], w["release"]) for w in install.workloads} == {
        ("Deployment", "vgpu-scheduler-extender", "2.9"),
        ("DaemonSet", "device-plugin", "2.9"),
    }
    # the real client asked the apps group in kube-system, by HAMi's component labels
    apps = [r for r in kube.requests if r.startswith("/apis/apps/v1/")]
    assert [r.split("?")[0] for r in apps] == [
        "/apis/apps/v1/namespaces/kube-system/deployments",
        "/apis/apps/v1/namespaces/kube-system/daemonsets",
    ]
    assert "labelSelector=app.kubernetes.io/component%3Dhami-scheduler" in apps[0]

    # the metric says so; the alert fires with both releases
    text = _scrape(client)
    assert 'hami_sim_hami_release_mismatch{configured="2.10",detected="2.9"} 1.0' in text
    from tests.deploy.test_monitoring_queries import ALERTS

    now = time.time()
    fired = as_dicts(evaluate(ALERTS["HamiSimHamiReleaseMismatch"], [(now - 60, text), (now, text)]))
    assert fired == {(("configured", "2.10"), ("detected", "2.9")): 1.0}

    # and the dashboard's overview shows the finding
    UserFactory(username="oncall", password="pw", is_staff=True)
    client.login(username="oncall", password="pw")
    page = client.get("/").content.decode()
    assert "The cluster runs HAMi v2.9.0" in page and "Set HAMI_VERSION=2.9" in page

    # configured to match: no finding, the gauge reads 0 and the alert is quiet
    settings.HAMI_VERSION = "2.9"
    text = _scrape(client)
    assert 'hami_sim_hami_release_mismatch{configured="2.9",detected="2.9"} 0.0' in text
    assert as_dicts(evaluate(ALERTS["HamiSimHamiReleaseMismatch"], [(now - 60, text), (now, text)])) == {}
    assert "The cluster runs HAMi" not in client.get("/").content.decode()


@pytest.mark.parametrize(
    ("workloads", "release", "version", "basis", "mixed"),
    [
        # the scheduler's release is the cluster's, even while the device plugin is upgraded first
        (
            [
                ("Deployment", "projecthami/hami:v2.9.0", None),
                ("DaemonSet", "projecthami/hami:v2.10.0", None),
            ],
            "2.9",
            "v2.9.0",
            "image",
            True,
        ),
        # a digest-pinned image: the chart's version label names the release
        ([("Deployment", "projecthami/hami@sha256:feed", "2.8.3")], "2.8", "2.8.3", "chart label", False),
        # no scheduler (a DRA install, or another namespace): the device plugin's release
        ([("DaemonSet", "projecthami/hami:v2.10.0", None)], "2.10", "v2.10.0", "image", False),
        # nothing names a release: unknown, no finding
        ([("Deployment", "projecthami/hami:latest", None)], "", "", "", False),
        ([], "", "", "", False),
    ],
)
def test_which_workload_names_the_release(kube, settings, workloads, release, version, basis, mixed):
    from profiles.hami_install import finding
    from profiles.models import HamiInstall

    settings.HAMI_VERSION = "2.10"
    kube.workloads = [hami_workload(kind, image, chart_version=chart) for kind, image, chart in workloads]
    assert _sync(kube.source)["hami_release"] == release
    install = HamiInstall.objects.get()
    assert (install.release, install.version) == (release, version)
    assert install.basis.endswith(basis)
    found = finding(install)
    assert (found is not None) == (release not in ("", "2.10"))
    if found is not None:
        assert ("different releases" in found.message) == mixed


def test_a_configured_namespace_is_read(kube, settings):
    from profiles.models import HamiInstall

    settings.HAMI_NAMESPACE = "hami-system"
    kube.workloads = [
        hami_workload("Deployment", "projecthami/hami:v2.8.3", namespace="hami-system"),
        hami_workload("Deployment", "projecthami/hami:v2.9.0"),  # kube-system: not read
    ]
    _sync(kube.source)
    assert HamiInstall.objects.get().release == "2.8"
    assert any(r.startswith("/apis/apps/v1/namespaces/hami-system/") for r in kube.requests)


def test_a_forbidden_read_keeps_the_last_release_and_the_node_sync(kube, settings):
    """Without the RBAC for the apps group the nodes still sync; the release stays the last one read
    and the error says what was refused."""
    from hami_sim.runtime.models import TaskRun
    from profiles.hami_install import finding
    from profiles.models import HamiInstall

    settings.HAMI_VERSION = "2.10"
    kube.workloads = [hami_workload("Deployment", "projecthami/hami:v2.9.0")]
    _sync(kube.source)
    kube.apps_fail_status = 403
    counts = _sync(kube.source)
    assert counts["hami_release"] == "error" and counts["nodes"] == 0
    install = HamiInstall.objects.get()
    assert install.release == "2.9"
    assert (
        "403" in install.error and 'cannot list resource "deployments" in API group "apps"' in install.error
    )
    assert finding(install) is not None  # the last known release still differs
    assert set(TaskRun.objects.values_list("outcome", flat=True)) == {"success"}
    # allowed again: the error clears
    kube.apps_fail_status = None
    _sync(kube.source)
    assert HamiInstall.objects.get().error == ""


def test_a_file_snapshot_names_the_release_when_it_holds_the_workloads(tmp_path, settings):
    import orjson

    from profiles.models import HamiInstall

    path = tmp_path / "cluster.json"
    path.write_bytes(
        orjson.dumps({"kind": "List", "items": [hami_workload("Deployment", "projecthami/hami:v2.9.0")]})
    )
    assert _sync(f"file://{path}")["hami_release"] == "2.9"
    assert HamiInstall.objects.get().version == "v2.9.0"


def test_the_demo_cluster_runs_the_release_hami_sim_follows(client, settings):
    """``make demo``'s snapshot holds HAMi's workloads at v2.10.0: the overview names the release and
    raises nothing."""
    from tests.dashboard.conftest import load_demo

    settings.HAMI_VERSION = "2.10"
    load_demo()
    client.force_login(UserFactory(username="oncall", is_staff=True))
    page = client.get("/").content.decode()
    assert (
        "HAMi in the cluster: v2.10.0 (Deployment hami-scheduler, container vgpu-scheduler-extender: image); "
        "hami-sim follows HAMi 2.10 (HAMI_VERSION)"
    ) in page
    assert "hami-release-finding" not in page

"""Every recorded answer says which HAMi and CA releases judged it: filter decisions, estimates (their
JSON and their decisions), sessions and gRPC expander calls; the pod page shows it."""

from __future__ import annotations

import html

import pytest

from tests.factories import container, extender_args, gpu, node, pod
from tests.factories.models import NodeGroupFactory, UserFactory
from tests.profiles.conftest import A10

pytestmark = [pytest.mark.django_db]

#: one A10 card of 23028 MiB: an init container of 20000 MiB and a main container of 10000 MiB fit
#: apart (v2.10) and not summed on the card (v2.9)
ONE_CARD = [gpu("GPU-0", devmem=23028, type="NVIDIA A10G")]


def _init_heavy_pod(name: str = "train") -> dict:
    return pod(
        name,
        namespace="ml",
        uid=f"uid-{name}",
        containers=[container("main", gpumem=10000)],
        init=[container("fetch", gpumem=20000)],
    )


@pytest.fixture
def releases(settings):
    """Set the releases this process answers by (the simulator is rebuilt from them)."""
    from hami_sim.runtime.simulator import get_simulator

    def use(hami: str, ca: str = "1.34.5") -> None:
        settings.HAMI_VERSION = hami
        settings.CA_VERSION = ca
        get_simulator.cache_clear()

    return use


@pytest.mark.parametrize(("hami", "verdict"), [("2.10", "fit"), ("2.9", "no_fit"), ("2.8", "fit")])
def test_a_filter_decision_records_the_releases_and_the_pod_page_shows_them(client, releases, hami, verdict):
    from decisions.models import Decision

    releases(hami)
    body = extender_args(_init_heavy_pod(), [node("tmpl-a10", ONE_CARD)])
    assert client.post("/filter-simulation", body, content_type="application/json").status_code == 200
    decision = Decision.objects.get()
    assert (decision.verdict, decision.hami_release, decision.ca_release) == (verdict, hami, "1.34.5")
    # the pod as HAMi reads it is kept, init container apart, to judge it again under another release
    assert decision.pod_spec["spec"]["initContainers"] == [
        {"name": "fetch", "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "20000"}}}
    ]
    client.force_login(UserFactory(username="oncall", is_staff=True))
    page = html.unescape(client.get("/pods/ml/train/", follow=True).content.decode())
    assert f"judged by HAMi {hami} rules and Cluster Autoscaler 1.34.5" in page
    api = client.get(f"/api/v1/decisions/{decision.pk}/").json()
    assert (api["hami_release"], api["ca_release"]) == (hami, "1.34.5")


def test_the_same_question_under_another_release_is_another_row(client, releases):
    """Folding never hides which release answered: a restart under another HAMI_VERSION starts a row."""
    from decisions.models import Decision

    body = extender_args(_init_heavy_pod(), [node("tmpl-a10", ONE_CARD)])
    for hami in ("2.10", "2.10", "2.8"):
        releases(hami)
        client.post("/filter-simulation", body, content_type="application/json")
    rows = dict(Decision.objects.values_list("hami_release", "count"))
    assert rows == {"2.10": 2, "2.8": 1}


def test_an_estimate_says_which_releases_judged_it(client, releases):
    from decisions.models import Decision

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 1}])
    releases("2.9", "1.36.1")
    answer = client.post(
        "/api/v1/estimate",
        {"pods": [{"pod": _init_heavy_pod()}], "nodeGroups": ["gpu-a10"]},
        content_type="application/json",
    ).json()
    assert (answer["hamiVersion"], answer["caVersion"]) == ("2.9", "1.36.1")
    recorded = Decision.objects.get(caller="estimate")
    assert (recorded.hami_release, recorded.ca_release) == ("2.9", "1.36.1")


def test_a_session_records_the_releases_of_its_last_change(client, releases):
    from simulations.models import SimulationSession

    releases("2.8")
    created = client.post("/api/v1/sessions", {"name": "loop"}, content_type="application/json").json()
    assert (created["hamiVersion"], created["caVersion"]) == ("2.8", "1.34.5")
    releases("2.10", "1.36.1")  # a restart under other settings: the next change is judged by them
    placed = client.post(
        f"/api/v1/sessions/{created['id']}/placements",
        {"pod": _init_heavy_pod(), "node": node("template-node-for-gpu-a10-1", ONE_CARD)},
        content_type="application/json",
    )
    assert placed.status_code == 201
    session = SimulationSession.objects.get()
    assert (session.hami_release, session.ca_release) == ("2.10", "1.36.1")
    state = client.get(f"/api/v1/sessions/{created['id']}").json()
    assert (state["hamiVersion"], state["caVersion"]) == ("2.10", "1.36.1")


def test_an_expander_call_records_the_releases(releases):
    from decisions.models import Decision
    from tests.expander.test_dashboard import _expander_call
    from tests.expander.test_grpc_expander import option, pods

    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    releases("2.9", "1.36.1")
    _expander_call([option("gpu-a10", 1, pods(2, 12000))])
    decision = Decision.objects.get(caller="expander")
    assert (decision.hami_release, decision.ca_release) == ("2.9", "1.36.1")
    assert decision.pod_spec["spec"]["containers"]

"""The ca-template answer with aggregate capacity (``CA_AGGREGATE_CAPACITY``, deploy/capacity): a cold
group's template carries the same device totals the watcher advertises on live nodes, so CA's profile,
which then counts them, still scales it from zero.

clusterapi annotations name one GPU resource only; CA's ``InstanceCapacity``
(``cluster-autoscaler/cloudprovider/clusterapi/clusterapi_unstructured.go``, tags
``cluster-autoscaler-1.32.1`` and ``cluster-autoscaler-1.36.1``) also reads every resource of the
infrastructure machine template's ``status.capacity``, the annotations winning where both set one:
hence the answer's ``statusCapacity``."""

from __future__ import annotations

import pytest

from hami_sim.engine.simulate import Simulator
from tests.factories import gpu, node
from tests.factories.models import NodeGroupFactory
from usage.capacity import aggregate_of

from .conftest import H100

pytestmark = [pytest.mark.api, pytest.mark.django_db]

PREFIX = "k8s.io/cluster-autoscaler/node-template/resources/"


def _live_h100() -> dict:
    """A live node of the group as HAMi registers it: what the watcher would advertise on it."""
    cards = [gpu(f"GPU-{i}", index=i, devmem=H100["devmem"], type=H100["type"]) for i in range(8)]
    return aggregate_of(Simulator(), node("ip-10-0-2-21", cards))


@pytest.mark.parametrize(
    ("aggregate", "status_capacity"),
    [(False, None), (True, {"nvidia.com/gpumem": "652472", "nvidia.com/gpucores": "800"})],
)
def test_templates_carry_what_live_nodes_advertise(client, db, settings, aggregate, status_capacity):
    settings.CA_AGGREGATE_CAPACITY = aggregate
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])
    live = _live_h100()
    assert live == {"nvidia.com/gpumem": "652472", "nvidia.com/gpucores": "800"}
    aws = client.get("/api/v1/node-groups/gpu-h100/ca-template?provider=aws").json()["tags"]
    assert {k: aws[PREFIX + k] for k in live} == live  # aws and azure carry them in every mode
    capi = client.get("/api/v1/node-groups/gpu-h100/ca-template?provider=clusterapi").json()
    assert capi.get("statusCapacity") == status_capacity
    if aggregate:
        assert capi["statusCapacity"] == live
    # the annotations still name one GPU resource only
    assert not any("gpumem" in k or "gpucores" in k for k in capi["annotations"])


def test_a_group_without_nvidia_cards_gets_no_totals(client, db, settings):
    settings.CA_AGGREGATE_CAPACITY = True
    NodeGroupFactory(name="cpu-only")
    capi = client.get("/api/v1/node-groups/cpu-only/ca-template?provider=clusterapi").json()
    assert capi["statusCapacity"] == {}

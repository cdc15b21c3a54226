"""``POST /api/v1/estimate`` answers as the configured CA release (``CA_VERSION``) and says which."""

from __future__ import annotations

import orjson
import pytest

from hami_sim.engine.ca_releases import DEFAULT_VERSION

from .answers import scheduled
from .helpers import ca_node, ca_pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def _hostname_spread_body() -> dict:
    """CA's "maxSkew=1 minDomains=3" row (12 pods of 20m on a 1000m, 10-pod template)."""
    pod = ca_pod("e", 20, 100)
    pod["metadata"]["labels"] = {"app": "estimatee"}
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "minDomains": 3,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "estimatee"}},
        }
    ]
    template = ca_node("t", 1000, "5000Mi", labels={"kubernetes.io/hostname": "t"})
    return {"pods": [{"pod": pod, "count": 12}], "nodeGroups": [{"name": "g", "template": template}]}


@pytest.mark.parametrize(
    ("ca_version", "nodes"),
    [(DEFAULT_VERSION, 3), ("1.34.5", 3), ("1.33.1", 3), ("1.33.0", 7), ("1.32.7", 7)],
)
def test_the_estimate_follows_the_configured_release(client, settings, ca_version, nodes):
    settings.CA_VERSION = ca_version
    response = client.post(
        "/api/v1/estimate", orjson.dumps(_hostname_spread_body()), content_type="application/json"
    )
    assert response.status_code == 200, response.content
    out = orjson.loads(response.content)
    assert out["caVersion"] == ca_version
    [option] = out["options"]
    assert (option["nodeCount"], len(scheduled(out, option))) == (nodes, 12)

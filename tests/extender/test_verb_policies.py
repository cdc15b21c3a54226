"""The extender verbs' DRF declarations decide every call, however often the verb was called before.

The verbs build their authenticators, permissions, parsers and renderers once per declaration
rather than per request; a view that declares other classes (a subclass, a test, a deployment
patch) gets its own, from the first call on.
"""

from __future__ import annotations

import orjson
import pytest
from rest_framework.permissions import BasePermission

from simulations.api.views import FilterSimulationView, PrioritizeSimulationView
from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]

BODY = extender_args(pod("p", gpumem=1000, namespace="ml"), [node("n1", [gpu("GPU-1")])])
IDENTITIES = "hami_sim.client_identities"


class NobodyMayCall(BasePermission):
    message = "closed for the test"

    def has_permission(self, request, view) -> bool:
        return False


@pytest.mark.parametrize(
    ("view", "path"),
    [(FilterSimulationView, "/filter-simulation"), (PrioritizeSimulationView, "/prioritize-simulation")],
)
@pytest.mark.parametrize(
    ("declared", "certificate", "status"),
    [
        ({}, ("cluster-autoscaler",), 200),
        ({"permission_classes": (NobodyMayCall,)}, ("cluster-autoscaler",), 403),
        ({"authentication_classes": ()}, ("cluster-autoscaler",), 403),  # the certificate unread
        ({}, ("someone-else",), 403),
    ],
)
def test_declared_classes_decide_after_earlier_calls(
    client, settings, monkeypatch, view, path, declared, certificate, status
):
    settings.HAMI_SIM_LISTENER = "extender"
    settings.HAMI_SIM_CLIENT_IDENTITIES = "cluster-autoscaler"
    client.defaults[IDENTITIES] = ("cluster-autoscaler",)
    assert client.post(path, BODY, content_type="application/json").status_code == 200  # built and used
    for name, classes in declared.items():
        monkeypatch.setattr(view, name, classes)
    client.defaults[IDENTITIES] = certificate
    response = client.post(path, BODY, content_type="application/json")
    assert response.status_code == status
    if status == 403:
        assert "error" in orjson.loads(response.content)

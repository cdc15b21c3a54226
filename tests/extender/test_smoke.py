"""The extender answers over HTTP (the detailed contract lives in test_contract.py)."""

import orjson
import pytest

from tests.factories import extender_args, gpu, node, pod

pytestmark = [pytest.mark.api, pytest.mark.django_db]


def test_k80_template_from_hami_design_doc(client):
    """HAMi's dry-run design doc: two 11441 MiB cards, a 12000 MiB pod -> 2/2 CardInsufficientMemory."""
    devices = [
        gpu("GPU-0", devmem=11441, type="NVIDIA-Tesla K80"),
        gpu("GPU-1", index=1, devmem=11441, type="NVIDIA-Tesla K80"),
    ]
    body = extender_args(pod(gpumem=12000, gpucores=40), [node("tmpl-k80", devices)])
    answer = orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)
    assert answer["FailedNodes"] == {"tmpl-k80": "2/2 CardInsufficientMemory"}
    assert answer["Nodes"] is None
    assert answer["Error"] == ""

    body = extender_args(pod(gpumem=300, gpucores=40), [node("tmpl-k80", devices)])
    answer = orjson.loads(client.post("/filter-simulation", body, content_type="application/json").content)
    assert [n["metadata"]["name"] for n in answer["Nodes"]["items"]] == ["tmpl-k80"]

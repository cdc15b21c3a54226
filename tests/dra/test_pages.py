"""The three DRA questions as an operator reads them: the pod page, the node group's template slices."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.dra.objects import HAMI_CLASS, dra_pod, node_slice
from tests.factories.models import A10G, NodeGroupFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


class _Rows(HTMLParser):
    """The text of each row of ``table#dra-verdicts``, cell by cell."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._inside = 0
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table" and ("id", "dra-verdicts") in attrs:
            self._inside = 1
        elif self._inside and tag == "tr":
            self.rows.append([])
        elif self._inside and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._inside and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._inside = 0

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def verdict_rows(html: str) -> list[list[str]]:
    parser = _Rows()
    parser.feed(html)
    return parser.rows[1:]


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(username="oncall", password="pw", is_staff=True))
    return client


@pytest.fixture
def dra_cluster(kube_api, source):
    """One live node with two A10s publishing HAMi-DRA slices, a clusterapi group of 4-A10 nodes, and
    three HAMi-DRA pods: one that fits the live node, one no A10 can hold, one that needs a new node
    of the group (4 GPUs), which CA's clusterapi template slices cannot hold."""
    from tests.usage.conftest import gpu_node
    from usage.relist import sync_cluster

    NodeGroupFactory(name="gpu-a10-capi", provider="clusterapi", rows=[{**A10G, "quantity": 4}])
    kube_api.add_node(gpu_node("gpu-1"))
    kube_api.dra["resourceslices"].append(node_slice("gpu-1"))
    kube_api.dra["deviceclasses"].append(HAMI_CLASS)
    for name, gpumem, gpus in (("small", 8000, 1), ("huge", 40000, 1), ("wide", 1000, 4)):
        pod, claims = dra_pod(name, gpumem, gpus=gpus)
        kube_api.add_pod(pod)
        kube_api.dra["resourceclaims"].extend(claims)
    sync_cluster(source)
    return kube_api


def test_the_pod_page_says_where_a_dra_pod_fits_and_why_clusterapi_cannot_scale_from_zero(
    dra_cluster, staff_client
):
    rows = verdict_rows(staff_client.get("/pods/ml/small/").content.decode())
    by_kind = {(where, kind): verdict for where, kind, verdict in rows}
    assert by_kind[("gpu-1", "live node")].startswith("fits: gpu-0")
    assert by_kind[("gpu-a10-capi", "HAMi template")].startswith("fits: gpu-0")
    capi = by_kind[("gpu-a10-capi", "clusterapi template")]
    assert capi.startswith("does not fit")
    assert "publishes no capacity 'memory'" in capi
    assert 'type == "hami-gpu"' in capi  # CA's devices are of type "gpu"


def test_the_pod_page_names_the_device_that_is_too_small(dra_cluster, staff_client):
    rows = verdict_rows(staff_client.get("/pods/ml/huge/").content.decode())
    live = next(verdict for where, kind, verdict in rows if kind == "live node")
    assert live.startswith("does not fit")
    assert "hami-core-gpu.project-hami.io/gpu-1/gpu-0: memory: asks 40000Mi, 23028Mi of 23028Mi free" in live


def test_the_node_group_exports_its_template_slices(dra_cluster, staff_client):
    answer = staff_client.get("/api/v1/node-groups/gpu-a10-capi/dra-slices/").json()
    assert answer["node"] == "template-gpu-a10-capi"
    devices = answer["hami"]["spec"]["devices"]
    assert [d["capacity"]["memory"]["value"] for d in devices] == [str(23028 * 1024 * 1024)] * 4
    assert [d["attributes"] for d in answer["clusterapi"]["spec"]["devices"]] == [
        {"type": {"string": "gpu"}}
    ] * 4
    page = staff_client.get("/node-groups/gpu-a10-capi/").content.decode()
    assert 'id="dra-slices"' in page and "CA&#x27;s clusterapi provider" in page


def test_the_dra_page_names_the_pod_ca_cannot_scale_from_zero(dra_cluster, staff_client):
    html = staff_client.get("/dra/").content.decode()
    blind = html[html.index('id="dra-blind-spot"') : html.index('id="dra-pending"')]
    assert blind.count("<tr>") == 2  # the header and ml/wide alone: small fits gpu-1, no A10 holds huge
    assert '<a href="/pods/ml/wide/">ml/wide</a>' in blind
    assert "gpu-a10-capi" in blind and "its pool is incomplete" in blind
    assert "publishes no capacity &#x27;memory&#x27;" in blind

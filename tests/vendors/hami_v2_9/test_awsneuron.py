"""HAMi v2.9.0 ``pkg/device/awsneuron/device_test.go`` as data, under the v2.9 rules.

Ported: ``Test_graphSelect`` (4 cases, through the multi-device Fit; the Go table leaves ``Health``
unset, so every device is unhealthy, which v2.9.0's ``continuousDeviceAvailable`` never read) and
``TestDevices_Fit`` (its 7 cases; the Go test compares the devices only when the Fit succeeds). The
values are v2.10.0's tables' (``hami_v2_10/test_awsneuron.py``), written there with helpers and the
same at both tags but for the health.
"""

from __future__ import annotations

import pytest

from tests.vendors.hami_v2_10 import test_awsneuron as v2_10
from tests.vendors.harness import for_release

h = for_release("2.9")
GO = "pkg/device/awsneuron/device_test.go"
FIT_NAMES = (
    "fit success",
    "fit fail: memory not enough",
    "fit fail: core not enough",
    "fit fail: type mismatch",
    "fit fail: user assign use uuid mismatch",
    "fit fail: user assign no use uuid match",
    "fit fail: card overused",
)
GRAPH_SELECT = [pytest.param(*p.values, id=f"{GO}::{p.id}") for p in v2_10.GRAPH_SELECT]
FIT_CASES = [
    pytest.param(*p.values, id=f"{GO}::{p.id}")
    for p in v2_10.FIT_CASES
    if p.id.split("/", 1)[0] == "TestDevices_Fit" and p.id.split("/", 1)[1] in FIT_NAMES
]


@pytest.mark.parametrize(("devices", "count", "want"), GRAPH_SELECT)
def test_graph_select(devices, count, want):
    unhealthy = [dev.copy() for dev in devices]
    for dev in unhealthy:
        dev.health = False
    out = h.fit(v2_10.vendor, unhealthy, (count, v2_10.AWS, 0, 0, 2))
    assert [d.idx for d in out.devices] == want
    assert out.ok is bool(want)


@pytest.mark.parametrize(("devices", "req", "annotations", "ok", "length", "ids", "reason"), FIT_CASES)
def test_devices_fit(devices, req, annotations, ok, length, ids, reason):
    out = h.fit(v2_10.vendor, [dev.copy() for dev in devices], req, annotations)
    assert (out.ok, out.reason) == (ok, reason)
    if ok:
        assert len(out.devices) == length and [d.uuid for d in out.devices] == ids

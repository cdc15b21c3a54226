"""HAMi's MIG template tests (v2.8.3 and v2.9.0 ``pkg/device/nvidia``, ``pkg/device``,
``pkg/scheduler``) as data, shared by ``hami_v2_8`` and ``hami_v2_9`` (the cases that exist at both
tags read the same there).

How a Go literal becomes ours: Go sets a device's ``MigTemplate`` (its geometries) directly; the
engine reads them from the NVIDIA config by the device's type (``knownMigGeometries``), so each case
configures one entry whose model name ``""`` every type contains. Go's ``MigUsage`` (a geometry index
and a slot list) is, in the engine, the marks the GPU holds (``nvidia_mig_templates``): a slot taken
at position ``n`` of geometry ``g`` is ``("[g-n]", MigPlacement(n, 1))``. A slot list in which no
slot is taken is the state with no mark: the next instance chooses the geometry again (Go rebuilds
such a list from the geometries, ``migNeedsReset``), so Go's hand-written free slot lists are the
flattened geometry the case configures.
"""

from __future__ import annotations

import pytest

from hami_sim.engine.model import MigPlacement
from hami_sim.engine.vendors.nvidia import NvidiaConfig, NvidiaVendor
from hami_sim.engine.vendors.nvidia_mig_templates import (
    MigGeometries,
    MigTemplate,
    allocated_uuid,
    flatten,
    parse_suffix,
)
from tests.vendors.hami_v2_10.test_score import reason_map
from tests.vendors.harness import cdev, usage

NVIDIA_GO = "pkg/device/nvidia/device_test.go"
DEVICE_GO = "pkg/device/devices_test.go"
SCORE_GO = "pkg/scheduler/score_test.go"
NV = "NVIDIA"


def T(name: str, core: int, memory: int, count: int) -> MigTemplate:
    """A Go ``MigTemplate{Name, Core, Memory, Count}``."""
    return MigTemplate(name, memory, core, count)


def vendor_with(*geometries: tuple[MigTemplate, ...], models: tuple[str, ...] = ("",)) -> NvidiaVendor:
    """NVIDIA configured with one ``knownMigGeometries`` entry (every type, by default)."""
    return NvidiaVendor(NvidiaConfig(known_mig_geometries=(MigGeometries(models, tuple(geometries)),)))


def mig_gpu(id: str = "dev-0", marks: tuple[tuple[int, int], ...] = (), **kw):
    """A MIG-mode device holding a slot at each ``(geometry, position)`` of ``marks``."""
    dev = usage(id, mode="mig", **kw)
    dev.mig_in_use = [(f"[{g}-{n}]", MigPlacement(n, 1)) for g, n in marks]
    return dev


# -- TestDevices_AddResourceUsage ------------------------------------------------------------------
TWO_GEOMETRIES = ((T("1g.5gb", 25, 5120, 1),), (T("1g.5gb", 25, 5120, 1), T("2g.10gb", 50, 10240, 1)))

ADD_RESOURCE_USAGE = [
    pytest.param((), "", 1024, 50, (0, 2000, 15), (1, 65, 3024), None, "",
                 id="TestDevices_AddResourceUsage/test add resource usage"),
    pytest.param(TWO_GEOMETRIES, "mig", 6000, 0, (0, 0, 0), (1, 50, 10240), 1, "dev-0[1-1]",
                 id="TestDevices_AddResourceUsage/test MIG mode with migNeedsReset true - first template matches"),
    pytest.param(((T("1g.3gb", 25, 3072, 1),), TWO_GEOMETRIES[1]), "mig", 8000, 0, (0, 0, 0),
                 (1, 50, 10240), 1, "dev-0[1-1]",
                 id="TestDevices_AddResourceUsage/test MIG mode with migNeedsReset true - second template "
                    "matches with correct idx"),
    pytest.param(((T("1g.5gb", 25, 5120, 1), T("2g.10gb", 50, 10240, 1)), (T("3g.20gb", 100, 20480, 1),)), "mig",
                 6000, 0, (0, 0, 0), (1, 50, 10240), 0, "dev-0[0-1]",
                 id="TestDevices_AddResourceUsage/test MIG mode with migNeedsReset true - verify outer loop break"),
    pytest.param(((T("1g.5gb", 50, 5120, 2), T("2g.10gb", 100, 10240, 1)),), "mig", 8000, 0, (0, 0, 0),
                 (1, 100, 10240), 0, "dev-0[0-1]",
                 id="TestDevices_AddResourceUsage/test MIG mode with migNeedsReset true - template with Count > 1"),
]  # fmt: skip


def check_add_resource_usage(h, geometries, mode, usedmem, usedcores, before, after, mig_index, uuid) -> None:
    """Go's assertions: the usage; on MIG, the geometry index, the suffixed UUID, and the slot the
    suffix names (the sum of the counts before the template it names) taken with its memory."""
    vendor = vendor_with(*geometries)
    used, usedmem_before, usedcores_before = before
    dev = usage("dev-0", mode=mode, used=used, usedmem=usedmem_before, usedcores=usedcores_before)
    chosen = cdev("dev-0", usedmem=usedmem, usedcores=usedcores)
    assert h.add_usage(vendor, dev, chosen) is None
    assert (dev.used, dev.usedcores, dev.usedmem) == after
    if mig_index is None:
        return
    out = h.placed(vendor, dev, chosen)
    index, slots = h.mig_rules(vendor).slots(dev)
    assert index == mig_index and allocated_uuid(out) == uuid
    tidx, idx = parse_suffix(uuid)
    position = sum(t.count for t in geometries[tidx][:idx])
    assert slots[position].in_use and slots[position].memory == out.usedmem


# -- TestExtractMigTemplatesFromUUID, TestPlatternMIG (pkg/device) ----------------------------------
EXTRACT = [
    pytest.param("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313[7-9]", (7, 9), id="Valid UUID"),
    pytest.param("GPU-936619fc-f6a1-74a8-0bc6-ecf6b32693137-9]", None,
                 id="Invalid UUID format - missing '[' delimiter"),
    pytest.param("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313[7-9", None,
                 id="Invalid UUID format - missing ']' delimiter"),
    pytest.param("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313[79]", None,
                 id="Invalid UUID format - missing '-' delimiter"),
    pytest.param("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313[a-9]", None, id="Invalid template index"),
    pytest.param("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313[7-b]", None, id="Invalid position"),
]  # fmt: skip

PLATTERN = [
    pytest.param((), [], id="empty template"),
    pytest.param((T("1g.5gb", 0, 5, 1),), [("1g.5gb", 5)], id="single template with one count"),
    pytest.param((T("1g.5gb", 0, 5, 2), T("2g.10gb", 0, 10, 1)), [("1g.5gb", 5), ("1g.5gb", 5), ("2g.10gb", 10)],
                 id="multiple templates with different counts"),
]  # fmt: skip


def check_extract(uuid, expected) -> None:
    assert parse_suffix(uuid) == expected


def check_plattern(geometry, expected) -> None:
    slots = flatten(geometry)
    assert [(s.name, s.memory) for s in slots] == expected and not any(s.in_use for s in slots)


def named(params: list, go_file: str, test: str) -> list:
    """``params`` with ids ``<Go file>::<test>/<case>`` (``test`` "": the id names the test)."""
    prefix = f"{go_file}::{test}/" if test else f"{go_file}::"
    return [pytest.param(*p.values, id=prefix + p.id) for p in params]


# -- Test_fitInCertainDevice "mode is mig" (pkg/scheduler/score_test.go) ---------------------------
def check_fit_in_certain_mode_is_mig(h) -> None:
    """Its device holds one free 2048 MiB slot (``test6``, no geometry given: here the one geometry
    of that slot). A 2-instance request takes it on the first visit; the revisit finds no slot left
    (CardNotFoundCustomFilterRule) and one device was collected."""
    vendor = vendor_with((T("test6", 0, 2048, 1),))
    dev = mig_gpu(
        "test-0", numa=1, type=NV, used=1, count=4, totalmem=8192, usedmem=2048, usedcores=1, totalcore=4
    )
    out = h.fit(vendor, [dev], (2, NV, 1024, 100, 1))
    assert not out.ok
    assert reason_map(out.reason) == {
        "CardNotFoundCustomFilterRule": 1,
        "AllocatedCardsInsufficientRequest": 1,
    }

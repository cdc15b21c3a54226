"""HAMi v2.9.0's MIG tests as data, under the v2.9 rules (MIG templates, ``nvidia_mig_templates``):
``pkg/device/nvidia/device_test.go`` ``TestDevices_AddResourceUsage`` (its five cases),
``TestMigNeedsReset``, ``TestCustomFilterRule_Mig`` and its ``_MigEmptyUsage*`` variants,
``TestGetNodeDevices_MigTemplate``, ``TestAddResourceUsage_MigNonReset*``; ``pkg/device/devices_test.go``
``TestExtractMigTemplatesFromUUID`` and ``TestPlatternMIG``; ``pkg/scheduler/score_test.go``
``Test_fitInCertainDevice`` "mode is mig". How a Go literal reads here: ``tests/vendors/mig_templates.py``.

``TestMigNeedsReset`` "all entries not InUse — resets and clears list" is the state with no slot
taken, the same as its first case: the engine keeps no slot list in which no slot is taken.
``TestCustomFilterRule_NonMig`` is replayed from v2.10.0 (``test_unchanged.py``).
"""

from __future__ import annotations

import pytest

from tests.vendors import mig_templates as M
from tests.vendors.harness import cdev, for_release, node

h = for_release("2.9")
GO = M.NVIDIA_GO


@pytest.mark.parametrize(
    ("geometries", "mode", "usedmem", "usedcores", "before", "after", "mig_index", "uuid"),
    M.named(M.ADD_RESOURCE_USAGE, GO, ""),
)
def test_add_resource_usage(geometries, mode, usedmem, usedcores, before, after, mig_index, uuid):
    M.check_add_resource_usage(h, geometries, mode, usedmem, usedcores, before, after, mig_index, uuid)


ONE_SLOT = ((M.T("1g.5gb", 0, 10, 1), M.T("2g.10gb", 0, 20, 1)),)


@pytest.mark.parametrize(
    ("marks", "want"),
    [
        pytest.param((), True, id=f"{GO}::TestMigNeedsReset/empty UsageList — needs reset"),
        pytest.param((), True, id=f"{GO}::TestMigNeedsReset/all entries not InUse — resets and clears list"),
        pytest.param(((0, 0),), False, id=f"{GO}::TestMigNeedsReset/one entry InUse=true — no reset"),
    ],
)
def test_mig_needs_reset(marks, want):
    dev = M.mig_gpu(marks=marks)
    mig = h.mig_rules(M.vendor_with(*ONE_SLOT))
    assert mig.needs_reset(dev) is want
    if want:
        assert mig.slots(dev)[1] == []


@pytest.mark.parametrize(
    ("geometry", "to_allocate", "memreq", "want"),
    [
        pytest.param((M.T("", 0, 1000, 2),), [500], 500, True,
                     id=f"{GO}::TestCustomFilterRule_Mig/slot available after allocating toAllocate"),
        pytest.param((M.T("", 0, 1000, 1),), [500], 500, False,
                     id=f"{GO}::TestCustomFilterRule_Mig/no remaining slot after allocating toAllocate"),
        pytest.param((M.T("", 0, 100, 1),), [500], 500, False,
                     id=f"{GO}::TestCustomFilterRule_Mig/toAllocate does not fit any slot"),
        pytest.param((M.T("1g.5gb", 14, 5120, 2),), [], 4096, True,
                     id=f"{GO}::TestCustomFilterRule_MigEmptyUsageWithTemplate"),
        pytest.param((M.T("1g.5gb", 14, 100, 1),), [], 4096, False,
                     id=f"{GO}::TestCustomFilterRule_MigEmptyUsageNoFitTemplate"),
    ],
)  # fmt: skip
def test_custom_filter_rule_mig(geometry, to_allocate, memreq, want):
    prior = [cdev("", usedmem=m) for m in to_allocate]
    mig = h.mig_rules(M.vendor_with(geometry))
    assert mig.custom_filter_rule(M.mig_gpu(), memreq, prior) is want


def test_get_node_devices_mig_template():
    """``TestGetNodeDevices_MigTemplate``: an A100 in MIG mode takes the A100 entry's geometries."""
    vendor = M.vendor_with((M.T("1g.5gb", 14, 5120, 7),), models=("A100",))
    raw = ('[{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","numa":0,'
           '"health":true,"mode":"mig"}]')  # fmt: skip
    [dev] = h.node_devices(vendor, node("node-mig", annotations={"hami.io/node-nvidia-register": raw}))
    geometries = h.mig_rules(vendor).geometries(dev.type)
    assert len(geometries) == 1 and geometries[0][0].name == "1g.5gb"


NON_RESET = ((M.T("1g.5gb", 14, 5120, 2),),)


def test_add_resource_usage_mig_non_reset():
    """``TestAddResourceUsage_MigNonReset``: the free second slot, its memory, a suffixed UUID."""
    vendor = M.vendor_with(*NON_RESET)
    dev = M.mig_gpu("GPU-0", marks=((0, 0),))
    chosen = cdev("GPU-0", usedmem=4096, usedcores=10)
    assert h.add_usage(vendor, dev, chosen) is None
    out = h.placed(vendor, dev, chosen)
    assert h.mig_rules(vendor).slots(dev)[1][1].in_use
    assert out.usedmem == 5120 and "[" in M.allocated_uuid(out)


def test_add_resource_usage_mig_non_reset_no_slot():
    """``TestAddResourceUsage_MigNonResetNoSlot``: the only slot is taken."""
    vendor = M.vendor_with((M.T("1g.5gb", 14, 5120, 1),))
    error = h.add_usage(vendor, M.mig_gpu("GPU-0", marks=((0, 0),)), cdev("GPU-0", usedmem=4096))
    assert error is not None and "mig template allocate resource fail" in error


@pytest.mark.parametrize(
    ("uuid", "expected"), M.named(M.EXTRACT, M.DEVICE_GO, "TestExtractMigTemplatesFromUUID")
)
def test_extract_mig_templates_from_uuid(uuid, expected):
    M.check_extract(uuid, expected)


@pytest.mark.parametrize(("geometry", "expected"), M.named(M.PLATTERN, M.DEVICE_GO, "TestPlatternMIG"))
def test_plattern_mig(geometry, expected):
    M.check_plattern(geometry, expected)


@pytest.mark.parametrize("case", [pytest.param(0, id=f"{M.SCORE_GO}::Test_fitInCertainDevice/mode is mig")])
def test_fit_in_certain_device_mode_is_mig(case):
    M.check_fit_in_certain_mode_is_mig(h)

"""HAMi v2.8.3's MIG tests as data, under the v2.8 rules (MIG templates, as v2.9.0 has them):
``pkg/device/nvidia/device_test.go`` ``TestDevices_AddResourceUsage`` (its five cases),
``pkg/device/devices_test.go`` ``TestExtractMigTemplatesFromUUID`` and ``TestPlatternMIG``, and
``pkg/scheduler/score_test.go`` ``Test_fitInCertainDevice`` "mode is mig", each as at v2.9.0
(``tests/vendors/mig_templates.py``). v2.8.3 has no other MIG test in those packages.

The UUID suffix and the slot list read no release: their tests are v2.9.0's, collected here too.
"""

from __future__ import annotations

import pytest

from tests.vendors import mig_templates as M
from tests.vendors.hami_v2_9.test_nvidia_mig import test_extract_mig_templates_from_uuid, test_plattern_mig
from tests.vendors.harness import for_release

__all__ = ["test_extract_mig_templates_from_uuid", "test_plattern_mig"]

h = for_release("2.8")


@pytest.mark.parametrize(
    ("geometries", "mode", "usedmem", "usedcores", "before", "after", "mig_index", "uuid"),
    M.named(M.ADD_RESOURCE_USAGE, M.NVIDIA_GO, ""),
)
def test_add_resource_usage(geometries, mode, usedmem, usedcores, before, after, mig_index, uuid):
    M.check_add_resource_usage(h, geometries, mode, usedmem, usedcores, before, after, mig_index, uuid)


@pytest.mark.parametrize("case", [pytest.param(0, id=f"{M.SCORE_GO}::Test_fitInCertainDevice/mode is mig")])
def test_fit_in_certain_device_mode_is_mig(case):
    M.check_fit_in_certain_mode_is_mig(h)

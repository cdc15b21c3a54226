"""HAMi v2.8.3 ``pkg/scheduler/score_test.go`` (the NVIDIA cases) as data, under the 2.8 rules.

Ported (``tests/vendors/score_tables.py``): ``Test_calcScore`` (15 cases; the two Kunlun ones
belong to Kunlun's table), ``Test_fitInCertainDevice`` (10 cases; "mode is mig", whose device holds a MIG template slot, is
``test_nvidia_mig.py``'s), ``Test_fitInDevices``
(3) and ``Test_Nvidia_GPU_Topology`` (2).
"""

from __future__ import annotations

import pytest

from tests.vendors import score_tables as T
from tests.vendors.harness import for_release

h = for_release("2.8")


@pytest.mark.parametrize(("nodes", "containers", "init_count", "want"), T.calc_score_cases())
def test_calc_score(nodes, containers, init_count, want):
    T.check_calc_score(h, nodes, containers, init_count, want)


@pytest.mark.parametrize(
    ("devices", "req", "annotations", "ok", "picked", "reasons"), T.fit_in_certain_cases()
)
def test_fit_in_certain_device(devices, req, annotations, ok, picked, reasons):
    T.check_fit_in_certain(h, devices, req, annotations, ok, picked, reasons)


@pytest.mark.parametrize(("devices", "requests", "reason"), T.fit_in_devices_cases())
def test_fit_in_devices(devices, requests, reason):
    T.check_fit_in_devices(h, devices, requests, reason)


@pytest.mark.parametrize(("nums", "scores", "want"), T.topology_cases())
def test_nvidia_gpu_topology(nums, scores, want):
    T.check_topology(h, nums, scores, want)

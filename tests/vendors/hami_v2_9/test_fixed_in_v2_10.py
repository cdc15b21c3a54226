"""v2.10.0's cases for three rules v2.10 changed, each with the answer v2.9.0's source gives.

v2.9.0 has no test of them (the cases came with the change), so each is v2.10.0's case run under
the 2.9 rules with v2.9.0's answer; an id ending ``(v2.9)`` answers otherwise than v2.10.0.

- ``graph_reason_over_devices``: Kunlunxin's board search and AWS Neuron's contiguous-device search,
  when they find nothing, counted ``NumaNotFit`` over the number of reasons (``1/1``).
- ``neuron_core_shapes``: v2.9.0's ``GenerateResourceRequests`` turned C NeuronCores into C/2
  devices of 2 cores (C below 2: one core of one device), and took a device count as written.
- ``topology_zero_scores``: v2.9.0's ``computeBestCombination`` kept only a subset scoring above 0;
  with none, the topology-aware Fit succeeded with no GPU for the container. Its
  ``computeWorstSingleCard`` (the same in v2.8.3) took -1 for "no card yet", so a card whose total is
  -1 lost its place to the next card walked; no HAMi test has such a card, so those cases are
  hand-derived from that function, under the 2.8 and 2.9 rules.
"""

from __future__ import annotations

import pytest

from tests.vendors.hami_v2_10 import test_awsneuron as neuron_v2_10
from tests.vendors.hami_v2_10 import test_nvidia as nvidia_v2_10
from tests.vendors.harness import EMPTY, fit_ids, for_release, usage
from tests.vendors.helpers import BY_WORD

h = for_release("2.9")
AWS = "AWSNeuron"
MAX32 = str(2**31 - 1)


@pytest.mark.parametrize(
    ("word", "devices", "nums", "memreq"),
    [
        pytest.param(
            "XPU",
            [usage(f"x{i}", index=i, totalmem=1024, count=1) for i in range(8)],
            1,
            2048,
            id="TestKunlunVDevices_Fit_NumaNotFit (v2.9)",
        ),
        pytest.param(
            "kunlun",
            [usage(f"k{i}", index=i, used=1, count=1) for i in range(8)],
            1,
            0,
            id="TestKunlunDevices_Fit_NumaNotFit (v2.9)",
        ),
    ],
)
def test_kunlun_numa_not_fit_counts_one(word, devices, nums, memreq):
    for dev in devices:
        dev.type = word
    outcome = h.fit(BY_WORD[word], devices, (nums, word, memreq, 0, 0), {})
    assert (outcome.ok, outcome.reason) == (False, "1/1 NumaNotFit")


def test_neuron_numa_not_fit_counts_one():
    """``TestDevices_Fit/fit fail: NumaNotFit with multiple devices``: v2.10.0 answers ``1/2``."""
    devices = [
        usage(f"dev-{i}", index=i, count=2, totalcore=3, type=AWS, custom_info={"AWSNodeType": "trn"})
        for i in range(2)
    ]
    outcome = h.fit(neuron_v2_10.vendor, devices, (2, AWS, 0, 0, 2), {})
    assert (outcome.ok, outcome.reason) == (False, "1/1 NumaNotFit")


@pytest.mark.parametrize(
    ("limits", "requests", "want"),
    [
        pytest.param({"aws.amazon.com/neuron": "1"}, {"aws.amazon.com/neuron": "1"}, (1, AWS, 0, 0, 2), id="allocate neuron device"),
        pytest.param({}, {"aws.amazon.com/neuron": str(2**31)}, None, id="request-only neuron number that overflows device count"),
        pytest.param({"aws.amazon.com/neuroncore": "1"}, {"aws.amazon.com/neuroncore": "1"}, (1, AWS, 0, 0, 1), id="allocate neuron core"),
        pytest.param({"aws.amazon.com/neuroncore": "3"}, {"aws.amazon.com/neuroncore": "3"}, (1, AWS, 0, 0, 2), id="odd neuron core request (v2.9)"),
        pytest.param({}, {"aws.amazon.com/neuroncore": "3"}, (1, AWS, 0, 0, 2), id="request-only odd neuron core request (v2.9)"),
        pytest.param({"aws.amazon.com/neuroncore": "0"}, {}, (1, AWS, 0, 0, 1), id="zero neuron core request (v2.9)"),
        pytest.param({"aws.amazon.com/neuroncore": "-2"}, {}, (1, AWS, 0, 0, 1), id="negative neuron core request (v2.9)"),
        pytest.param({"aws.amazon.com/neuroncore": str(2**32)}, {}, None, id="neuron core request that overflows device count"),
        pytest.param({"aws.amazon.com/neuroncore": "6"}, {}, (3, AWS, 0, 0, 2), id="whole devices divide evenly"),
    ],
)  # fmt: skip
def test_neuron_generate_resource_requests(limits, requests, want):
    """v2.10.0's ``Test_GenerateResourceRequests`` rows (``reject ...`` there) and a
    ``Test_splitCoreRequest`` shape."""
    assert h.request_of(neuron_v2_10.vendor, limits, requests) == (want or EMPTY)


@pytest.mark.parametrize(
    ("nums", "scores", "want"),
    [
        pytest.param(2, nvidia_v2_10.ZERO, [], id="TestFit_TopologyBestCombinationZeroScores (v2.9)"),
        pytest.param(1, nvidia_v2_10.NEGATIVE, ["dev-0"], id="TestFit_TopologyNegativeScores/SingleGPU"),
        pytest.param(2, nvidia_v2_10.NEGATIVE, [], id="TestFit_TopologyNegativeScores/MultiGPU (v2.9)"),
        pytest.param(2, nvidia_v2_10.SCORES, ["dev-0", "dev-2"], id="TestFit_TopologyBestCombination"),
    ],
)
def test_topology_best_combination(nums, scores, want):
    out = h.fit(
        nvidia_v2_10.vendor,
        nvidia_v2_10.three(),
        (nums, "NVIDIA", 100, 0, 10),
        nvidia_v2_10.TOPOLOGY,
        pair_scores=scores,
    )
    assert out.ok
    assert sorted(d.uuid for d in out.devices) == want


@pytest.mark.parametrize("release", ["2.8", "2.9"])
@pytest.mark.parametrize(
    ("scores", "want"),
    [
        # walked dev-2 (3), dev-1 (-1, then "none yet"), dev-0 (6, taken): v2.10.0 answers dev-1
        pytest.param(nvidia_v2_10.MINUS_ONE_MIDDLE, ["dev-0"], id="single card totalling -1 (v2.9)"),
        # walked dev-2 (-1), dev-1 (4, taken), dev-0 (7): v2.10.0 answers dev-2
        pytest.param(nvidia_v2_10.MINUS_ONE_FIRST, ["dev-1"], id="first card totalling -1 (v2.9)"),
        # totals -8, -6, -4: none is -1, every release answers dev-0
        pytest.param(nvidia_v2_10.NEGATIVE, ["dev-0"], id="TestFit_TopologyNegativeScores/SingleGPU"),
    ],
)
def test_topology_single_card_minus_one(release, scores, want):
    """v2.9.0 / v2.8.3 ``device.go`` ``computeWorstSingleCard``: ``worstScore := -1`` and
    ``totalScore < worstScore || worstScore == -1``."""
    out = for_release(release).fit(
        nvidia_v2_10.vendor,
        nvidia_v2_10.three(),
        (1, "NVIDIA", 100, 0, 10),
        nvidia_v2_10.TOPOLOGY,
        pair_scores=scores,
    )
    assert out.ok and fit_ids(out) == want

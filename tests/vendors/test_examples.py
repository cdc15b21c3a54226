"""Every HAMi example pod (``examples/<vendor>/*.yaml`` at v2.10) parses into the request HAMi makes.

Tuples are ``(Nums, Memreq, MemPercentagereq, Coresreq)`` per container, keyed by the request Type.
"""

from __future__ import annotations

import pytest

from tests.vendors.helpers import FIXTURES, examples, requests_of

EXPECTED: dict[str, list[dict]] = {
    # Ascend: the scheduler reads the memory as written (v2.10; the webhook's template rounding
    # happens before a pod reaches it)
    "examples/ascend/job-310P.yaml#0": [{"Ascend310P": (1, 2000, 0, 0)}],
    "examples/ascend/job-910A.yaml#0": [{"Ascend910A": (1, 2000, 0, 0)}],
    "examples/ascend/job-910B2.yaml#0": [{"Ascend910B2": (1, 2000, 0, 0)}],
    "examples/ascend/job-910B3.yaml#0": [{"Ascend910B3": (1, 2000, 0, 0)}],
    "examples/ascend/job-910B4.yaml#0": [{"Ascend910B4": (1, 2000, 0, 0)}],
    "examples/ascend/job-910C.yaml#0": [{"Ascend910C": (1, 16384, 0, 0)}],
    # AWS Neuron: one core -> one device's core 1; a whole device -> its 2 cores
    "examples/awsneuron/allocate_core.yaml#0": [{"AWSNeuron": (1, 0, 0, 1)}],
    "examples/awsneuron/allocate_dev.yaml#0": [{"AWSNeuron": (1, 0, 0, 2)}],
    "examples/awsneuron/multi_containers.yaml#0": [{"AWSNeuron": (1, 0, 0, 1)}, {"AWSNeuron": (1, 0, 0, 1)}],
    "examples/biren/default_use.yaml#0": [{"Biren": (1, 0, 100, 0)}],
    # Enflame: whole GCUs (100 of the card's nominal 100 memory/cores); DRS by slice count (Memreq carries the slices); DRS by memory/core spec
    "examples/enflame/gcu_use.yaml#0": [{"GCU": (1, 100, 100, 100)}],
    "examples/enflame/gcu_use.yaml#1": [{"GCU": (2, 100, 100, 100)}],
    "examples/enflame/vgcu_use.yaml#0": [{"Enflame": (1, 1, 0, 0)}],
    "examples/enflame/vgcu_use.yaml#1": [{"Enflame": (1, 3, 0, 0)}],
    "examples/enflame/vgcu_use.yaml#2": [{"Enflame": (1, 20480, -1, 40)}],
    # Hygon: MiB and percent as given; no memory = 100 % of each card, no cores = 100 (exclusive)
    "examples/hygon/default_use.yaml#0": [{"DCU": (1, 2000, 0, 60)}],
    "examples/hygon/specify_card_type_not_use.yaml#0": [{"DCU": (1, 2000, 0, 60)}],
    "examples/hygon/specify_card_type_to_use.yaml#0": [{"DCU": (1, 2000, 0, 60)}],
    "examples/hygon/specify_uuid_not_use.yaml#0": [{"DCU": (1, 2000, 0, 60)}],
    "examples/hygon/specify_uuid_to_use.yaml#0": [{"DCU": (1, 2000, 0, 60)}],
    "examples/hygon/use_exclusive_card.yaml#0": [{"DCU": (2, 0, 100, 100)}],
    # Iluvatar: vMem is in 256 MiB units (64 -> 16384 MiB)
    "examples/iluvatar/default_use_BI-V100.yaml#0": [{"BI-V100": (1, 16384, 0, 50)}],
    "examples/iluvatar/default_use_BI-V150.yaml#0": [{"BI-V150": (1, 16384, 0, 50)}],
    "examples/iluvatar/default_use_MR-V100.yaml#0": [{"MR-V100": (1, 16384, 0, 50)}],
    "examples/iluvatar/multi-containers_BI-V100.yaml#0": [{"BI-V100": (1, 16384, 0, 50)}] * 2,
    "examples/iluvatar/multi-containers_BI-V150.yaml#0": [{"BI-V150": (1, 16384, 0, 50)}] * 2,
    "examples/iluvatar/multi-containers_MR-V100.yaml#0": [{"MR-V100": (1, 16384, 0, 50)}] * 2,
    "examples/iluvatar/multi-devices_BI-V100.yaml#0": [{"BI-V100": (2, 0, 100, 0)}],
    "examples/iluvatar/multi-devices_BI-V150.yaml#0": [{"BI-V150": (2, 0, 100, 0)}],
    "examples/iluvatar/multi-devices_MR-V100.yaml#0": [{"MR-V100": (2, 0, 100, 0)}],
    # Kunlunxin vXPU: no memory = the whole 96 GiB card; 24576 is the smallest template (25 % cores)
    "examples/kunlun/allocate_exclusive.yaml#0": [{"XPU": (1, 98304, 100, 100)}],
    "examples/kunlun/default_use.yaml#0": [{"XPU": (1, 24576, 0, 25)}],
    # MetaX: whole GPUs; sGPU vmemory is GiB when unit-less, bytes with a unit (2048Mi -> 2048)
    "examples/metax/gpu/binpack.yaml#0": [{"Metax-GPU": (1, 0, 100, 100)}],
    "examples/metax/gpu/default_use.yaml#0": [{"Metax-GPU": (1, 0, 100, 100)}],
    "examples/metax/gpu/spread.yaml#0": [{"Metax-GPU": (1, 0, 100, 100)}],
    "examples/metax/sgpu/allocate_exclusive.yaml#0": [{"Metax-SGPU": (1, 0, 100, 100)}],
    "examples/metax/sgpu/allocate_specific_gpu.yaml#0": [{"Metax-SGPU": (1, 4096, 0, 60)}],
    "examples/metax/sgpu/allocate_specific_qos.yaml#0": [{"Metax-SGPU": (1, 4096, 0, 60)}],
    "examples/metax/sgpu/allocate_vmemory_MiB.yaml#0": [{"Metax-SGPU": (1, 2048, 0, 60)}],
    "examples/metax/sgpu/default_use.yaml#0": [{"Metax-SGPU": (1, 4096, 0, 60)}],
    "examples/metax/sgpu/enable_topology_aware.yaml#0": [{"Metax-SGPU": (4, 0, 100, 100)}],
    "examples/metax/sgpu/multi-containers.yaml#0": [
        {"Metax-SGPU": (1, 4096, 0, 60)},
        {"Metax-SGPU": (1, 8192, 0, 30)},
    ],
    "examples/metax/sgpu/offline.yaml#0": [{"Metax-SGPU": (1, 4096, 0, 60)}],
    "examples/metax/sgpu/online.yaml#0": [{"Metax-SGPU": (1, 4096, 0, 100)}],
    # Cambricon: the example's mlu370.* names are not HAMi's default resource names, so only the
    # vmlu count is read: a whole MLU (100 % memory, 100 cores) in both examples
    "examples/mlu/allocate_whole.yaml#0": [{"MLU": (1, 0, 100, 100)}],
    "examples/mlu/default_use.yaml#0": [{"MLU": (1, 0, 100, 100)}],
    # Moore Threads: sgpu-memory x 512 MiB; memory and cores are per container, split per GPU
    "examples/mthreads/default_use.yaml#0": [{"Mthreads": (1, 16384, 0, 8)}],
    "examples/mthreads/multi_cards.yaml#0": [{"Mthreads": (2, 0, 100, 0)}],
    "examples/mthreads/use_exclusive.yaml#0": [{"Mthreads": (1, 0, 100, 0)}],
    "examples/vastai/default_use.yaml#0": [{"Vastai": (1, 0, 100, 0)}],
}

FILES = sorted(p.name for p in FIXTURES.glob("*-hami-examples.txt"))
ALL = [(name, doc) for f in FILES for name, doc in examples(f)]


def test_every_vendor_example_file_is_covered():
    assert len(FILES) == 11
    assert sorted(name for name, _ in ALL) == sorted(EXPECTED)


@pytest.mark.parametrize(("name", "doc"), ALL, ids=[name for name, _ in ALL])
def test_example_pod_parses_into_hamis_request(name, doc):
    assert requests_of(doc) == EXPECTED[name]


def test_cambricon_example_with_configured_mlu370_names_reads_memory_and_cores():
    """With the MLU370 resource names configured, default_use asks 20 x 256 MiB and 10 % cores."""
    from hami_sim.engine.requests import parse_pod
    from hami_sim.engine.vendors import CambriconConfig, CambriconVendor

    vendor = CambriconVendor(
        CambriconConfig(
            "cambricon.com/vmlu", "cambricon.com/mlu370.smlu.vmemory", "cambricon.com/mlu370.smlu.vcore"
        )
    )
    doc = dict(examples("mlu-hami-examples.txt"))["examples/mlu/default_use.yaml#0"]
    (container,) = parse_pod(doc, [vendor]).requests.containers
    req = container["MLU"]
    assert (req.nums, req.memreq, req.mem_percentage_req, req.coresreq) == (1, 5120, 0, 10)

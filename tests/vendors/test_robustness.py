"""Arbitrary vendor resources and registrations never crash the engine (bounded Hypothesis runs)."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hami_sim.engine.requests import PodError
from tests.vendors.helpers import VENDORS, node, pod, simulator

RESOURCES = sorted({name for vendor in VENDORS for name in vendor.resource_names()})
QUANTITIES = st.one_of(
    st.sampled_from(
        ["0", "1", "2", "4", "100", "-1", "0.5", "1Gi", "2048Mi", "1k", "1e3", "16.0Gi", "99999999999"]
    ),
    st.integers(min_value=-(2**40), max_value=2**40).map(str),
)
REGISTRATIONS = {
    "hami.io/node-dcu-register": st.sampled_from(["DCU-0,4,16384,100,DCU-K100,0,true:", "x", ":", "a,b:"]),
    "hami.io/node-register-Ascend910B3": st.sampled_from(
        [
            '[{"id":"n0","count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true}]',
            "[]",
            "{",
            "null",
        ]
    ),
    "hami.io/node-register-xpu": st.sampled_from(
        ['[{"id":"x0","count":4,"devmem":98304,"devcore":100,"type":"XPU","health":true}]', '[{"count":"x"}]']
    ),
    "hami.io/node-amd-register": st.sampled_from(
        ['[{"id":"a0","count":10,"devmem":196288,"devcore":304,"type":"AMD MI300X","health":true}]', "[1]"]
    ),
    "metax-tech.com/node-gpu-devices": st.sampled_from(
        [
            '[{"uuid":"m0","totalDevCount":16,"totalCompute":100,"totalVRam":65536,"healthy":true}]',
            '[{"uuid":5}]',
        ]
    ),
    "enflame.com/gcu-drs-capacity": st.sampled_from(
        [
            '{"devices":[{"index":"0","capacity":6}],"profiles":{"1g.6gb":"0","6g.40gb":"2"}}',
            '{"devices":[{}]}',
            "[]",
        ]
    ),
}
CAPACITIES = [
    "cambricon.com/mlu.smlu.vcore",
    "cambricon.com/mlu.smlu.vmemory",
    "mthreads.com/sgpu-core",
    "mthreads.com/sgpu-memory",
    "metax-tech.com/gpu",
    "enflame.com/gcu",
    "kunlunxin.com/xpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
]
SIM = simulator()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    limits=st.dictionaries(st.sampled_from(RESOURCES), QUANTITIES, max_size=5),
    annotations=st.fixed_dictionaries({}, optional=REGISTRATIONS),
    capacity=st.dictionaries(st.sampled_from(CAPACITIES), QUANTITIES, max_size=4),
)
def test_any_vendor_request_on_any_registration_answers(limits, annotations, capacity):
    try:
        ctx = SIM.pod_context(pod({"limits": limits}))
    except PodError:
        return  # a quantity Kubernetes would reject: the extender answers a clear request error
    (verdict,) = SIM.filter_nodes(ctx, [node("n", annotations=annotations, capacity=capacity)])
    assert isinstance(verdict.reason, str)
    if verdict.fits and verdict.fit is not None:
        orjson.dumps([[(d.uuid, d.usedmem, d.usedcores) for d in c] for c in verdict.fit.containers])

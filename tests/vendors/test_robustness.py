"""Arbitrary vendor resources and registrations never crash the engine (bounded Hypothesis runs)."""

from __future__ import annotations

import math

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
            '[{"id":"n0","count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,'
            '"custominfo":{"NetworkID":1}},{"id":"n1","index":1,"count":4,"devmem":65536,"devcore":20,'
            '"type":"Ascend910B3","health":true,"custominfo":{"NetworkID":"x"}}]',
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
            '[{"uuid":"m0","totalDevCount":16,"totalCompute":100,"totalVRam":65536,"healthy":true,"linkZone":1},'
            '{"uuid":"m1","totalDevCount":16,"totalCompute":100,"totalVRam":65536,"healthy":true,"linkZone":1}]',
            '[{"uuid":5}]',
            '[{"uuid":"m0","linkZone":"a"}]',
        ]
    ),
    # MetaX GPU node scores read these (any text: HAMi falls back to 0 when it does not decode)
    "metax-tech.com/gpu.topology.losses": st.sampled_from(
        ['{"1": 100, "2": 300}', "x", '{"1": 1.5}', "null", '{"1": 99999999999999999999}', "[]"]
    ),
    "metax-tech.com/gpu.topology.scores": st.sampled_from(['{"1": 1900}', '{"-1": -5}', "{"]),
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
POD_ANNOTATIONS = {
    "hami.io/node-scheduler-policy": st.sampled_from(["binpack", "spread", "other"]),
    "metax-tech.com/sgpu-topology-aware": st.sampled_from(["true", "false", "maybe"]),
    "metax-tech.com/sgpu-app-class": st.sampled_from(["online", "offline"]),
    "metax-tech.com/sgpu-qos-policy": st.sampled_from(["best-effort", "fixed-share"]),
}
SIM = simulator()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    limits=st.dictionaries(st.sampled_from(RESOURCES), QUANTITIES, max_size=5),
    annotations=st.fixed_dictionaries({}, optional=REGISTRATIONS),
    capacity=st.dictionaries(st.sampled_from(CAPACITIES), QUANTITIES, max_size=4),
    pod_annotations=st.fixed_dictionaries({}, optional=POD_ANNOTATIONS),
)
def test_any_vendor_request_on_any_registration_answers(limits, annotations, capacity, pod_annotations):
    try:
        ctx = SIM.pod_context(pod({"limits": limits}, annotations=pod_annotations))
    except PodError:
        return  # a quantity Kubernetes would reject: the extender answers a clear request error
    template = node("n", annotations=annotations, capacity=capacity)
    (verdict,) = SIM.filter_nodes(ctx, [template])
    assert isinstance(verdict.reason, str)
    if verdict.fits and verdict.fit is not None:
        orjson.dumps([[(d.uuid, d.usedmem, d.usedcores) for d in c] for c in verdict.fit.containers])
        # vendor node scores are finite, the extender answer stays 0..10, and what a session would
        # store of the devices (custom_info included) is JSON
        assert math.isfinite(verdict.fit.score_before) and math.isfinite(verdict.score_after)
        assert 0 <= SIM.prioritize_score(ctx, verdict) <= 10
        # (filter verdicts are memoised without the devices after placement: sessions evaluate)
        placed = SIM.evaluate(ctx, "n", SIM.inventory(template).state("n")).fit
        assert placed is not None and placed.usage_after is not None
        orjson.dumps([d.custom_info for d in placed.usage_after])

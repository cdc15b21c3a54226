"""The gRPC expander judges CA's options by the device rules of the HAMi release ``HAMI_VERSION``
names (over TLS, asked as CA 1.36 asks).

The pods: an init container of 20000 MiB before a main container of 10000 MiB. HAMi v2.10.0 fits
the init container alone first (#1773), so an A10 card (23028 MiB) holds such a pod; v2.9.0 adds the
two up on the same card, so a one-A10 node holds none and only the H100 option is kept.
"""

from __future__ import annotations

import pytest

from simulations.grpcexpander.protos import k8s_core_pb2 as core
from tests.expander.test_grpc_expander import TEMPLATES, ask, groups, node_msg, option, pod_msg, q  # noqa: F401 (fixtures)
from tests.factories import gpu, node

# the A10 group's template registers one card (23028 MiB)
ONE_A10 = {**TEMPLATES, "gpu-a10": node_msg(node("template-node-for-gpu-a10-1", [gpu("GPU-0")]))}

pytestmark = [pytest.mark.django_db(transaction=True)]


def big_init_pod(name: str) -> core.Pod:
    pod = pod_msg(name, 10000)
    limits = q({"nvidia.com/gpu": 1, "nvidia.com/gpumem": 20000})
    pod.spec.initContainers.append(
        core.Container(name="init", resources=core.ResourceRequirements(limits=limits))
    )
    return pod


@pytest.mark.parametrize(
    ("version", "kept"),
    [("2.10", ["gpu-a10", "gpu-h100"]), ("2.9", ["gpu-h100"]), ("v2.9.0", ["gpu-h100"])],
)
def test_an_init_container_larger_than_the_main_one(groups, ask, settings, version, kept):  # noqa: F811
    settings.HAMI_VERSION = version
    pods = [big_init_pod("p0")]
    assert sorted(ask([option("gpu-a10", 1, pods), option("gpu-h100", 1, pods)], ONE_A10)) == kept


def test_a_changed_release_is_not_answered_from_an_earlier_packing(groups, ask, settings):  # noqa: F811
    """The expander remembers packings between calls: the release is part of what they depend on."""
    options = [option("gpu-a10", 1, [big_init_pod("p0")]), option("gpu-h100", 1, [big_init_pod("p0")])]
    assert sorted(ask(options, ONE_A10)) == ["gpu-a10", "gpu-h100"]
    settings.HAMI_VERSION = "2.9"
    assert ask(options, ONE_A10) == ["gpu-h100"]

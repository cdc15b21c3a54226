"""One helper each for template-node names and pod ids, as every caller builds and reads them."""

from __future__ import annotations

import pytest

from hami_sim.engine.names import (
    estimated_node_name,
    pod_id,
    template_node_group,
    template_node_name,
)

GROUPS = {"gpu": 1, "gpu-a10": 1, "gpu-a10g": 1, "gpu-e-1": 1, "a10-x": 1}


@pytest.mark.parametrize(
    ("name", "group"),
    [
        # CA's template: template-node-for-<group>-<n>
        ("template-node-for-gpu-a10-5577006791947779410", "gpu-a10"),
        ("template-node-for-gpu-a10-0", "gpu-a10"),
        ("template-node-for-gpu-a10-17", "gpu-a10"),
        ("template-node-for-gpu-1", "gpu"),
        # the index is optional (our estimator and estimate recorder leave it out): never group "gpu"
        ("template-node-for-gpu-a10", "gpu-a10"),
        ("template-node-for-gpu", "gpu"),
        # CA's binpacking copies (-e-<i>) and upcoming nodes (-upcoming-<i>), with or without index
        ("template-node-for-gpu-a10-5577006791947779410-e-3", "gpu-a10"),
        ("template-node-for-gpu-a10-e-0", "gpu-a10"),
        ("template-node-for-gpu-a10-12-upcoming-0", "gpu-a10"),
        ("template-node-for-gpu-a10-12-upcoming-0-e-2", "gpu-a10"),
        # a group id that looks like a copy suffix
        ("template-node-for-gpu-e-1", "gpu-e-1"),
        ("template-node-for-gpu-e-1-4", "gpu-e-1"),
        # unknown groups and other names
        ("template-node-for-gpu-a10x-1", None),  # an unknown group is not mistaken for "gpu"
        ("template-node-for-gpu-a10g-8a7f", "gpu-a10g"),  # the last part may be any token
        ("template-node-for-", None),
        ("gpu-a10-1", None),
        ("template-node-for-a10-x", "a10-x"),
        ("template-node-for-a10-x-e-0", "a10-x"),
    ],
)
def test_template_node_names_resolve_to_their_group(name, group):
    assert template_node_group(name, GROUPS) == group


@pytest.mark.parametrize(
    ("group", "index", "copy"),
    [("gpu-a10", 0, None), ("gpu-a10", None, None), ("gpu-a10", 5577006791947779410, 3), ("gpu", None, 0)],
)
def test_built_template_node_names_parse_back(group, index, copy):
    name = template_node_name(group, index)
    if copy is not None:
        name = estimated_node_name(name, copy)
    assert name.startswith("template-node-for-")
    assert template_node_group(name, GROUPS) == group


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        ({"metadata": {"uid": "u-1", "namespace": "ml", "name": "p"}}, "u-1"),
        ({"metadata": {"uid": "", "namespace": "ml", "name": "p"}}, "ml/p"),
        ({"metadata": {"namespace": "ml", "name": "p"}}, "ml/p"),
        ({"metadata": {"name": "p"}}, "default/p"),
        ({"metadata": {"uid": 7, "name": "p"}}, "default/p"),  # not a string: not a uid
        ({"metadata": None}, "default/"),
        ({}, "default/"),
    ],
)
def test_pod_ids_are_the_uid_else_namespace_and_name(pod, expected):
    assert pod_id(pod) == expected


def test_a_parsed_pod_has_the_same_id_as_its_object():
    from hami_sim.engine.simulate import Simulator

    for pod, expected in [
        ({"metadata": {"uid": "u-1", "namespace": "ml", "name": "p"}, "spec": {"containers": []}}, "u-1"),
        ({"metadata": {"name": "p"}, "spec": {"containers": []}}, "default/p"),
    ]:
        assert Simulator().pod_context(pod).pod.key == pod_id(pod) == expected

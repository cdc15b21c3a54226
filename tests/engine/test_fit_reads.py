"""One definition of what a fit reads: every model field is declared read or excluded with a reason,
and the cache keys over the model are derived from those declarations."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from hami_sim.engine import model
from hami_sim.engine.model import DeviceInfo, DeviceUsage, MigPlacement, PodView
from hami_sim.engine.registration_templates import _TEMPLATE_NAMES

MODEL_TYPES = [
    obj
    for obj in vars(model).values()
    if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == model.__name__
]


def test_every_model_dataclass_is_checked():
    names = {t.__name__ for t in MODEL_TYPES}
    assert {"DeviceInfo", "DeviceUsage", "ContainerDevice", "PodView", "NodeState", "Inventory"} <= names


@pytest.mark.parametrize("cls", MODEL_TYPES, ids=lambda c: c.__name__)
def test_each_field_is_read_by_a_fit_or_excluded_with_a_reason(cls):
    fields = [f.name for f in dataclasses.fields(cls)]
    read, excluded = cls.FIT_READS, cls.NOT_READ
    undeclared = [f for f in fields if f not in read and f not in excluded]
    assert not undeclared, f"{cls.__name__}: declare {undeclared} in FIT_READS or NOT_READ (with why)"
    assert not set(read) & set(excluded), f"{cls.__name__}: a field both read and excluded"
    assert set(read) | set(excluded) <= set(fields), f"{cls.__name__}: declares a field it lacks"
    assert all(reason.strip() for reason in excluded.values()), (
        f"{cls.__name__}: an exclusion without a reason"
    )


#: a value other than the default for each field a placement changes (a new one needs a row here)
PLACED = {
    "used": 1,
    "usedmem": 1000,
    "usedcores": 10,
    "mig_in_use": [("1g.10gb", MigPlacement(0, 1))],
    "custom_info": {"qos": "best-effort"},
    "pod_infos": ({"metax-tech.com/sgpu-app-class": "online"},),
}


@pytest.mark.parametrize("name", DeviceUsage.PLACEMENT_CHANGES)
def test_the_estimators_usage_signature_tells_every_placement_change_apart(name):
    from hami_sim.engine.estimate import device_signature

    fresh = DeviceUsage("GPU-0", 0, 10, 81920, 100, "NVIDIA A100", 0, "", True, "NVIDIA")
    placed = dataclasses.replace(fresh, **{name: PLACED[name]})
    assert device_signature([fresh]) != device_signature([placed])  # no shared verdict across the change
    # equal content, one verdict
    assert device_signature([placed]) == device_signature([copy.deepcopy(placed)])
    assert isinstance(hash(device_signature([placed])), int)  # usable as the memo's key


def test_keys_are_derived_from_the_declarations():
    assert set(DeviceInfo.SHAPE) == set(DeviceInfo.FIT_READS) - {"id", "custom_info"}
    assert set(_TEMPLATE_NAMES) <= set(DeviceInfo.SHAPE)
    assert set(DeviceUsage.SCORE_READS) <= set(DeviceUsage.FIT_READS)
    assert set(DeviceUsage.PLACEMENT_CHANGES) <= set(DeviceUsage.FIT_READS)
    assert set(PodView.FIT_READS) == {"annotations", "requests"}


@pytest.mark.parametrize(
    ("change", "same_key"),
    [
        ({"metadata": {"name": "other", "namespace": "ml"}}, True),  # identity only: shared verdicts
        ({"metadata": {"name": "p", "namespace": "ml", "uid": "u-1"}}, True),
        (
            {
                "metadata": {
                    "name": "p",
                    "namespace": "ml",
                    "annotations": {"hami.io/gpu-scheduler-policy": "binpack"},
                }
            },
            False,
        ),
    ],
)
def test_the_pod_key_follows_what_a_fit_reads(change, same_key):
    from hami_sim.engine.simulate import EngineConfig, Simulator

    limits = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1000"}
    pod = {
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
    }
    sim = Simulator(EngineConfig(cache_bytes=0))
    assert (sim.pod_context(pod).key == sim.pod_context(pod | change).key) is same_key

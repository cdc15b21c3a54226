"""The process-wide ``Simulator``, built once from settings (the engine itself knows no Django)."""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings
from django.utils.module_loading import import_string

from hami_sim.engine.simulate import EngineConfig, Simulator
from hami_sim.engine.vendors import default_vendors
from hami_sim.engine.vendors.nvidia import NvidiaConfig

__all__ = ["get_simulator", "engine_config"]


def engine_config() -> EngineConfig:
    hami = settings.HAMI
    nv = hami["NVIDIA"]
    nvidia = NvidiaConfig(
        resource_count_name=nv["resourceCountName"],
        resource_memory_name=nv["resourceMemoryName"],
        resource_memory_percentage_name=nv["resourceMemoryPercentageName"],
        resource_core_name=nv["resourceCoreName"],
        default_memory=nv["defaultMemory"],
        default_cores=nv["defaultCores"],
        memory_factor=nv["memoryFactor"],
    )
    return EngineConfig(
        node_policy=hami["NODE_SCHEDULER_POLICY"],
        gpu_policy=hami["GPU_SCHEDULER_POLICY"],
        vendors=tuple(default_vendors(nvidia)),
    )


@lru_cache(maxsize=1)
def get_simulator() -> Simulator:
    resolver_path = getattr(settings, "HAMI_INVENTORY_RESOLVER", "")
    resolver = import_string(resolver_path) if resolver_path else None
    return Simulator(engine_config(), resolver)

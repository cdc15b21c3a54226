"""Registration codecs several HAMi backends share: devices from an annotation or from capacity.

A backend's ``node_devices`` is its registration codec; the shared ones are here: a JSON
``[]DeviceInfo`` annotation (``json_devices``), the legacy colon format (``legacy_devices``), and
devices HAMi synthesises from ``status.capacity`` numbers (``capacity_devices``,
``core_split_devices``, ``synthesise``: identical devices named after the node). What each one
reads from the node is the backend's ``node_reads`` declaration (``reads.NodeReads``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ..annotations import AnnotationError, decode_device_json, decode_legacy
from ..model import DeviceInfo, InventoryError
from .reads import capacity_raw, node_name
from .request_rules import CountMemoryCoreConfig, int32, quantity_int

__all__ = [
    "MAX_SYNTHESISED_DEVICES",
    "capacity_int",
    "json_devices",
    "legacy_devices",
    "whole_devices",
    "capacity_devices",
    "core_split_devices",
    "check_device_limit",
    "synthesise",
]


def capacity_int(node: Mapping, name: str) -> int:
    """``node.Status.Capacity.Name(name, DecimalSI).AsInt64()``: a missing or bad value reads as 0."""
    value = quantity_int(capacity_raw(node, name))
    return value if value is not None else 0


def _registered_devices(
    annotations: Mapping[str, str],
    key: str,
    decode: Callable[[str, str], list[DeviceInfo]],
    vendor: str,
    empty_error: str,
) -> list[DeviceInfo]:
    """One registration annotation decoded by ``decode``; [] when absent, ``InventoryError`` when bad."""
    raw = annotations.get(key)
    if raw is None:
        return []
    try:
        devices = decode(raw, vendor)
    except AnnotationError as exc:
        raise InventoryError(key, str(exc)) from None
    if not devices:
        raise InventoryError(key, empty_error)
    return devices


def json_devices(annotations: Mapping[str, str], key: str, vendor: str, empty_error: str) -> list[DeviceInfo]:
    """A JSON ``[]DeviceInfo`` registration (``UnMarshalNodeDevices``); [] when the key is absent."""
    return _registered_devices(annotations, key, decode_device_json, vendor, empty_error)


def legacy_devices(annotations: Mapping[str, str], key: str, vendor: str) -> list[DeviceInfo]:
    """A legacy colon/comma registration (``DecodeNodeDevices``, Hygon and Iluvatar at v2.10)."""
    return _registered_devices(annotations, key, decode_legacy, vendor, "no gpu found on node")


def whole_devices(annotations: Mapping[str, str], key: str, vendor: str) -> list[DeviceInfo]:
    """The count-only JSON registration (Biren, Vastai): ``json_devices`` whose ``devcore`` HAMi
    forces to 100."""
    return [
        replace(dev, devcore=100) for dev in json_devices(annotations, key, vendor, "no gpu found on node")
    ]


def capacity_devices(
    node: Mapping, name: str, vendor: str, *, id_infix: str, split: int, devmem: int, devcore: int
) -> list[DeviceInfo]:
    """``capacity[name]`` identical devices of ``vendor`` (none when it is absent or not positive)."""
    cards = capacity_int(node, name)
    if cards <= 0:
        return []
    return synthesise(
        node,
        cards,
        vendor=vendor,
        id_infix=id_infix,
        split=split,
        devmem=devmem,
        devcore=devcore,
        source=name,
    )


def core_split_devices(
    node: Mapping,
    vendor: str,
    config: CountMemoryCoreConfig,
    *,
    per_card: int,
    memory_unit: int,
    id_infix: str,
) -> list[DeviceInfo]:
    """Cambricon's and Moore Threads' shared layout: ``capacity[cores] / per_card`` cards (rounded
    up: HAMi loops while ``i * per_card < cores``), split count 100, ``per_card`` cores each and
    ``capacity[memory] x memory_unit`` MiB spread over them (int32, as HAMi computes it)."""
    cores = capacity_int(node, config.resource_core_name)
    if cores <= 0:
        return []
    memory = capacity_int(node, config.resource_memory_name)
    return synthesise(
        node,
        -(-cores // per_card),
        vendor=vendor,
        id_infix=id_infix,
        split=100,
        devmem=int32(memory * memory_unit * per_card // cores),
        devcore=per_card,
        source=config.resource_core_name,
    )


MAX_SYNTHESISED_DEVICES = 1024


def check_device_limit(count: int, vendor: str, source: str) -> None:
    """Refuse a capacity that would make more than ``MAX_SYNTHESISED_DEVICES`` devices.

    No real node has that many accelerators; a typo such as ``8e9`` must not make the extender
    allocate billions of devices.
    """
    if count > MAX_SYNTHESISED_DEVICES:
        raise InventoryError(
            f"status.capacity[{source}]",
            f"{count} {vendor} devices; hami-sim simulates at most {MAX_SYNTHESISED_DEVICES} per node",
        )


def synthesise(
    node: Mapping,
    count: int,
    *,
    vendor: str,
    id_infix: str,
    split: int,
    devmem: int,
    devcore: int,
    source: str = "",
    custom_info: dict | None = None,
) -> list[DeviceInfo]:
    """``count`` identical healthy devices named ``<node>-<infix>-<i>``, as the capacity vendors do.

    ``custom_info`` (shared read-only by every device) defaults to none. Over
    ``MAX_SYNTHESISED_DEVICES`` devices are refused (``check_device_limit``).
    """
    check_device_limit(count, vendor, source or vendor)
    name = node_name(node)
    return [
        DeviceInfo(
            id=f"{name}-{id_infix}-{i}",
            index=i,
            count=split,
            devmem=devmem,
            devcore=devcore,
            type=vendor,
            health=True,
            device_vendor=vendor,
            custom_info=custom_info,
        )
        for i in range(count)
    ]

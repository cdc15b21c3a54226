"""The operator's admin: groups, profiles with inline device rows, inventories, drift, task runs.

One module per page family (``groups``, ``device_profiles`` with its ``device_rows`` inline,
``inventories`` with the drift findings); importing them registers them.
"""

from __future__ import annotations

from .device_profiles import DeviceProfileAdmin, rows_summary
from .groups import NodeGroupAdmin
from .inventories import DriftFindingAdmin, NodeInventoryAdmin

__all__ = ["NodeGroupAdmin", "DeviceProfileAdmin", "NodeInventoryAdmin", "DriftFindingAdmin", "rows_summary"]

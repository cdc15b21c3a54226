"""Constants of the profiles app: template naming, placeholder UUIDs, default template capacity."""

from __future__ import annotations

import re
import uuid

__all__ = [
    "TEMPLATE_PREFIX",
    "ESTIMATOR_SUFFIX",
    "UUID_NAMESPACE",
    "DEFAULT_CAPACITY",
    "KWOK_ANNOTATION",
    "REGISTRATION_PREFIX",
]

# Cluster Autoscaler names template nodes ``template-node-for-<group>-<rand>``; the binpacking
# estimator copies them as ``...-e-<i>`` and upcoming-node copies add ``-upcoming-<i>``.
TEMPLATE_PREFIX = "template-node-for-"
ESTIMATOR_SUFFIX = re.compile(r"(?:-(?:e|upcoming)-\d+)+$")
# Placeholder device UUIDs are uuid5(namespace, "<group>/<vendor>/<index>"): stable across renders,
# so memo keys, drift comparisons and exported YAML do not change when nothing changed.
UUID_NAMESPACE = uuid.UUID("6b1f3f0e-5d8a-4a53-9d43-6c1d2a7e9a10")
DEFAULT_CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "200Gi"}
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
# Annotations kept in NodeInventory.annotations: registration, pair scores, cordon, handshake.
REGISTRATION_PREFIX = "hami.io/"

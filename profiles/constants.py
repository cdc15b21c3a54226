"""Constants of the profiles app: template naming, placeholder UUIDs, default template capacity."""

from __future__ import annotations

import uuid

__all__ = [
    "UUID_NAMESPACE",
    "DEFAULT_CAPACITY",
    "KWOK_ANNOTATION",
    "REGISTRATION_PREFIX",
]

# Template-node names (CA's ``template-node-for-<group>-<n>``): ``hami_sim.engine.names``.
# Placeholder device UUIDs are uuid5(namespace, "<group>/<vendor>/<index>"): stable across renders,
# so memo keys, drift comparisons and exported YAML do not change when nothing changed.
UUID_NAMESPACE = uuid.UUID("6b1f3f0e-5d8a-4a53-9d43-6c1d2a7e9a10")
DEFAULT_CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "200Gi"}
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
# Annotations kept in NodeInventory.annotations: registration, pair scores, cordon, handshake.
REGISTRATION_PREFIX = "hami.io/"

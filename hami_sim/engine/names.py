"""Names the engine builds and reads back: pod ids and Cluster Autoscaler template-node names.

One home for each, because every copy drifted: template-node names were built in five places, and
the two that left out the index were read back as the wrong node group (``template-node-for-gpu-a10``
as group ``gpu``).

Template nodes: CA names them ``template-node-for-<group>-<n>`` (``<n>`` a random number); its
binpacking estimator copies them as ``<template>-e-<i>`` and upcoming-node copies append
``-upcoming-<i>``. The group id may contain dashes and our own names may leave the index out, so a
name is resolved against the known group ids: the whole rest first, then without the copy suffixes,
then without its last ``-<part>`` too.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping

__all__ = [
    "TEMPLATE_PREFIX",
    "estimated_node_name",
    "pod_id",
    "pod_key",
    "template_node_group",
    "template_node_name",
]

TEMPLATE_PREFIX = "template-node-for-"
_COPY_SUFFIX = re.compile(r"(?:-(?:e|upcoming)-\d+)+$")


def pod_key(uid: object, namespace: object, name: object) -> str:
    """A pod's id in sessions, estimates and decisions: ``metadata.uid``, else ``<namespace>/<name>``
    (namespace ``default`` when unset, as the API server would default it)."""
    if isinstance(uid, str) and uid:
        return uid
    return f"{namespace or 'default'}/{name or ''}"


def pod_id(pod: Mapping) -> str:
    """``pod_key`` of a Pod object (a missing or malformed ``metadata`` counts as empty)."""
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    if type(meta) is not dict:  # plain dicts skip the slower ABC check (one call per pending pod)
        meta = meta if isinstance(meta, Mapping) else {}
    return pod_key(meta.get("uid"), meta.get("namespace"), meta.get("name"))


def template_node_name(group: str, index: int | None = 0) -> str:
    """CA's name for a template node of ``group``; ``index=None`` leaves the ``-<n>`` out."""
    return f"{TEMPLATE_PREFIX}{group}" if index is None else f"{TEMPLATE_PREFIX}{group}-{index}"


def estimated_node_name(template: str, i: int) -> str:
    """The ``i``-th new node the binpacking estimator adds from ``template`` (CA's ``-e-<i>``)."""
    return f"{template}-e-{i}"


def template_node_group(node_name: str, groups: Container[str]) -> str | None:
    """The group id in a template-node name, if it is one of ``groups``; None for other names.

    ``template-node-for-gpu-a10``, ``...-gpu-a10-5577006791947779410`` and ``...-gpu-a10-7-e-3`` all
    resolve to ``gpu-a10`` (when it is a known group), never to a shorter known prefix such as ``gpu``.
    """
    if not node_name.startswith(TEMPLATE_PREFIX):
        return None
    rest = node_name[len(TEMPLATE_PREFIX) :]
    if rest in groups:  # no index (and a group id that merely looks like a copy suffix)
        return rest
    if "-e-" in rest or "-upcoming-" in rest:  # (a copy suffix needs one: skip the regex without)
        rest = _COPY_SUFFIX.sub("", rest)
        if rest in groups:
            return rest
    group, dash, index = rest.rpartition("-")
    return group if dash and index and group in groups else None

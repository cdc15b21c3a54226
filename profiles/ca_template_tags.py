"""What a cloud provider's Cluster Autoscaler integration reads to build a cold group's template
(scale-from-zero), rendered from the group's profile (docs/cluster-autoscaler.md).

Formats, from CA 1.32's provider code:
- aws (``cloudprovider/aws/aws_manager.go``): ASG tags ``k8s.io/cluster-autoscaler/node-template/
  resources/<resource>`` (any resource name), ``.../label/<key>`` and ``.../taint/<key>`` =
  ``value:Effect``.
- azure (``cloudprovider/azure/azure_template.go``, ``azure_util.go``): VMSS tags
  ``k8s.io_cluster-autoscaler_node-template_resources_<name>`` (CA turns ``_`` into ``/``, so a
  resource name cannot hold ``_``), ``..._label_<key>`` and ``..._taint_<key>`` (``/`` written as
  ``_``, ``_`` as ``~2``).
- clusterapi (``cloudprovider/clusterapi/clusterapi_unstructured.go``, ``clusterapi_utils.go``):
  MachineSet/MachineDeployment annotations ``capacity.cluster-autoscaler.kubernetes.io/{cpu,memory,
  maxPods,gpu-type,gpu-count,labels,taints}``: one GPU resource only, so no memory or cores names.
  CA takes cpu, memory and maxPods from these annotations as facts about the machine; where the
  group sets no ``capacity`` they are hami-sim's ``DEFAULT_CAPACITY``, so the answer lists those
  keys under ``defaults`` (aws and azure take cpu and memory from the instance type instead).

Aggregate capacity (``CA_AGGREGATE_CAPACITY``, deploy/capacity): CA's profile then counts the memory
and cores names the watcher advertises on live nodes, so a cold group's template must carry them
too, or no pod asking them fits it. aws and azure tags carry them in every mode (harmless while CA
ignores them). clusterapi annotations cannot (one GPU resource); CA also reads any resource from the
infrastructure machine template's ``status.capacity`` (annotations win), so in that mode the answer
lists them under ``statusCapacity``: what that status must hold.
"""

from __future__ import annotations

from hami_sim.engine.blindspot import aggregate_names
from hami_sim.engine.vendors.nvidia import NVIDIA
from hami_sim.project.conf import conf
from hami_sim.runtime.simulator import get_simulator

from .constants import DEFAULT_CAPACITY
from .models import NodeGroup
from .nodetemplates import group_template
from .vendors import count_resource, engine_vendor

__all__ = ["PROVIDERS", "ca_template"]

PROVIDERS = ("aws", "azure", "clusterapi")
AWS = "k8s.io/cluster-autoscaler/node-template/"
AZURE = "k8s.io_cluster-autoscaler_node-template_"
CAPI = "capacity.cluster-autoscaler.kubernetes.io/"
_NODE_SPECIFIC_LABELS = ("kubernetes.io/hostname",)


def _device_totals(group: NodeGroup) -> dict[str, str]:
    """The memory and cores names a node of the group advertises in aggregate mode (the engine's
    ``aggregate_names``: NVIDIA's, in MiB and 100 per card) with the group's totals: what a template
    must advertise for CA to count pods asking them (unless CA's profile ignores them, docs)."""
    names = aggregate_names(get_simulator().vendors.values())
    totals: dict[str, int] = {}
    for profile in group.profiles.all():
        entry = names.get(profile.vendor)
        if entry is None:
            continue
        for row in profile.devices.all():
            totals[entry.memory] = (
                totals.get(entry.memory, 0) + row.devmem * row.quantity // entry.memory_unit
            )
            totals[entry.cores] = totals.get(entry.cores, 0) + row.devcore * row.quantity
    return {k: str(v) for k, v in totals.items()} if any(totals.values()) else {}


def _parts(group: NodeGroup) -> tuple[dict, dict, list, dict]:
    node = group_template(group)
    capacity = dict(node["status"]["capacity"])
    labels = {
        k: v for k, v in (node["metadata"].get("labels") or {}).items() if k not in _NODE_SPECIFIC_LABELS
    }
    extended = {k: v for k, v in capacity.items() if "/" in k}
    return capacity, labels, list(node["spec"].get("taints") or []), {**extended, **_device_totals(group)}


def _azure_key(key: str) -> str:
    return key.replace("_", "~2").replace("/", "_")


def _taint_value(taint: dict) -> str:
    return f"{taint.get('value', '')}:{taint.get('effect', 'NoSchedule')}"


def _aws(capacity, labels, taints, resources) -> dict:
    tags = {f"{AWS}resources/{k}": v for k, v in resources.items()}
    tags.update({f"{AWS}label/{k}": v for k, v in labels.items()})
    tags.update({f"{AWS}taint/{t['key']}": _taint_value(t) for t in taints})
    return {"tags": tags}


def _azure(capacity, labels, taints, resources) -> dict:
    tags = {f"{AZURE}resources_{k.replace('/', '_')}": v for k, v in resources.items() if "_" not in k}
    tags.update({f"{AZURE}label_{_azure_key(k)}": v for k, v in labels.items()})
    tags.update({f"{AZURE}taint_{_azure_key(t['key'])}": _taint_value(t) for t in taints})
    return {"tags": tags}


def _clusterapi(capacity, labels, taints, resources) -> dict:
    count_name = count_resource(engine_vendor(NVIDIA))  # clusterapi's gpu-type: the configured NVIDIA count
    annotations = {f"{CAPI}{k}": capacity[k] for k in ("cpu", "memory") if k in capacity}
    if "pods" in capacity:
        annotations[f"{CAPI}maxPods"] = capacity["pods"]
    if count_name in capacity:
        annotations[f"{CAPI}gpu-type"] = count_name
        annotations[f"{CAPI}gpu-count"] = capacity[count_name]
    if labels:
        annotations[f"{CAPI}labels"] = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    if taints:
        annotations[f"{CAPI}taints"] = ",".join(
            f"{t['key']}={t.get('value', '')}:{t.get('effect', 'NoSchedule')}" for t in taints
        )
    return {"annotations": annotations}


def _defaulted(group: NodeGroup, annotations: dict) -> list[str]:
    """The clusterapi annotations whose values are hami-sim's defaults, not the group's capacity."""
    own = group.capacity or {}
    keys = {"cpu": "cpu", "memory": "memory", "pods": "maxPods"}
    return sorted(
        f"{CAPI}{key}"
        for name, key in keys.items()
        if name in DEFAULT_CAPACITY and name not in own and f"{CAPI}{key}" in annotations
    )


def ca_template(group: NodeGroup, provider: str) -> dict:
    """``{"provider", "nodeGroup", "tags"|"annotations"}`` for ``provider`` (one of ``PROVIDERS``);
    clusterapi adds ``defaults``: the annotation keys whose values are defaults, not facts (set the
    group's ``capacity`` to the machine's real cpu, memory and pods to replace them), and in aggregate
    mode ``statusCapacity``: the device totals the infrastructure machine template's
    ``status.capacity`` must hold."""
    render = {"aws": _aws, "azure": _azure, "clusterapi": _clusterapi}[provider]
    body = render(*_parts(group))
    if provider == "clusterapi":
        body["defaults"] = _defaulted(group, body["annotations"])
        if conf().ca_aggregate_capacity:
            body["statusCapacity"] = _device_totals(group)
    return {"provider": provider, "nodeGroup": group.name, **body}

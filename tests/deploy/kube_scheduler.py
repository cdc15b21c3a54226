"""kube-scheduler's rules for a ``KubeSchedulerConfiguration`` file, as Cluster Autoscaler 1.32.1
loads ``--scheduler-config-file`` (``utils/scheduler/scheduler.go`` ``ConfigFromPath``: the
scheduler scheme's strict decoder, v1 defaulting, then kube-scheduler's
``ValidateKubeSchedulerConfiguration``; then ``simulator/framework/handle.go`` refuses any number
of profiles but one and builds the framework from CA's in-tree registry and ``Profiles[0]`` alone:
the file's ``extenders`` are decoded and validated but never called, the same at tags
cluster-autoscaler-1.32.7 and cluster-autoscaler-1.36.1).

Ported rules (kubernetes v1.32, ``pkg/scheduler/apis/config/validation`` and
``staging/src/k8s.io/kube-scheduler/config/v1``): the v1 group and kind; strict fields (unknown
ones fail decoding); one profile for CA, each with a scheduler name (defaulted) and unique
``pluginConfig`` names of in-tree plugins (removed ones refused); ``NodeResourcesFit`` args:
``ignoredResources`` a list of qualified names, ``ignoredResourceGroups`` qualified names without
``/``, ``scoringStrategy`` (v1-defaulted when absent) of a supported type, resource weights in
(0, 100] (0 defaults to 1), a ``requestedToCapacityRatio`` shape only for that type, increasing
utilisation in [0, 100] and scores in [0, 10]; extenders with a positive weight when they
prioritise, extended-resource ``managedResources`` named once, at most one binder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

API_VERSION = "kubescheduler.config.k8s.io/v1"

#: kubernetes v1.32 ``pkg/scheduler/framework/plugins/registry.go`` (in-tree plugins CA registers)
IN_TREE_PLUGINS = frozenset(
    {
        "DynamicResources",
        "SchedulingGates",
        "PrioritySort",
        "DefaultBinder",
        "DefaultPreemption",
        "ImageLocality",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeName",
        "NodePorts",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "NodeUnschedulable",
        "NodeVolumeLimits",
        "PodTopologySpread",
        "TaintToleration",
        "VolumeBinding",
        "VolumeRestrictions",
        "VolumeZone",
    }
)
#: ``invalidPluginsByVersion`` for v1: removed plugins a v1 file may not name
REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})

_TOP_FIELDS = {
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
}
_PROFILE_FIELDS = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
_FIT_FIELDS = {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"}
_STRATEGY_FIELDS = {"type", "resources", "requestedToCapacityRatio"}
_STRATEGY_TYPES = {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}
_EXTENDER_FIELDS = {
    "urlPrefix",
    "filterVerb",
    "preemptVerb",
    "prioritizeVerb",
    "weight",
    "bindVerb",
    "enableHTTPS",
    "tlsConfig",
    "httpTimeout",
    "nodeCacheCapable",
    "managedResources",
    "ignorable",
}
_TLS_FIELDS = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def qualified_name_errors(value: object) -> list[str]:
    """apimachinery ``IsQualifiedName`` (what ``ValidateLabelName`` applies)."""
    if not isinstance(value, str):
        return [f"{value!r} is not a string"]
    prefix, _, name = value.rpartition("/")
    errors = []
    if "/" in prefix or (value.count("/") == 1 and not prefix):
        return [f"{value!r}: a qualified name has at most one '/' and a non-empty prefix"]
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        errors.append(f"{value!r}: prefix must be a DNS-1123 subdomain")
    if not name or len(name) > 63 or not _NAME.match(name):
        errors.append(f"{value!r}: name part must be 63 characters or less of [A-Za-z0-9-_.]")
    return errors


def _unknown(where: str, obj: Mapping, allowed: set[str]) -> list[str]:
    return [f"{where}: unknown field {k!r} (strict decoding)" for k in obj if k not in allowed]


def _string_list(where: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return [f"{where} must be a list of strings"]
    return []


def _shape_errors(where: str, shape: object) -> list[str]:
    if not isinstance(shape, list) or not shape:
        return [f"{where}: at least one point must be specified"]
    errors = []
    for i, point in enumerate(shape):
        u, s = point.get("utilization", 0), point.get("score", 0)
        if not 0 <= u <= 100:
            errors.append(f"{where}[{i}].utilization not in [0, 100]")
        if not 0 <= s <= 10:
            errors.append(f"{where}[{i}].score not in [0, 10]")
        if i and shape[i - 1].get("utilization", 0) >= u:
            errors.append(f"{where}[{i}].utilization: values must be sorted in increasing order")
    return errors


def _strategy_errors(where: str, strategy: object) -> list[str]:
    if not isinstance(strategy, Mapping):
        return [f"{where} must be an object"]
    errors = _unknown(where, strategy, _STRATEGY_FIELDS)
    kind = strategy.get("type", "LeastAllocated")  # v1 default
    if kind not in _STRATEGY_TYPES:
        errors.append(f"{where}.type {kind!r} not supported: {sorted(_STRATEGY_TYPES)}")
    for i, res in enumerate(strategy.get("resources") or []):
        weight = res.get("weight", 0) or 1  # v1 defaulting: 0 or unset is 1
        if not isinstance(weight, int) or not 0 < weight <= 100:
            errors.append(f"{where}.resources[{i}].weight {weight!r} not in (0, 100]")
    ratio = strategy.get("requestedToCapacityRatio")
    if kind == "RequestedToCapacityRatio":
        if ratio is None:
            errors.append(f"{where}.requestedToCapacityRatio must be specified")
        else:
            errors += _shape_errors(f"{where}.requestedToCapacityRatio.shape", ratio.get("shape"))
    elif ratio is not None:
        errors.append(
            f"{where}.requestedToCapacityRatio must be nil when type is not RequestedToCapacityRatio"
        )
    return errors


def fit_args_errors(where: str, args: object) -> list[str]:
    """``ValidateNodeResourcesFitArgs`` after v1 decoding and defaulting."""
    if not isinstance(args, Mapping):
        return [f"{where} must be an object"]
    errors = _unknown(where, args, _FIT_FIELDS)
    for key in ("ignoredResources", "ignoredResourceGroups"):
        if key not in args:
            continue
        listed = _string_list(f"{where}.{key}", args[key])
        errors += listed
        if listed:
            continue
        for i, name in enumerate(args[key]):
            errors += [f"{where}.{key}[{i}]: {e}" for e in qualified_name_errors(name)]
            if key == "ignoredResourceGroups" and "/" in name:
                errors.append(f"{where}.{key}[{i}]: resource group name can't contain '/'")
    if "scoringStrategy" in args:
        errors += _strategy_errors(f"{where}.scoringStrategy", args["scoringStrategy"])
    return errors


def _profile_errors(where: str, profile: object) -> list[str]:
    if not isinstance(profile, Mapping):
        return [f"{where} must be an object"]
    errors = _unknown(where, profile, _PROFILE_FIELDS)
    if "schedulerName" in profile and not profile["schedulerName"]:
        errors.append(f"{where}.schedulerName: Required value")
    seen: set[str] = set()
    for i, entry in enumerate(profile.get("pluginConfig") or []):
        at = f"{where}.pluginConfig[{i}]"
        name = entry.get("name")
        errors += _unknown(at, entry, {"name", "args"})
        if name in seen:
            errors.append(f"{at}: Duplicate value {name!r}")
        seen.add(name)
        if name in REMOVED_PLUGINS:
            errors.append(f"{at}: {name!r} was invalid in version {API_VERSION!r}")
        elif name not in IN_TREE_PLUGINS:
            errors.append(f"{at}: {name!r} is not an in-tree plugin CA registers")
        elif name == "NodeResourcesFit":
            errors += fit_args_errors(f"{at}.args", entry.get("args") or {})
    return errors


def _extender_errors(where: str, extender: Mapping) -> list[str]:
    errors = _unknown(where, extender, _EXTENDER_FIELDS)
    errors += _unknown(f"{where}.tlsConfig", extender.get("tlsConfig") or {}, _TLS_FIELDS)
    if extender.get("prioritizeVerb") and extender.get("weight", 0) <= 0:
        errors.append(f"{where}.weight must have a positive weight applied to it")
    names: set[str] = set()
    for j, res in enumerate(extender.get("managedResources") or []):
        name = res.get("name", "")
        at = f"{where}.managedResources[{j}].name"
        errors += [f"{at}: {e}" for e in qualified_name_errors(name)]
        if "/" not in name or name.startswith("kubernetes.io/") or name.startswith("requests."):
            errors.append(f"{at}: {name!r} is an invalid extended resource name")
        if name in names:
            errors.append(f"{at}: duplicate extender managed resource name")
        names.add(name)
    return errors


def scheduler_config_errors(config: Any, *, profiles_expected: int | None = 1) -> list[str]:
    """Every rule a KubeSchedulerConfiguration v1 file breaks; ``profiles_expected=1`` adds CA's
    one-profile rule (None: kube-scheduler alone, any number of uniquely named profiles)."""
    if not isinstance(config, Mapping):
        return ["the document must be an object"]
    errors = _unknown("", config, _TOP_FIELDS)
    if config.get("apiVersion") != API_VERSION:
        errors.append(f"apiVersion must be {API_VERSION!r}, got {config.get('apiVersion')!r}")
    if config.get("kind") != "KubeSchedulerConfiguration":
        errors.append(f"kind must be KubeSchedulerConfiguration, got {config.get('kind')!r}")
    profiles = config.get("profiles") or [{}]  # v1 defaulting adds one default-scheduler profile
    if profiles_expected is not None and len(profiles) != profiles_expected:
        errors.append(f"expected one scheduler profile only (found {len(profiles)} profiles)")
    names = [p.get("schedulerName", "default-scheduler") for p in profiles if isinstance(p, Mapping)]
    if len(set(names)) != len(names):
        errors.append(f"profiles: duplicate schedulerName in {names}")
    for i, profile in enumerate(profiles):
        errors += _profile_errors(f"profiles[{i}]", profile)
    extenders = config.get("extenders") or []
    for i, extender in enumerate(extenders):
        errors += _extender_errors(f"extenders[{i}]", extender)
    if sum(1 for e in extenders if e.get("bindVerb")) > 1:
        errors.append("extenders: only one extender can implement bind")
    pct = config.get("percentageOfNodesToScore")
    if pct is not None and not 0 <= pct <= 100:
        errors.append("percentageOfNodesToScore not in valid range [0-100]")
    if config.get("parallelism", 16) <= 0:
        errors.append("parallelism should be an integer value greater than zero")
    return errors

"""Cluster Autoscaler's ``--scheduler-config-file`` for both ways of running CA (docs/cluster-autoscaler.md),
rendered from the configured vendors (``HAMI`` settings over the vendor registry), so a renamed or
added HAMi resource reaches CA by ``make ca-config`` instead of a hand edit.

- Upstream CA (``deploy/cluster-autoscaler/``): CA builds its scheduler framework from the ONE
  profile of that file, plugin args included (``simulator/framework/handle.go``: exactly one
  profile). ``NodeResourcesFit`` ``ignoredResources`` lists every HAMi resource name except the
  device counts (memory, cores, percentage, priority), so CA counts only the device count a
  template advertises, as kube-scheduler does with HAMi's ``ignoredByScheduler``.
- Upstream CA with aggregate capacity (``deploy/capacity/cluster-autoscaler/``, the component that
  goes with the ``deploy/capacity`` overlay): the same profile, but the memory and cores names the
  watcher advertises on each HAMi node (``hami_sim.engine.blindspot.aggregate_names``) are no longer
  ignored, so CA counts them against each node's totals.
- A CA built with the extender patch (``deploy/cluster-autoscaler-extender/``): the extender entry
  with every HAMi resource name as ``managedResources`` (``ignoredByScheduler: true``).

The apiVersion is the configured CA release's (``ca_releases.CARelease.scheduler_api_version``: CA's
``utils/scheduler`` ConfigFromPath decodes with kube-scheduler's scheme, and every release from 1.32 to
the newest reads ``kubescheduler.config.k8s.io/v1`` with exactly one profile), so the files are the
same for each supported release.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml

from hami_sim.engine.blindspot import aggregate_names
from hami_sim.engine.ca_releases import DEFAULT_VERSION, SUPPORTED, CARelease, ca_release
from hami_sim.engine.vendors import Vendor
from profiles.vendors import count_resource

__all__ = [
    "UPSTREAM_PATH",
    "CAPACITY_PATH",
    "aggregate_resources",
    "EXTENDER_PATH",
    "REGENERATE",
    "device_count_resources",
    "ignored_resources",
    "managed_resources",
    "upstream_scheduler_config",
    "extender_scheduler_config",
    "rendered_files",
]

UPSTREAM_PATH = Path("deploy/cluster-autoscaler/scheduler-config.yaml")
CAPACITY_PATH = Path("deploy/capacity/cluster-autoscaler/scheduler-config.yaml")
EXTENDER_PATH = Path("deploy/cluster-autoscaler-extender/scheduler-config.yaml")
REGENERATE = "make ca-config"

_UPSTREAM_HEAD = f"""\
# GENERATED from the enabled vendors by `{REGENERATE}` (manage.py ca_config); do not edit by hand.
# UPSTREAM Cluster Autoscaler's --scheduler-config-file (docs/cluster-autoscaler.md). CA builds its
# scheduler framework from the one profile here, plugin args included. NodeResourcesFit ignores
# every HAMi resource name except the device counts (memory, cores, percentage, priority): CA then
# counts only the device count a node-group template advertises, as kube-scheduler does with HAMi's
# ignoredByScheduler. hami-sim's gRPC expander applies HAMi's device rules to CA's options.
# Read the same way by every Cluster Autoscaler from {SUPPORTED} (one profile, this apiVersion).
"""

_CAPACITY_HEAD = f"""\
# GENERATED from the enabled vendors by `{REGENERATE}` (manage.py ca_config); do not edit by hand.
# UPSTREAM Cluster Autoscaler's --scheduler-config-file WITH AGGREGATE CAPACITY (deploy/capacity;
# docs/cluster-autoscaler.md). hami-sim's watcher advertises on each HAMi node the sum of its cards'
# memory and cores under the names missing from ignoredResources below, so CA's NodeResourcesFit
# counts a pod's memory and cores against those totals. Everything else as in deploy/cluster-autoscaler.
# Use it only with the deploy/capacity overlay: a node that does not advertise these names fits no
# pod that asks them.
# Read the same way by every Cluster Autoscaler from {SUPPORTED} (one profile, this apiVersion).
"""

_EXTENDER_HEAD = f"""\
# GENERATED from the enabled vendors by `{REGENERATE}` (manage.py ca_config); do not edit by hand.
# The --scheduler-config-file for a Cluster Autoscaler BUILT WITH THE EXTENDER PATCH only (upstream
# CA loads this file but never calls extenders; use deploy/cluster-autoscaler for upstream CA).
#
# - nodeCacheCapable: false: CA sends full template Node objects (they exist nowhere else).
# - ignorable: false: a failed call fails the evaluation instead of silently ignoring devices.
# - managedResources: every HAMi resource name of the enabled vendors, ignoredByScheduler: true,
#   because these are virtual counts only the extender understands.
# - tlsConfig: CA's client certificate (mTLS) and caFile. Without caFile the Go client does NOT
#   verify the server. Files come from the Secret hami-sim-extender-client (deploy/cert-manager or
#   docs/production.md), mounted by deployment-patch.yaml.
# Read the same way by every Cluster Autoscaler from {SUPPORTED} (one profile, this apiVersion).
"""

_EXTENDER = {
    "urlPrefix": "https://hami-sim.hami-sim.svc:8443",
    "filterVerb": "filter-simulation",
    "prioritizeVerb": "prioritize-simulation",
    "weight": 1,
    "nodeCacheCapable": False,
    "enableHTTPS": True,
    "tlsConfig": {
        "insecure": False,
        "serverName": "hami-sim.hami-sim.svc",
        "certFile": "/etc/hami-sim/tls/tls.crt",
        "keyFile": "/etc/hami-sim/tls/tls.key",
        "caFile": "/etc/hami-sim/tls/ca.crt",
    },
    "httpTimeout": "10s",
    "ignorable": False,
}


def device_count_resources(vendors: Iterable[Vendor]) -> list[str]:
    """The resources that count devices (what device plugins advertise on a node), sorted."""
    return sorted({count_resource(v) for v in vendors})


def managed_resources(vendors: Iterable[Vendor]) -> list[str]:
    """Every pod resource name the vendors manage, sorted."""
    names: set[str] = set()
    for vendor in vendors:
        names |= vendor.resource_names()
    return sorted(names)


def aggregate_resources(vendors: Iterable[Vendor]) -> list[str]:
    """The memory and cores names nodes advertise as their cards' sums in aggregate mode, sorted."""
    return sorted({n for e in aggregate_names(vendors).values() for n in (e.memory, e.cores)})


def ignored_resources(vendors: Iterable[Vendor], aggregate: bool = False) -> list[str]:
    """HAMi's resource names CA's NodeResourcesFit must not count: all but the device counts (and,
    with ``aggregate``, but the names nodes advertise as their cards' sums)."""
    vendors = list(vendors)
    counted = set(device_count_resources(vendors))
    if aggregate:
        counted |= set(aggregate_resources(vendors))
    return sorted(set(managed_resources(vendors)) - counted)


class _Dumper(yaml.SafeDumper):
    """Lists indented under their key, as in the rest of deploy/."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _document(head: str, body: dict) -> str:
    return head + yaml.dump(body, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def upstream_scheduler_config(
    vendors: Iterable[Vendor], ca: CARelease | None = None, *, aggregate: bool = False
) -> str:
    """KubeSchedulerConfiguration v1 with one profile whose NodeResourcesFit ignores HAMi's
    non-count resources (scoringStrategy left to kube-scheduler's v1 default); ``aggregate``: it
    counts the names the watcher advertises as each node's sums."""
    ca = ca or ca_release(DEFAULT_VERSION)
    ignored = ignored_resources(vendors, aggregate)
    profile = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": ignored}}],
    }
    return _document(
        _CAPACITY_HEAD if aggregate else _UPSTREAM_HEAD,
        {
            "apiVersion": ca.scheduler_api_version,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [profile],
        },
    )


def extender_scheduler_config(vendors: Iterable[Vendor], ca: CARelease | None = None) -> str:
    """KubeSchedulerConfiguration v1 with hami-sim's extender managing every HAMi resource."""
    ca = ca or ca_release(DEFAULT_VERSION)
    managed = [{"name": name, "ignoredByScheduler": True} for name in managed_resources(vendors)]
    return _document(
        _EXTENDER_HEAD,
        {
            "apiVersion": ca.scheduler_api_version,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler"}],
            "extenders": [{**_EXTENDER, "managedResources": managed}],
        },
    )


def rendered_files(vendors: Iterable[Vendor], ca: CARelease | None = None) -> dict[Path, str]:
    """Repository-relative path -> the text ``make ca-config`` writes there for release ``ca``."""
    vendors = list(vendors)
    return {
        UPSTREAM_PATH: upstream_scheduler_config(vendors, ca),
        CAPACITY_PATH: upstream_scheduler_config(vendors, ca, aggregate=True),
        EXTENDER_PATH: extender_scheduler_config(vendors, ca),
    }

"""The project's own settings, typed, with their defaults in one place (``conf()``).

Why: the apps used to read ``getattr(settings, NAME, default)`` with the default repeated at every
call site (and sometimes a different one). ``hami_sim/project/settings.py`` takes each environment
variable's default from ``DEFAULTS`` below; code reads ``conf().name``. The values are read from
``django.conf.settings`` once and read again only when a setting changes (tests' ``settings``
fixture, ``override_settings``). The Cluster Autoscaler release the cluster runs is read the same
way, parsed once: ``configured_ca_release()``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed

from hami_sim.engine.ca_releases import CARelease, ca_release
from hami_sim.engine.estimate.inputs import TIME_LIMIT_SECONDS

__all__ = [
    "Conf",
    "DEFAULTS",
    "LISTENERS",
    "conf",
    "configured_ca_release",
    "configured_hami_release",
    "judging_releases",
]

#: the values of ``HAMI_SIM_LISTENER``; any other name refuses to start (``hami_sim.project.checks``)
LISTENERS = frozenset({"all", "extender", "web"})


@dataclass(frozen=True, slots=True)
class Conf:
    """Each field is the Django setting of the same name in upper case (docs/production.md)."""

    #: log one access line per request (``hami_sim.project.middleware.RequestIdMiddleware``)
    access_log: bool = True
    #: which endpoints this process serves: ``all``, ``extender`` or ``web``
    hami_sim_listener: str = "all"
    #: dotted path of the extender's template-node inventory resolver
    hami_inventory_resolver: str = "profiles.inventory.resolve"
    #: how often a process checks the profile catalog generation (cross-process invalidation)
    profile_cache_check_seconds: float = 1.0
    #: a task run still ``running`` after this long was abandoned by a killed worker
    task_run_abandon_seconds: int = 3600
    #: cluster sync: ``""``, ``in-cluster``, ``kubeconfig:<path>``, ``file://<path>`` or an API URL
    kube_source: str = ""
    kube_node_label_selector: str = ""
    #: where CA's events are read (default: ``kube_source``)
    kube_events_source: str = ""
    kube_page_size: int = 500
    kube_request_timeout: float = 30.0
    kube_sync_max_retries: int = 5
    #: the namespace of HAMi's scheduler Deployment and device plugin DaemonSet (its release is read there)
    hami_namespace: str = "kube-system"
    #: read the cluster's DRA objects (``resource.k8s.io/v1``: ResourceSlices, ResourceClaims, their
    #: templates, DeviceClasses) in the cluster sync and the watcher (docs/dra.md)
    dra_sync: bool = False
    #: the ``dra-driver`` a clusterapi node group's MachineSet names, for its template slices
    dra_clusterapi_driver: str = "hami-core-gpu.project-hami.io"
    drift_devmem_tolerance_percent: float = 2.0
    drift_unregistered_grace_seconds: int = 600
    decision_retention_days: int = 14
    #: decision recording: ``async`` (queue + writer thread), ``sync`` (in the caller) or ``off``
    decision_recording: str = "async"
    #: bytes (an estimate of what queued calls keep alive) above which the async recorder drops
    decision_queue_max_bytes: int = 32 * 1024 * 1024
    #: bytes an estimate's or a session's answer may have; a bigger one is refused (413)
    max_answer_bytes: int = 16 * 1024 * 1024
    #: seconds one estimate may pack; the groups not packed by then are reported cut short
    estimate_time_limit_seconds: float = TIME_LIMIT_SECONDS
    #: estimates (the API and the what-if page) one process runs at once, one per identity; keep it
    #: under HAMI_SIM_THREADS so health checks and other users always find a thread
    estimate_max_concurrent: int = 1
    #: how long the writer waits to fold a burst of CA calls into one write
    decision_flush_seconds: float = 0.5
    #: live usage older than this answers per ``usage_stale_policy`` (docs/usage.md)
    usage_stale_seconds: int = 600
    #: ``fail`` (the node fails the filter) or ``last-known``
    usage_stale_policy: str = "fail"
    #: how often a replica checks for new usage
    usage_cache_seconds: float = 0.5
    #: server-side timeout of one watch request
    usage_watch_seconds: int = 60
    #: aggregate capacity (deploy/capacity): the watcher advertises each HAMi node's summed device
    #: memory and cores as extended resources, and CA's profile counts them (docs/cluster-autoscaler.md)
    ca_aggregate_capacity: bool = False
    #: client certificate CN/SAN values the extender listener serves, comma-separated
    hami_sim_client_identities: str = "cluster-autoscaler"
    #: which parts of a client certificate name it (``CN``, ``DNS``, ``email``, ``URI``, ``IP``)
    hami_sim_client_identity_fields: str = "CN,DNS"
    #: failed admin logins per username (x10 per address) within the window before a lock-out
    login_failure_limit: int = 5
    login_failure_window_seconds: int = 900
    #: decisions keep per-device detail for this many nodes; the rest keep verdict and reason only
    decision_detail_nodes: int = 64
    #: decisions list this many nodes one by one; the rest fold into per (group, verdict, reason) counts
    decision_listed_nodes: int = 256
    #: decision rows beyond this many are pruned oldest first (besides ``decision_retention_days``)
    decision_max_rows: int = 50000
    #: live simulation sessions at once; placements and nodes per session; checkpoint rows per session
    session_max_live: int = 1000
    session_max_placements: int = 10000
    session_max_nodes: int = 5000
    session_max_checkpoint_rows: int = 200000
    #: new sessions per minute, per identity (``hami_sim.project.permissions.Caller``)
    session_create_per_minute: int = 600
    #: live sessions one identity may hold; each allowed client certificate identity (CA) has this
    #: many of ``session_max_live`` reserved, the other identities share the rest
    session_quota_per_identity: int = 200
    #: live sessions one other identity (a user, a token, anonymous) may hold: well under the shared
    #: pool, so a few identities cannot fill it
    session_quota_per_user: int = 25
    #: the JSON one session may store (its nodes, placements and checkpoints); a write past it is a 400
    session_max_bytes: int = 8 << 20
    #: what the gRPC expander answers: ``most-placed`` (every option placing the most pods; ties go
    #: to CA's next expander) or ``least-gpu-waste`` (the single one of those with the least waste)
    expander_return: str = "most-placed"
    #: what the gRPC expander does with an option it cannot judge (unknown group, no device profile,
    #: undecodable or unhealthy template, node groups never loaded): ``keep`` it, or ``drop`` it
    expander_unjudged: str = "keep"
    #: gRPC expander bounds: the largest request (bytes), the request bytes being worked on at once
    #: (a call beyond it is refused RESOURCE_EXHAUSTED: CA then keeps all its options), calls at once
    expander_max_request_bytes: int = 64 << 20
    expander_max_inflight_bytes: int = 64 << 20
    expander_max_concurrent: int = 2  # CA calls once per scan; a second for a CA restarting or a probe
    #: seconds a gRPC expander call has to deliver its whole request (then it is cut off), and to be
    #: answered when the client sets no deadline or a later one (CA's own is 5 s)
    expander_receive_seconds: float = 4.0
    expander_max_call_seconds: float = 10.0

    def client_identities(self) -> frozenset[str]:
        return frozenset(n.strip() for n in self.hami_sim_client_identities.split(",") if n.strip())

    def client_identity_fields(self) -> frozenset[str]:
        return frozenset(n.strip() for n in self.hami_sim_client_identity_fields.split(",") if n.strip())


DEFAULTS = Conf()
_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str}
_NAMES = frozenset(f.name.upper() for f in fields(Conf))


@functools.cache
def conf() -> Conf:
    """The current values: each setting if defined, else its default, converted to the field's type."""
    values: dict[str, Any] = {}
    for f in fields(Conf):
        value = getattr(settings, f.name.upper(), getattr(DEFAULTS, f.name))
        values[f.name] = _TYPES[str(f.type)](value)
    return Conf(**values)


@functools.cache
def configured_ca_release() -> CARelease:
    """The Cluster Autoscaler release the cluster runs (``CA_VERSION``, checked when settings load).

    The one place it is read: the estimate API, the what-if page and the gRPC expander pack as this
    release's binpacking does, and the expander expects the request form it sends."""
    return ca_release(settings.CA_VERSION)


def configured_hami_release() -> str:
    """The HAMi release whose rules this process answers by (``HAMI_VERSION``, parsed when settings
    load: ``"2.8"``, ``"2.9"`` or ``"2.10"``)."""
    return str(settings.HAMI_VERSION)


def judging_releases() -> dict[str, str]:
    """The HAMi and CA releases that judge this process's answers, as every record of an answer
    (decision, session, estimate) keeps them: ``{"hami_release": "2.10", "ca_release": "1.36.1"}``."""
    return {"hami_release": configured_hami_release(), "ca_release": configured_ca_release().version}


def _reread(*, setting: str, **kwargs: Any) -> None:
    if setting in _NAMES:
        conf.cache_clear()
    elif setting == "CA_VERSION":
        configured_ca_release.cache_clear()


setting_changed.connect(_reread, dispatch_uid="hami_sim.project.conf")

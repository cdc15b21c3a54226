"""Celery tasks: ``sync_autoscaler_events`` and ``prune_decisions``.

Both take no model instances, are idempotent (events are upserted by their uid, pruning by age) and
leave a ``TaskRun`` row per run for the dashboard.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from celery import shared_task
from django.db import transaction
from django.utils import timezone
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from hami_sim.project.conf import conf
from hami_sim.runtime.rejects import note, rejections
from hami_sim.runtime.storable import clean_text, storable_fields, text_needs_cleaning
from hami_sim.runtime.taskruns import record_run

from .events import parse_autoscaler_status, parse_event_message
from .models import AutoscalerStatus, CAEvent, Decision

__all__ = [
    "EVENT_REASONS",
    "kube_api_client",
    "sync_autoscaler_events",
    "sync_events_once",
    "prune_decisions",
    "prune_once",
]

log = logging.getLogger("hami_sim.decisions")

EVENT_REASONS = ("TriggeredScaleUp", "NotTriggerScaleUp", "FailedScheduling")
STATUS_NAMESPACE = "kube-system"
STATUS_NAME = "cluster-autoscaler-status"
_PAGE = 500


class SourceUnavailable(RuntimeError):
    """No API server to read events from (no source configured, or a file snapshot)."""


def kube_api_client(source: str | None = None) -> k8s.ApiClient:
    """An ``ApiClient`` for ``KUBE_EVENTS_SOURCE`` (default ``KUBE_SOURCE``).

    ``in-cluster``, ``kubeconfig:<path>``, or an API server URL (``http(s)://host:port``, e.g. a
    ``kubectl proxy``). ``file://`` snapshots hold nodes only, so they have no events to read.
    """
    source = source if source is not None else (conf().kube_events_source or conf().kube_source)
    if not source:
        raise SourceUnavailable("no Kubernetes source configured (KUBE_EVENTS_SOURCE / KUBE_SOURCE)")
    if source == "in-cluster":
        configuration = k8s.Configuration()
        k8s_config.load_incluster_config(client_configuration=configuration)
        return k8s.ApiClient(configuration)
    if source.startswith("kubeconfig:"):
        return k8s_config.new_client_from_config(config_file=source.partition(":")[2] or None)
    if source.startswith(("http://", "https://")):
        configuration = k8s.Configuration()
        configuration.host = source.rstrip("/")
        return k8s.ApiClient(configuration)
    raise SourceUnavailable(f"Kubernetes source {source!r} has no events (file snapshots hold nodes only)")


def _when(*values: datetime | None) -> datetime | None:
    for value in values:
        if value is not None:
            return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)
    return None


def _list_events(api: k8s.CoreV1Api, reason: str) -> Iterator[k8s.CoreV1Event]:
    token = None
    while True:
        kwargs = {"field_selector": f"involvedObject.kind=Pod,reason={reason}", "limit": _PAGE}
        if token:
            kwargs["_continue"] = token
        page = api.list_event_for_all_namespaces(**kwargs)
        yield from page.items or []
        token = page.metadata._continue if page.metadata else None
        if not token:
            return


def _upsert_event(event: k8s.CoreV1Event) -> bool:
    """Insert or refresh one event; True when it is new."""
    obj = event.involved_object
    if obj is None or (obj.kind or "Pod") != "Pod" or event.reason not in EVENT_REASONS:
        return False
    parsed, groups = parse_event_message(event.reason, event.message or "")
    first, last = _seen(event)
    defaults = {
        "reason": event.reason,
        "source": _reporter(event),
        "pod_uid": obj.uid or "",
        "pod_namespace": obj.namespace or "default",
        "pod_name": obj.name or "",
        "message": event.message or "",
        "parsed": parsed,
        "groups": groups,
        "count": max(1, (event.series.count if event.series else None) or event.count or 1),
        "first_seen": first,
        "last_seen": last,
    }
    uid = clean_text(_event_uid(event), 128)
    _, created = CAEvent.objects.update_or_create(event_uid=uid, defaults=_storable_event(uid, defaults))
    return created


#: what a CAEvent's string columns hold (field -> max_length)
_EVENT_LIMITS = {f.name: getattr(f, "max_length", None) for f in CAEvent._meta.concrete_fields}


def _storable_event(uid: str, fields: dict) -> dict:
    """An event's columns as the database stores them: text with a NUL (anyone who may create a
    pod can put one in its name's event message) repaired and noted, never a failed sync."""
    clean = dict(storable_fields(fields, _EVENT_LIMITS))
    if clean != fields:
        note(
            "event",
            uid,
            "unstorable-text",
            "sanitised",
            "NUL characters, lone surrogates or overlong text repaired",
        )
    return clean


def _event_uid(event: k8s.CoreV1Event) -> str:
    """The event's uid, else (an event without one) its pod and name."""
    meta, obj = event.metadata, event.involved_object
    return (meta.uid if meta else None) or f"{obj.namespace}/{obj.name}/{meta.name if meta else ''}"


def _seen(event: k8s.CoreV1Event) -> tuple[datetime | None, datetime | None]:
    """First and last time the event was observed: a series' last observation when it has one,
    else whichever of the legacy and ``events.k8s.io`` timestamps the reporter filled."""
    series = event.series
    last = _when(
        series.last_observed_time if series else None,
        event.last_timestamp,
        event.event_time,
        event.first_timestamp,
    )
    return _when(event.first_timestamp, event.event_time, last), last


def _reporter(event: k8s.CoreV1Event) -> str:
    """Who reported the event (``reporting_component``, else the legacy ``source.component``)."""
    return event.reporting_component or (event.source.component if event.source else "") or ""


def _store_status(api: k8s.CoreV1Api) -> str:
    try:
        cm = api.read_namespaced_config_map(STATUS_NAME, STATUS_NAMESPACE)
    except ApiException as exc:
        if exc.status == 404:
            return "absent"
        raise
    raw = (cm.data or {}).get("status", "")
    if text_needs_cleaning(raw):  # a NUL in the ConfigMap: stored repaired, noted
        note("configmap", f"{STATUS_NAMESPACE}/{STATUS_NAME}", "unstorable-text", "sanitised")
        raw = clean_text(raw)
    digest = hashlib.sha256(raw.encode()).hexdigest()
    now = timezone.now()
    latest = AutoscalerStatus.objects.first()
    if latest is not None and latest.digest == digest:
        AutoscalerStatus.objects.filter(pk=latest.pk).update(fetched_at=now)
        return "unchanged"
    parsed, error = parse_autoscaler_status(raw)
    AutoscalerStatus.objects.create(fetched_at=now, raw=raw, parsed=parsed, error=error, digest=digest)
    return "changed"


def sync_events_once(api_client: k8s.ApiClient | None = None) -> dict:
    """One sync pass; raises on an unreachable or forbidden API server (nothing is deleted)."""
    api = k8s.CoreV1Api(api_client or kube_api_client())
    counts = {"events": 0, "new": 0}
    seen_pods: set[str] = set()
    for reason in EVENT_REASONS:
        events = list(_list_events(api, reason))  # read everything before writing anything
        with transaction.atomic():
            for event in events:
                counts["events"] += 1
                counts["new"] += int(_upsert_event(event))
                uid = event.involved_object.uid if event.involved_object is not None else None
                if uid and not text_needs_cleaning(uid, 128):  # (a NUL cannot be looked up)
                    seen_pods.add(uid)
    counts["joined"] = (
        Decision.objects.filter(pod_uid__in=seen_pods).values("pod_uid").distinct().count()
        if seen_pods
        else 0
    )
    with transaction.atomic():
        counts["status"] = _store_status(api)
    return counts


@shared_task(
    bind=True,
    autoretry_for=(ApiException, HTTPError, OSError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=3,
)
def sync_autoscaler_events(self) -> dict:
    """Read CA's pod events and status ConfigMap and store them next to the decisions.

    With no API server to read (no source, or a ``file://`` snapshot as in the demo) there is nothing
    to do: the run is not recorded, so a skip every minute does not bury the task-runs page. It is
    logged once per worker process instead.
    """
    try:
        client = kube_api_client()
    except SourceUnavailable as exc:
        if str(exc) not in _SKIPS_LOGGED:
            _SKIPS_LOGGED.add(str(exc))
            log.info("sync_autoscaler_events: nothing to read, not recording runs: %s", exc)
        return {"skipped": str(exc)}
    run = record_run("sync_autoscaler_events", getattr(self.request, "id", "") or "")
    with run as counts, rejections("sync_autoscaler_events") as rejected:
        try:
            counts.update(sync_events_once(client))
        finally:
            client.close()
        if rejected.found:  # named on the Task runs page (and in RejectedObject)
            counts["rejected"] = "; ".join(rejected.summary()[:10])
    return counts


#: The skip reasons this process has logged (one line each, not one a minute).
_SKIPS_LOGGED: set[str] = set()


def _prune_beyond(max_rows: int) -> int:
    """Delete the decisions last seen longest ago beyond the newest ``max_rows`` (a size bound)."""
    deleted = 0
    while True:
        ids = list(
            Decision.objects.order_by("-last_seen", "-pk").values_list("pk", flat=True)[max_rows:][:5000]
        )
        if not ids:
            return deleted
        deleted += Decision.objects.filter(pk__in=ids).delete()[0]


def prune_once(days: int | None = None) -> dict:
    """Delete decisions and events last seen more than ``days`` ago; keep the newest CA status."""
    days = conf().decision_retention_days if days is None else days
    cutoff = timezone.now() - timedelta(days=days)
    counts = {"decisions": 0, "events": 0, "statuses": 0}
    # bounded chunks keep each transaction short on millions of rows
    while True:
        ids = list(Decision.objects.filter(last_seen__lt=cutoff).values_list("pk", flat=True)[:5000])
        if not ids:
            break
        counts["decisions"] += Decision.objects.filter(pk__in=ids).delete()[0]
    counts["decisions"] += _prune_beyond(conf().decision_max_rows)
    counts["events"] = CAEvent.objects.filter(last_seen__lt=cutoff).delete()[0]
    newest = AutoscalerStatus.objects.values_list("pk", flat=True).first()
    counts["statuses"] = AutoscalerStatus.objects.filter(fetched_at__lt=cutoff).exclude(pk=newest).delete()[0]
    return counts


@shared_task(bind=True)
def prune_decisions(self, days: int | None = None) -> dict:
    """Retention (``DECISION_RETENTION_DAYS``) for decisions, events and status snapshots."""
    with record_run("prune_decisions", getattr(self.request, "id", "") or "") as counts:
        counts.update(prune_once(days))
    return counts

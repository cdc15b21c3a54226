"""Which HAMi release the cluster runs, read by the cluster sync, and the finding when it is not the one
hami-sim follows (``HAMI_VERSION``).

HAMi's Helm chart labels its scheduler Deployment ``app.kubernetes.io/component: hami-scheduler`` and
its device plugin DaemonSet ``hami-device-plugin``; both run the ``projecthami/hami`` image tagged
with the release (``v2.9.0``). The sync lists those two kinds in ``HAMI_NAMESPACE`` (read access to
Deployments and DaemonSets: ``deploy/base/rbac.yaml``) and reads each HAMi container's image tag;
an image without a tag (a digest) falls back to the chart's ``app.kubernetes.io/version`` label.
HAMi's node registrations carry no release, so they cannot stand in. The scheduler's release is the
cluster's (it is the scheduler whose rules hami-sim imitates); the device plugin's counts when no
scheduler names one.

A failed read never fails the node sync: the last release found is kept with the error beside it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import orjson
from django.conf import settings
from django.utils import timezone

from .kube import SourceError, read_snapshot, reading

__all__ = [
    "WORKLOADS",
    "Sighting",
    "Detection",
    "ReleaseFinding",
    "image_version",
    "sightings",
    "read_workloads",
    "detect",
    "record",
    "check_cluster",
    "configured_release",
    "finding",
    "current",
    "status",
]

log = logging.getLogger("hami_sim.profiles")

COMPONENT = "app.kubernetes.io/component"
CHART_VERSION = "app.kubernetes.io/version"
#: (kind, component label) of the workloads whose images name the release, the scheduler first
WORKLOADS = (("Deployment", "hami-scheduler"), ("DaemonSet", "hami-device-plugin"))
#: the last path segment of HAMi's image repository (``projecthami/hami``, any registry or mirror)
IMAGE_NAME = "hami"
_VERSION = re.compile(r"^v?(\d{1,4})\.(\d{1,4})(?:\.\d{1,6})?(?:[-+][0-9A-Za-z.-]{0,60})?$")
_PAGE = 100


@dataclass(frozen=True, slots=True)
class Sighting:
    """One HAMi container of a HAMi workload, and the release its image (or chart label) names."""

    kind: str
    name: str
    container: str
    image: str
    version: str  # as written: "v2.9.0"; "" when nothing names one
    release: str  # the minor: "2.9"; ""
    basis: str  # "image" or "chart label"

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "container": self.container,
            "image": self.image,
            "version": self.version,
            "release": self.release,
            "basis": self.basis,
        }


@dataclass(frozen=True, slots=True)
class Detection:
    """What one read found: the cluster's release (scheduler first) and every HAMi container."""

    sightings: tuple[Sighting, ...] = ()
    error: str = ""
    checked: bool = True  # False: no source to read (nothing recorded)
    workloads_seen: int = 0

    @property
    def chosen(self) -> Sighting | None:
        for kind, _component in WORKLOADS:
            for s in self.sightings:
                if s.kind == kind and s.release:
                    return s
        return None


@dataclass(frozen=True, slots=True)
class ReleaseFinding:
    """The cluster runs another HAMi release than hami-sim follows."""

    detected: str
    version: str
    configured: str
    supported: bool
    message: str
    workloads: tuple[dict, ...] = field(default_factory=tuple)


def _version(text: str) -> tuple[str, str]:
    """``("v2.9.0", "2.9")`` for a release text, ``("", "")`` when it names none."""
    text = (text or "").strip()
    match = _VERSION.match(text)
    if match is None:
        return "", ""
    return text, f"{int(match.group(1))}.{int(match.group(2))}"


def image_version(image: str) -> tuple[str, str] | None:
    """The release a HAMi image's tag names: ``("v2.9.0", "2.9")``; ``("", "")`` for a HAMi image
    without a usable tag (a digest, ``latest``); None for an image that is not HAMi's."""
    ref = image.split("@", 1)[0]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    repo, tag = (ref[:colon], ref[colon + 1 :]) if colon > slash else (ref, "")
    if repo.rsplit("/", 1)[-1] != IMAGE_NAME:
        return None
    return _version(tag)


def _containers(obj: Mapping) -> list[Mapping]:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    return [c for c in containers or () if isinstance(c, Mapping)]


def sightings(workloads: Iterable[Mapping]) -> tuple[Sighting, ...]:
    """Every HAMi container of the given Deployments and DaemonSets with the release it names."""
    out: list[Sighting] = []
    for obj in workloads:
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        chart = _version(str(labels.get(CHART_VERSION) or ""))
        for container in _containers(obj):
            image = str(container.get("image") or "")
            named = image_version(image)
            if named is None:
                continue
            version, release = named
            basis = "image"
            if not release and chart[1]:
                (version, release), basis = chart, "chart label"
            out.append(
                Sighting(
                    str(obj.get("kind") or ""),
                    str(meta.get("name") or ""),
                    str(container.get("name") or ""),
                    image[:300],
                    version[:64],
                    release,
                    basis if release else "",
                )
            )
    return tuple(out)


def _from_snapshot(source: str, namespace: str) -> list[dict]:
    """The HAMi workloads of a ``file://`` snapshot (``kubectl get nodes,pods,deploy,ds -A -o json``)."""
    data = read_snapshot(source)
    items = data.get("items") if isinstance(data, Mapping) else data
    wanted = dict(WORKLOADS)
    found = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, Mapping) or item.get("kind") not in wanted:
            continue
        meta = item.get("metadata") or {}
        if (meta.get("namespace") or namespace) != namespace:
            continue
        if (meta.get("labels") or {}).get(COMPONENT) == wanted[item["kind"]]:
            found.append(dict(item))
    return found


def _list(call, namespace: str, kind: str, component: str, timeout: float) -> list[dict]:
    """Every page of one kind's list, raw JSON (``kind`` set on each item, as a snapshot has it)."""
    items: list[dict] = []
    token: str | None = None
    while True:
        kwargs: dict = {
            "label_selector": f"{COMPONENT}={component}",
            "limit": _PAGE,
            "_request_timeout": timeout,
            "_preload_content": False,
        }
        if token:
            kwargs["_continue"] = token
        page = orjson.loads(call(namespace, **kwargs).data)
        for item in page.get("items") or ():
            if isinstance(item, dict):
                items.append({**item, "kind": kind})
        token = (page.get("metadata") or {}).get("continue") or None
        if not token:
            return items


def read_workloads(source: str, namespace: str, timeout: float = 30.0) -> list[dict]:
    """HAMi's scheduler Deployments and device plugin DaemonSets in ``namespace``. Raises
    ``SourceError`` (forbidden, unreachable) and never returns a partial list."""
    if source.startswith("file://"):
        return _from_snapshot(source, namespace)
    from kubernetes import client

    with reading(source) as api:
        apps = client.AppsV1Api(api)
        calls = {"Deployment": apps.list_namespaced_deployment, "DaemonSet": apps.list_namespaced_daemon_set}
        return [
            item
            for kind, component in WORKLOADS
            for item in _list(calls[kind], namespace, kind, component, timeout)
        ]


def detect(source: str, namespace: str, timeout: float = 30.0) -> Detection:
    """Read the HAMi workloads and the releases their images name; never raises for a failed read."""
    try:
        workloads = read_workloads(source, namespace, timeout)
    except SourceError as exc:
        return Detection(error=f"reading HAMi's workloads in namespace {namespace!r}: {exc}"[:2000])
    return Detection(sightings(workloads), workloads_seen=len(workloads))


def record(detection: Detection):
    """Store what a read found (``HamiInstall`` pk=1). A failed read keeps the last release."""
    from .models import HamiInstall

    now = timezone.now()
    row = HamiInstall.objects.filter(pk=1).first() or HamiInstall(pk=1)
    row.checked_at = now
    if detection.error:
        row.error = detection.error
        row.save()
        return row
    chosen = detection.chosen
    release = chosen.release if chosen else ""
    if release != row.release or row.changed_at is None:
        row.changed_at = now
    row.release = release
    row.version = chosen.version if chosen else ""
    row.basis = f"{chosen.kind} {chosen.name}, container {chosen.container}: {chosen.basis}" if chosen else ""
    row.workloads = [s.as_dict() for s in detection.sightings]
    row.error = ""
    row.save()
    return row


def check_cluster(source: str, namespace: str | None = None, timeout: float = 30.0) -> str:
    """Read and record the cluster's HAMi release (the node sync's last step). Returns the release
    found (``""`` when none), or ``"error"``; never raises."""
    from hami_sim.project.conf import conf

    namespace = namespace if namespace is not None else conf().hami_namespace
    try:
        detection = detect(source, namespace, timeout)
        row = record(detection)
    except Exception:  # the node sync's result stands whatever happens here
        log.exception("could not record the cluster's HAMi release")
        return "error"
    if detection.error:
        log.warning("%s", detection.error)
        return "error"
    return row.release


def configured_release() -> str:
    """The release hami-sim follows (``HAMI_VERSION``)."""
    return str(getattr(settings, "HAMI_VERSION", "2.10"))


def _supported() -> tuple[str, ...]:
    try:
        from hami_sim.engine.hami_releases import SUPPORTED_RELEASES
    except ImportError:  # pragma: no cover - before the release table exists
        return ("2.8", "2.9", "2.10")
    return tuple(SUPPORTED_RELEASES)


def _mixed(workloads: list) -> str:
    """``"; hami-scheduler runs 2.9, hami-device-plugin 2.10"`` when HAMi's workloads disagree."""
    releases = {
        (w.get("name"), w.get("release")) for w in workloads if isinstance(w, dict) and w.get("release")
    }
    if len({r for _n, r in releases}) < 2:
        return ""
    listed = ", ".join(f"{name} runs {release}" for name, release in sorted(releases))
    return f" HAMi's workloads run different releases ({listed}): an upgrade is under way or stopped halfway."


def finding(install=None, configured: str | None = None) -> ReleaseFinding | None:
    """The finding when the cluster's HAMi release (last read) is not ``HAMI_VERSION``, else None.
    No finding while the release is unknown (never read, or nothing named one)."""
    install = install if install is not None else current()
    configured = configured or configured_release()
    if install is None or not install.release or install.release == configured:
        return None
    supported = install.release in _supported()
    shown = install.version or install.release
    if supported:
        advice = f"Set HAMI_VERSION={install.release} so hami-sim answers as the cluster's scheduler does."
    else:
        advice = f"hami-sim does not simulate it (HAMI_VERSION takes {', '.join(_supported())})."
    message = (
        f"The cluster runs HAMi {shown} ({install.basis}), but hami-sim judges pods as HAMi {configured} "
        f"(HAMI_VERSION): where the two releases' rules differ, its answers are not the cluster's. {advice}"
        + _mixed(install.workloads or [])
    )
    return ReleaseFinding(
        install.release, install.version, configured, supported, message, tuple(install.workloads or ())
    )


def current():
    """The last read (``HamiInstall``), or None before the first one."""
    from .models import HamiInstall

    return HamiInstall.objects.filter(pk=1).first()


def status() -> dict:
    """What the dashboard shows: the last read, the release hami-sim follows and the finding."""
    install = current()
    configured = configured_release()
    return {"install": install, "configured": configured, "finding": finding(install, configured)}

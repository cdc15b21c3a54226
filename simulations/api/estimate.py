"""``POST /api/v1/estimate``: the whole scale-up binpacking in one request (docs/sessions.md, "Estimate").

``EstimateRequestSerializer`` validates the envelope and resolves named node groups to template
Nodes (``profiles``); the view runs ``hami_sim.engine.estimate.estimate`` and serialises the result.
Every input problem is a 400 in the one error shape (``{"detail": ...}``); nothing is written
anywhere but the decision records.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import orjson
from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from hami_sim.engine.estimate import GroupTemplate, PendingPods, ScaleUpLimits, estimate
from hami_sim.engine.names import template_node_name
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.quantity import QuantityError, parse_quantity
from hami_sim.engine.requests import PodError
from hami_sim.project.concurrency import ESTIMATES
from hami_sim.project.conf import configured_ca_release
from hami_sim.project.permissions import caller_of
from hami_sim.project.rest import ApiError
from hami_sim.runtime.bulk import gc_frozen, gc_paused
from hami_sim.runtime.simulator import get_simulator

from ..existing import place_on_live_nodes
from ..extender import ExtenderArgs
from ..signals import filter_answered
from .base import SimulationViewSet, capped, json_object
from .estimate_answer import PodIndex, result_json
from .serializers import (
    MAX_PODS,
    ErrorSerializer,
    EstimateRequestSerializer,
    EstimateSerializer,
    resolve_node_group,
)

__all__ = ["EstimateViewSet", "resolve_node_group", "MAX_PODS", "result_json", "record_decisions"]

log = logging.getLogger("hami_sim.estimate")
MAX_RECORDED_PODS = 20  # distinct pods per estimate that get a decision record


def _cluster_now() -> tuple[int, int, int, int]:
    """(live nodes, their whole cores, memory bytes, GPU devices) from the inventory, for CA's totals."""
    from profiles.models import NodeInventory

    nodes = cores = memory = gpus = 0
    rows = NodeInventory.objects.filter(gone_at__isnull=True).values_list("capacity", "devices")
    for capacity, devices in rows.iterator(chunk_size=500):
        nodes += 1
        gpus += len(devices or [])
        try:
            cores += -int(-parse_quantity(str((capacity or {}).get("cpu", "0"))) // 1)
            memory += int(parse_quantity(str((capacity or {}).get("memory", "0"))))
        except (QuantityError, ValueError):
            continue
    return nodes, cores, memory, gpus


def scale_up_limits(data: dict) -> ScaleUpLimits:
    """CA's flags from the request; the cluster's current totals only when a total limit is set."""
    needs_cluster = data["maxNodesTotal"] or any(
        data[k] is not None for k in ("coresTotal", "memoryTotal", "gpuTotal")
    )
    nodes, cores, memory, gpus = _cluster_now() if needs_cluster else (0, 0, 0, 0)
    return ScaleUpLimits(
        max_nodes_per_scale_up=data["maxNodesPerScaleUp"],
        max_nodes_total=data["maxNodesTotal"],
        current_nodes=nodes,
        cores_total=data["coresTotal"],
        memory_total=data["memoryTotal"],
        gpu_total=data["gpuTotal"],
        current_cores=cores,
        current_memory=memory,
        current_gpus=gpus,
        balance_similar=data["balanceSimilarNodeGroups"],
        ignored_labels=frozenset(data["balancingIgnoredLabels"]),
        group_budget=data["maxNodeGroupBinpackingDuration"],
        total_budget=data["maxBinpackingTime"],
    )


def record_decisions(pods: list[PendingPods], groups: list[GroupTemplate]) -> None:
    """Decision records (caller ``estimate``) for the dashboard: each distinct pod (bounded) against
    every group's template with zero usage, i.e. "could this group hold it at all, on which devices,
    and if not, which rule said no". Sent as ``filter_answered``, like the extender's answers; nothing
    is computed when nobody listens. Recording must never fail the answer."""
    if not filter_answered.receivers:
        return
    try:
        sim = get_simulator()
        nodes = []
        for group in groups:
            meta = group.template.get("metadata")
            meta = dict(meta) if isinstance(meta, Mapping) else {}
            meta.setdefault("name", template_node_name(group.name, None))
            nodes.append({**group.template, "metadata": meta})
        seen: set[bytes] = set()
        for entry in pods[: MAX_RECORDED_PODS * 10]:
            pod = entry.pod
            meta = pod.get("metadata")
            key = orjson.dumps(
                [pod.get("spec"), meta.get("annotations") if isinstance(meta, Mapping) else None],
                option=orjson.OPT_SORT_KEYS,
            )
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_RECORDED_PODS:
                break
            ctx = sim.pod_context(pod)
            verdicts = sim.filter_nodes(ctx, nodes)
            for verdict, group in zip(verdicts, groups, strict=True):
                verdict.node_group = verdict.node_group or group.name
            filter_answered.send_robust(
                sender=record_decisions,
                ctx=ctx,
                args=ExtenderArgs(dict(pod), nodes),
                verdicts=verdicts,
                caller="estimate",
                seconds=0.0,
            )
    except Exception:
        log.exception("could not record estimate decisions")


class EstimateViewSet(SimulationViewSet):
    """How many nodes of which group a batch of pending pods needs, with HAMi's device rules."""

    serializer_class = EstimateRequestSerializer

    @extend_schema(
        request=EstimateRequestSerializer,
        responses={200: EstimateSerializer, 400: ErrorSerializer, 413: ErrorSerializer},
        summary="Estimate a scale-up (CA binpacking with HAMi device fit)",
    )
    def create(self, request):
        # one estimate per identity and ESTIMATE_MAX_CONCURRENT per process, refused 429/503 at once
        with ESTIMATES.slot(caller_of(request).identity):
            return self._create(request)

    def _create(self, request):
        # the collector is paused while the body is parsed and validated (millions of small objects,
        # no cycles); while packing it runs, but past the parsed request (frozen), so the worker's
        # other threads (extender calls) keep their cyclic collection through a long estimate
        with gc_paused():
            serializer = EstimateRequestSerializer(data=json_object(request))
            serializer.is_valid(raise_exception=True)
        with gc_frozen():
            return self._answer(serializer.validated_data)

    def _answer(self, data: dict) -> Response:
        pods, groups = data["pods"], data["nodeGroups"]
        existing = None
        pending = pods
        if data["existingNodes"]:
            try:
                existing = place_on_live_nodes(get_simulator(), pods)
            except (PodError, WeightsError) as exc:
                raise ApiError(400, f"malformed pod: {exc}") from None
            pending = existing.remaining
        limits = scale_up_limits(data)
        result = estimate(
            get_simulator(),
            pending,
            groups,
            data["expander"],
            limits=limits,
            upcoming=data["upcomingNodes"],
            cluster=data["snapshotNodes"],
            ca=configured_ca_release(),
            time_limit=settings.ESTIMATE_TIME_LIMIT_SECONDS,
        )
        record_decisions(pods, groups)
        index = PodIndex(pods)  # every pod list of the answer counts in the request's pods
        out = result_json(result, index)
        out["hamiVersion"] = get_simulator().rules.release  # the HAMi rules that judged every fit
        if existing is not None:
            out["existingNodes"] = {
                "liveNodes": existing.live_nodes,
                "scheduledPods": index.runs(existing.placements),
                "placements": [{"pod": p, "node": n} for p, n in existing.placements.items()],
            }
        return Response(capped(out))

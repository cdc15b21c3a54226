"""``POST /api/v1/estimate``: the whole scale-up binpacking in one request (design.md section 7).

The view validates the envelope, resolves named node groups to template Nodes (``profiles``), runs
``hami_sim.engine.estimate.estimate`` and serialises the result. Every input problem is a 400 with
``{"error": ...}``; nothing is written anywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import orjson
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from hami_sim.engine.estimate import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    EstimateError,
    EstimateResult,
    GroupTemplate,
    PendingPods,
    estimate,
    parse_expander,
)
from hami_sim.engine.names import template_node_name
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError

from ..engine import get_simulator
from ..existing import place_on_live_nodes
from ..sessions import device_json
from .base import JsonAPIView, parse_json_body
from .serializers import ErrorSerializer, EstimateRequestSerializer, EstimateSerializer

__all__ = ["EstimateView", "resolve_node_group", "MAX_PODS", "result_json", "record_decisions"]

log = logging.getLogger("hami_sim.estimate")
MAX_PODS = 100_000
MAX_GROUPS = 500
MAX_RECORDED_PODS = 20  # distinct pods per estimate that get a decision record


def resolve_node_group(name: str) -> GroupTemplate | None:
    """A known node group (profiles app) as a template Node; None when there is no such group.

    The template is the one ``GET /api/v1/node-groups/<name>/template`` serves: labels, taints,
    capacity and the registration annotation rendered from the group's device profiles. A group's
    ``max_size`` bounds how many nodes it may add (its current size is not known here).
    """
    from profiles.models import NodeGroup
    from profiles.nodetemplates import group_template

    group = NodeGroup.objects.filter(name=name).prefetch_related("profiles__devices").first()
    if group is None:
        return None
    node = group_template(group)
    return GroupTemplate(group.name, node, group.max_size or None)


def _int(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EstimateError(f"{name} must be an integer between {low} and {high}")
    return value


def _pods(raw: object) -> list[PendingPods]:
    if not isinstance(raw, list):
        raise EstimateError('pods must be a list of Pod objects or {"pod": Pod, "count": n}')
    out: list[PendingPods] = []
    total = 0
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            raise EstimateError(f"pods[{i}] must be an object")
        if "pod" in entry and "spec" not in entry:
            pod = entry["pod"]
            if not isinstance(pod, Mapping):
                raise EstimateError(f"pods[{i}].pod must be a Pod object")
            count = entry.get("count")
            if count is not None:
                count = _int(count, f"pods[{i}].count", 0, MAX_PODS)
            out.append(PendingPods(pod, count))
            total += 1 if count is None else count
        else:
            out.append(PendingPods(entry))
            total += 1
        if total > MAX_PODS:
            raise EstimateError(f"at most {MAX_PODS} pods per estimate")
    return out


def _groups(raw: object) -> list[GroupTemplate]:
    if not isinstance(raw, list) or not raw:
        raise EstimateError(
            'nodeGroups must be a non-empty list of names or {"name", "template", "maxNewNodes"}'
        )
    if len(raw) > MAX_GROUPS:
        raise EstimateError(f"at most {MAX_GROUPS} node groups per estimate")
    out: list[GroupTemplate] = []
    for i, entry in enumerate(raw):
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, Mapping):
            raise EstimateError(f"nodeGroups[{i}] must be a group name or an object")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise EstimateError(f"nodeGroups[{i}] has no name")
        max_new = entry.get("maxNewNodes")
        if max_new is not None:
            max_new = _int(max_new, f"nodeGroups[{i}].maxNewNodes", 0, MAX_PODS)
        template = entry.get("template")
        if template is None:
            known = resolve_node_group(name)
            if known is None:
                raise EstimateError(
                    f"unknown node group {name!r}: give its template inline or create it first"
                )
            out.append(
                GroupTemplate(name, known.template, max_new if max_new is not None else known.max_new_nodes)
            )
            continue
        if not isinstance(template, Mapping) or not isinstance(template.get("metadata", {}), Mapping):
            raise EstimateError(f"nodeGroups[{i}].template must be a Node object")
        out.append(GroupTemplate(name, template, max_new))
    return out


def result_json(result: EstimateResult) -> dict:
    return {
        "options": [
            {
                "nodeGroup": o.node_group,
                "nodeCount": o.node_count,
                "scheduledPods": o.scheduled,
                "unschedulablePods": o.unschedulable,
                "nodes": [
                    {
                        "name": n.name,
                        "pods": n.pods,
                        "devices": [device_json(d) for d in n.devices],
                        "requested": {
                            "cpu": f"{n.requested.cpu}m",
                            "memory": str(n.requested.memory),
                            "pods": n.requested.pods,
                        },
                    }
                    for n in o.nodes
                ],
                "waste": {
                    "cpu": round(o.waste.cpu, 6),
                    "memory": round(o.waste.memory, 6),
                    "gpuMemory": round(o.waste.gpu_memory, 6),
                    "gpuCores": round(o.waste.gpu_cores, 6),
                },
            }
            for o in result.options
        ],
        "chosen": result.chosen,
        "explanation": result.explanation,
    }


def record_decisions(pods: list[PendingPods], groups: list[GroupTemplate]) -> None:
    """Decision records (caller ``estimate``) for the dashboard: each distinct pod (bounded) against
    every group's template with zero usage, i.e. "could this group hold it at all, on which devices,
    and if not, which rule said no". Recording must never fail the answer."""
    try:
        from decisions import recorder

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
            policies = {
                "node": ctx.node_policy,
                "gpu": ctx.gpu_policy.raw,
                "numaBind": ctx.gpu_policy.numa_bind,
            }
            recorder.record(ctx.pod, nodes, verdicts, caller="estimate", policies=policies)
    except Exception:
        log.exception("could not record estimate decisions")


class EstimateView(JsonAPIView):
    """How many nodes of which group a batch of pending pods needs, with HAMi's device rules."""

    @extend_schema(
        request=EstimateRequestSerializer,
        responses={200: EstimateSerializer, 400: ErrorSerializer, 413: ErrorSerializer},
        summary="Estimate a scale-up (CA binpacking with HAMi device fit)",
    )
    def post(self, request):
        body = parse_json_body(request)
        try:
            if not isinstance(body, Mapping):
                raise EstimateError("body must be a JSON object with pods and nodeGroups")
            pods = _pods(body.get("pods"))
            groups = _groups(body.get("nodeGroups"))
            expander = parse_expander(body.get("expander"), body.get("priorities"))
            limit = body.get("maxNodesPerScaleUp")
            limit = (
                DEFAULT_MAX_NODES_PER_SCALE_UP
                if limit is None
                else _int(limit, "maxNodesPerScaleUp", 0, MAX_PODS)
            )
            existing_nodes = body.get("existingNodes", False)
            if not isinstance(existing_nodes, bool):
                raise EstimateError("existingNodes must be true or false")
            existing = None
            if existing_nodes:
                existing = place_on_live_nodes(get_simulator(), pods)
                pending = existing.remaining
            else:
                pending = pods
            result = estimate(get_simulator(), pending, groups, expander, limit)
        except EstimateError as exc:
            return Response({"error": str(exc)}, status=400)
        except (PodError, WeightsError) as exc:  # from placing on live nodes
            return Response({"error": f"malformed pod: {exc}"}, status=400)
        record_decisions(pods, groups)
        out = result_json(result)
        if existing is not None:
            out["existingNodes"] = {
                "liveNodes": existing.live_nodes,
                "scheduledPods": list(existing.placements),
                "placements": [{"pod": p, "node": n} for p, n in existing.placements.items()],
            }
        return Response(out)

"""``manage.py expander_example [--target HOST:PORT]``: one real BestOptions call, as upstream CA makes it.

The upstream-CA path end to end, against a running ``run_expander`` (the demo starts one on
127.0.0.1:$DEMO_EXPANDER_PORT, 8444): two pending pods of 30000 MiB on one card each, and one scale-up
option per known node group with the group's template Node (what
``GET /api/v1/node-groups/<name>/template`` serves, the same shape CA's ``nodeMap`` carries). grpcio
sends it; the answer is the options the expander keeps, and the expander records the call as a decision
(caller ``expander``) with each option's reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import grpc
from django.core.management.base import BaseCommand, CommandError
from google.protobuf import json_format

from hami_sim.engine.hami_expander import unjudged_head
from profiles.models import NodeGroup
from profiles.nodetemplates import group_template
from simulations.grpcexpander.protos import expander_pb2 as pb
from simulations.grpcexpander.protos import k8s_core_pb2 as core

__all__ = ["EXAMPLE_PODS", "ask_expander", "example_request", "option_lines"]

METHOD = "/grpcplugin.Expander/BestOptions"
# CA's two wire generations: Node/Pod messages (nodeMap = 2, pod = 4; CA <= 1.34) and protobuf-encoded
# bytes (nodeBytesMap = 3, podBytes = 5; CA >= 1.34.2, the only form CA >= 1.35 sends).
WIRES = ["objects", "bytes"] if "podBytes" in pb.CAOption.DESCRIPTOR.fields_by_name else ["objects"]
GPUMEM = 30000  # MiB: more than an A10G card (23028), less than an H100 (81559)
#: each wire as the command says it: the request fields it fills and the CA releases that send them
WIRE_WORDS = {
    "objects": "nodeMap and pod, as CA 1.32 to 1.34 send",
    "bytes": "nodeBytesMap and podBytes, as CA 1.35 and later send",
}


def _example_pod(i: int) -> dict:
    limits = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": str(GPUMEM)}
    return {
        "metadata": {
            "name": f"llm-serving-5b7c-{i}",
            "namespace": "ml",
            "uid": f"e7a1c0de-0000-4000-8000-00000000000{i}",
            "ownerReferences": [{"kind": "ReplicaSet", "name": "llm-serving-5b7c", "controller": True}],
        },
        "spec": {
            "containers": [{"name": "main", "resources": {"limits": limits, "requests": {"cpu": "4"}}}],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


EXAMPLE_PODS = [_example_pod(i) for i in range(2)]
_QUANTITY_MAPS = {"limits", "requests", "capacity", "allocatable"}


def _wrap_quantities(value: object, key: str = "") -> object:
    """Kubernetes JSON -> our proto's JSON: quantities are ``{"string": "..."}`` messages."""
    if isinstance(value, Mapping):
        if key in _QUANTITY_MAPS:
            return {k: {"string": str(v)} for k, v in value.items()}
        return {k: _wrap_quantities(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_wrap_quantities(v) for v in value]
    return value


def _message(raw: Mapping, kind: type):
    return json_format.ParseDict(_wrap_quantities(raw), kind(), ignore_unknown_fields=True)


def example_request(groups: list[str] | None = None, wire: str = WIRES[-1]) -> tuple[bytes, list[str]]:
    """The encoded request (one option of one new node per group, in ``wire``) and the groups it offers."""
    queryset = NodeGroup.objects.order_by("name").prefetch_related("profiles__devices")
    if groups:
        queryset = queryset.filter(name__in=groups)
    node_map, options = {}, []
    pods = [_message(p, core.Pod) for p in EXAMPLE_PODS]
    as_bytes = wire == "bytes"
    for group in queryset:
        node_map[group.name] = _message(group_template(group), core.Node)
        fields = {"podBytes": [p.SerializeToString() for p in pods]} if as_bytes else {"pod": pods}
        options.append(pb.CAOption(nodeGroupId=group.name, nodeCount=1, debug=group.name, **fields))
    if as_bytes:
        encoded = {name: node.SerializeToString() for name, node in node_map.items()}
        request = pb.CABestOptionsRequest(options=options, nodeBytesMap=encoded)
    else:
        request = pb.CABestOptionsRequest(options=options, nodeMap=node_map)
    return request.SerializeToString(), [o.nodeGroupId for o in options]


def ask_expander(
    target: str, groups: list[str] | None = None, wire: str = WIRES[-1], timeout: float = 20.0
) -> tuple[list[str], dict[str, str]]:
    """(offered, kept): one BestOptions call to ``target`` (plaintext) with the example pods; ``kept``
    maps each kept option's group to the expander's verdict on it (the answer's ``debug``)."""
    request, offered = example_request(groups, wire)
    if not offered:
        raise CommandError("no node groups to offer: import some first (manage.py import_profiles FILE)")
    with grpc.insecure_channel(target) as channel:
        stub = channel.unary_unary(METHOD, response_deserializer=pb.BestOptionsResponse.FromString)
        response = stub(request, timeout=timeout)
    return offered, {o.nodeGroupId: o.debug for o in response.options}


def option_lines(offered: list[str], kept: dict[str, str]) -> list[str]:
    """One line per offered option: what the expander made of it. An option kept without being judged
    says so ("kept, not judged: ..."): it is kept so that CA can still scale, not because it fits."""
    lines = []
    for group in offered:
        if group not in kept:
            lines.append(f"  {group}: dropped (its reason: the dashboard's Decisions page, caller expander)")
        else:
            lines.append(f"  {group}: {kept[group] or 'kept'}")
    return lines


class Command(BaseCommand):
    help = (
        "Send one BestOptions request (2 pods x 30000 MiB, one option per node group) to a running gRPC "
        "expander, as upstream Cluster Autoscaler does, and print the options it keeps."
    )

    def add_arguments(self, parser):
        default = f"127.0.0.1:{os.environ.get('DEMO_EXPANDER_PORT', '8444')}"
        parser.add_argument(
            "--target", default=default, help=f"HOST:PORT of run_expander (default {default})"
        )
        parser.add_argument(
            "--wire",
            choices=WIRES,
            default=WIRES[-1],
            help="objects: as CA <= 1.34 sends; bytes: as CA >= 1.35 sends (default %(default)s)",
        )
        parser.add_argument("groups", nargs="*", help="only offer these node groups")

    def handle(self, *args, **opts):
        try:
            offered, kept = ask_expander(opts["target"], opts["groups"] or None, opts["wire"])
        except grpc.RpcError as exc:
            raise CommandError(f"{opts['target']}: {exc.code().name}: {exc.details()}") from None
        self.stdout.write(
            f"asked {opts['target']}: {len(EXAMPLE_PODS)} pods x {GPUMEM} MiB, options {', '.join(offered)}"
        )
        self.stdout.write(f"wire: {WIRE_WORDS[opts['wire']]}")
        judged = [g for g, why in kept.items() if not why.startswith(unjudged_head(True))]
        unjudged = [g for g in kept if g not in judged]
        line = f"kept: {', '.join(judged) or '(none: no option places a pod)'}"
        if unjudged:
            line += f"; kept, not judged: {', '.join(unjudged)}"
        self.stdout.write(line)
        for text in option_lines(offered, kept):
            self.stdout.write(text)

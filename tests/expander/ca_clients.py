"""Cluster Autoscaler's gRPC expander client, release by release, restated from its source.

Each :class:`CAClient` row says which ``BestOptionsRequest`` fields one CA release's
``cluster-autoscaler/expander/grpcplugin/grpc_client.go`` fills (tag ``cluster-autoscaler-<release>``
of kubernetes/autoscaler), and :func:`encode` builds the request field by field as that client does:

- ``populateOptionsForGRPC``: one ``Option`` per scale-up option, in CA's order, with ``nodeGroupId``,
  ``nodeCount`` and ``debug``; ``newOptionMessage`` sets the pods as ``pod = 4`` (``[]*v1.Pod``,
  1.32.x to 1.34.x) and/or ``podBytes = 5`` (each ``pod.Marshal()``, 1.34.2 and later; left nil for an
  option without pods);
- ``populateNodeInfoForGRPC``: every node group's template ``nodeInfo.Node()`` as ``nodeMap = 2``
  (``map<string, v1.Node>``, 1.32.x to 1.34.x) and/or ``nodeBytesMap = 3`` (``node.Marshal()``,
  1.34.2 and later).

The call itself is the same in every release: TLS with the ``--grpc-expander-cert`` file as the only
root (``credentials.NewClientTLSFromFile``; an empty ``--grpc-expander-cert`` is fatal at start:
"insecure connections not allowed"), a 5 s deadline (``gRPCTimeout``), a 128 MiB receive limit
(``gRPCMaxRecvMsgSize``). What CA does with the answer is :func:`ca_takes` (``BestOptions`` and
``transformAndSanitizeOptionsFromGRPC``, the same at 1.32.1, 1.34.5 and 1.36.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import grpc

from simulations.grpcexpander.protos import expander_pb2 as pb
from simulations.grpcexpander.protos import k8s_core_pb2 as core

__all__ = [
    "CAClient",
    "RELEASES",
    "NEWEST",
    "OptionSpec",
    "encode",
    "best_options",
    "answer",
    "ca_takes",
    "CA_TIMEOUT",
]

METHOD = "/grpcplugin.Expander/BestOptions"
CA_TIMEOUT = 5.0  # gRPCTimeout
CA_MAX_RECV = 128 << 20  # gRPCMaxRecvMsgSize


@dataclass(frozen=True)
class CAClient:
    """Which request fields one CA release fills."""

    release: str
    node_objects: bool  # nodeMap = 2, map<string, k8s.io.api.core.v1.Node>
    node_bytes: bool  # nodeBytesMap = 3, map<string, bytes>
    pod_objects: bool  # Option.pod = 4, repeated k8s.io.api.core.v1.Pod
    pod_bytes: bool  # Option.podBytes = 5, repeated bytes

    def __str__(self) -> str:
        return f"CA {self.release}"


RELEASES = (
    # BestOptionsRequest{Options, NodeMap}; Option{..., Pod: pods}
    CAClient("1.32.7", node_objects=True, node_bytes=False, pod_objects=True, pod_bytes=False),
    # BestOptionsRequest{Options, NodeMap, NodeBytesMap}; Option{..., Pod: pods, PodBytes: podsBytes}
    CAClient("1.34.5", node_objects=True, node_bytes=True, pod_objects=True, pod_bytes=True),
    # BestOptionsRequest{Options, NodeBytesMap}; Option{..., PodBytes: podsBytes} (nodeMap/pod are gone)
    CAClient("1.36.1", node_objects=False, node_bytes=True, pod_objects=False, pod_bytes=True),
)
NEWEST = RELEASES[-1]

#: (node group id, nodeCount, pods) of one scale-up option; debug is CA's "<group> debug" string
OptionSpec = tuple[str, int, Sequence[core.Pod]]


def encode(client: CAClient, options: Sequence[OptionSpec], templates: Mapping[str, core.Node]) -> bytes:
    """The request ``client``'s release sends for these options and node group templates."""
    request = pb.CABestOptionsRequest()
    for group, count, pods in options:
        option = request.options.add(nodeGroupId=group, nodeCount=count, debug=f"{group} debug")
        if client.pod_objects:
            option.pod.extend(pods)
        if client.pod_bytes and pods:
            option.podBytes.extend(pod.SerializeToString() for pod in pods)
    for group, node in templates.items():
        if client.node_objects:
            request.nodeMap[group].CopyFrom(node)
        if client.node_bytes:
            request.nodeBytesMap[group] = node.SerializeToString()
    return request.SerializeToString()


def best_options(channel: grpc.Channel, request: bytes, timeout: float = CA_TIMEOUT) -> list[str]:
    """One ``BestOptions`` call as CA makes it (5 s deadline); the node group ids of the answer."""
    stub = channel.unary_unary(METHOD, response_deserializer=pb.BestOptionsResponse.FromString)
    return [o.nodeGroupId for o in stub(request, timeout=timeout).options]


def answer(channel: grpc.Channel, request: bytes) -> pb.BestOptionsResponse:
    """One ``BestOptions`` call as CA makes it; the whole answer (ids, counts, debug)."""
    stub = channel.unary_unary(METHOD, response_deserializer=pb.BestOptionsResponse.FromString)
    return stub(request, timeout=CA_TIMEOUT)


def ca_takes(sent: Sequence[OptionSpec], response: pb.BestOptionsResponse | None) -> list[OptionSpec]:
    """The options CA goes on with after its call (``None``: the call failed).

    A failed call keeps every option; an answer without options means none (no scale-up this loop);
    otherwise each answered option is mapped back to CA's own by ``nodeGroupId`` (its ``nodeCount``,
    pods and ``debug`` are never read), unknown ids are skipped, and when none is known CA keeps
    every option."""
    if response is None:
        return list(sent)
    if not response.options:
        return []
    own = {spec[0]: spec for spec in sent}  # nodeGroupIDOptionMap
    taken = [own[o.nodeGroupId] for o in response.options if o.nodeGroupId in own]
    return taken or list(sent)


def secure_channel(port: int, root_pem: bytes, host: str = "localhost") -> grpc.Channel:
    """CA's channel: TLS trusting only the ``--grpc-expander-cert`` file, its receive limit."""
    creds = grpc.ssl_channel_credentials(root_certificates=root_pem)
    return grpc.secure_channel(
        f"{host}:{port}", creds, options=[("grpc.max_receive_message_length", CA_MAX_RECV)]
    )

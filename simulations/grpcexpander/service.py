"""CA's gRPC expander (``grpcplugin.Expander/BestOptions``; docs/cluster-autoscaler.md for operators).

CA asks which of its scale-up options to keep. Each option (a node group id, ``nodeCount`` new
nodes, the pods it would help) is packed with HAMi's device rules by the estimator's packer
(``hami_sim.engine.estimate.estimate``) onto ``nodeCount`` fresh nodes of the group's template: CA's
template Node when it carries a registration annotation, else merged with the template rendered
from the NodeGroup's device profiles. The choice is ``hami_sim.engine.hami_expander.choose``, the same
step the estimator's ``grpc`` expander runs. The answer is a set, not a ranking: CA keeps what we
return, narrows a several-option answer with its next expander, gives up this loop on an empty
answer and keeps every option on an error.

Both wire generations are read: CA 1.32 to 1.34 send the templates in ``nodeMap`` (2) and the pods in
``Option.pod`` (4), CA 1.34.2 and later in ``nodeBytesMap`` (3) and ``Option.podBytes`` (5) (1.34.2+
send both; the newer fields win). The answer fails open: an option we cannot judge is kept with its
reason (``EXPANDER_UNJUDGED=drop`` drops it), counted in
``hami_sim_expander_unjudged_options_total{reason}``.

This module is the call from end to end; the options are judged in ``options``, what outlives a
call is in ``caches``, the call's deadline in ``deadline`` and the wire generations in ``wire``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from hami_sim.engine.hami_expander import RETURN_MODES, OptionVerdict, choose
from hami_sim.engine.policy import WeightsError
from hami_sim.engine.requests import PodError
from hami_sim.engine.scaleup import daemon_set_pod
from hami_sim.engine.simulate import PodContext, Simulator
from hami_sim.project.conf import conf
from hami_sim.runtime.simulator import get_simulator
from profiles.inventory import catalog

from ..metrics import EXPANDER_UNJUDGED_OPTIONS
from ..signals import expander_answered
from .caches import CallCache, ExpanderCaches, reset_caches
from .deadline import NO_DEADLINE, CallAbandoned, Deadline
from .grpc_wire import count_wire, wire_of
from .options import evaluate
from .protos import expander_pb2 as pb

__all__ = [
    "RETURN_MODES",
    "OptionVerdict",
    "CallCache",
    "CallAbandoned",
    "Deadline",
    "ExpanderCaches",
    "evaluate",
    "choose",
    "best_options",
    "load_daemon_sets",
    "reset_caches",
    "wire_of",
]

log = logging.getLogger("hami_sim.expander")


def _record(sim: Simulator, verdicts: Sequence[OptionVerdict], seconds: float, wire: str) -> None:
    """One decision record per call, an expander decision (``decisions.expander_calls``): the call's first
    pod, one line per option with its verdict and reason, and the wire generation CA used. Sent as
    ``expander_answered``; never fails the answer."""
    if not expander_answered.receivers or not verdicts:
        return
    try:
        pod = next((v.first_pod for v in verdicts if v.first_pod), None) or _NO_POD
        expander_answered.send_robust(
            sender=best_options,
            ctx=_record_context(sim, pod),
            options=verdicts,
            seconds=seconds,
            wire=wire,
            spec=pod,
        )
    except Exception:
        log.exception("could not record an expander decision")


_NO_POD = {"metadata": {"name": "expander-call", "namespace": ""}, "spec": {"containers": []}}


def _record_context(sim: Simulator, pod: Mapping) -> PodContext:
    """The record's pod: parsed, or, when the engine refuses it (an invalid scoring-weights
    annotation: the option lines say so), its identity alone, so the call is still on record."""
    try:
        return sim.pod_context(pod)
    except (PodError, WeightsError):
        meta = pod.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        keep = ("name", "namespace", "uid", "ownerReferences")
        return sim.pod_context(
            {"metadata": {k: meta[k] for k in keep if k in meta}, "spec": {"containers": []}}
        )


def load_daemon_sets(path: str) -> tuple[dict, ...]:
    """The pods of the DaemonSets in a YAML or JSON file (a list, or a ``List`` such as
    ``kubectl get daemonsets -A -o yaml`` prints): CA places them on every new node they would run
    on (selectors, affinity, tolerations) before the pending pods, but its template Node in
    ``nodeMap`` carries none. Raises ValueError naming what is wrong."""
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"--daemonsets {path}: {exc}") from None
    items = doc.get("items") if isinstance(doc, Mapping) else doc
    if not isinstance(items, list) or any(
        not isinstance(ds, Mapping) or ds.get("kind", "DaemonSet") != "DaemonSet" for ds in items
    ):
        raise ValueError(
            f"--daemonsets {path}: expected a list of DaemonSet objects (kubectl get ds -o yaml)"
        )
    return tuple(daemon_set_pod(ds) for ds in items)


def best_options(
    request: pb.BestOptionsRequest,
    mode: str | None = None,
    daemon_pods: Sequence[Mapping] = (),
    deadline: Deadline = NO_DEADLINE,
) -> pb.BestOptionsResponse:
    """The whole call: evaluate every option, choose, record, answer. Raises ``CallAbandoned`` once
    ``deadline`` has passed (CA no longer reads the answer; on its side every option stays)."""
    started = time.perf_counter()
    sim = get_simulator()
    settings_now = conf()
    mode = mode or settings_now.expander_return
    wire = count_wire(wire_of(request))
    groups = catalog.current()  # the node groups and templates the resolver reads, one snapshot per call
    cache = CallCache(sim, daemon_pods)
    verdicts = evaluate(cache, request, groups, deadline)
    kept = choose(verdicts, mode if mode in RETURN_MODES else "most-placed", settings_now.expander_unjudged)
    for v in verdicts:
        if v.unjudged:
            EXPANDER_UNJUDGED_OPTIONS.labels(reason=v.unjudged).inc()
            log.warning("expander could not judge option %r: %s", v.node_group, v.reason)
    _record(sim, verdicts, time.perf_counter() - started, wire)
    # CA maps the answer back to its own options by node group id and reads nothing else of it, so
    # ``debug`` carries hami-sim's verdict for the option ("kept: places ...", "kept, not judged: ...")
    return pb.BestOptionsResponse(
        options=[pb.Option(nodeGroupId=v.node_group, nodeCount=v.node_count, debug=v.reason) for v in kept]
    )

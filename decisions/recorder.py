"""Record filter answers as folded ``Decision`` rows without slowing or failing the answer.

The extender thread only digests the question and puts a small tuple on a bounded in-process queue
(``record``); a daemon writer thread turns queued answers into rows, folding identical questions
(same pod, caller, node-group set and verdicts) into one row with ``count``/``first_seen``/``last_seen``. A full queue
drops the record (counted), a database error is logged and counted: the caller never sees either.
The queue is bounded in bytes (``DECISION_QUEUE_MAX_BYTES``). A row the database refuses (a NUL
character, a name longer than its column, anything else) is stored trimmed or, failing that, as a
marker of why; each row is written in its own savepoint, so one bad record never takes its batch.

This module is the queue and its writer; an answer becomes a row's fields in ``summary``, rows are
folded into the table in ``upsert``, and refused rows are repaired in ``repair`` (re-exported here).

``DECISION_RECORDING`` selects the mode: ``async`` (default), ``sync`` (write in the caller's thread,
still never raising: used by tests and by callers that already run in a worker) or ``off``.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import close_old_connections, connection, transaction
from django.utils import timezone
from prometheus_client import Counter

from hami_sim.engine.requests import PodView
from hami_sim.engine.sightings import SightedNodes
from hami_sim.engine.simulate import NodeVerdict
from hami_sim.project.conf import conf

from .repair import storable
from .summary import fold_digest, summarize
from .upsert import bump, write_batch

__all__ = [
    "RECORDED",
    "RECORD_ERRORS",
    "RECORD_DROPPED",
    "Question",
    "FilterQuestion",
    "record",
    "record_question",
    "observe_filter",
    "policies_of",
    "flush",
    "summarize",
    "fold_digest",
    "write_batch",
    "storable",
]

log = logging.getLogger("hami_sim.decisions")

RECORDED = Counter("hami_sim_decisions_recorded_total", "Filter answers recorded (before folding)")
RECORD_ERRORS = Counter("hami_sim_decision_record_errors_total", "Decision batches lost to a database error")
RECORD_DROPPED = Counter("hami_sim_decisions_dropped_total", "Decision records dropped: queue full")

_BATCH = 500


def _write_safely(rows: Sequence[dict]) -> None:
    try:
        write_batch(rows)
    except Exception:
        RECORD_ERRORS.inc()
        log.exception("could not record %d decision(s)", len(rows))


# -- what is queued: a question, whatever its kind ------------------------------------------------------
class Question(Protocol):
    """One answer to record: a filter call (``FilterQuestion``) or a gRPC expander call
    (``decisions.expander.ExpanderQuestion``). Each kind digests and summarises itself; the queue,
    the folding and the writes are the same for every kind."""

    def digest(self, caller: str) -> str:
        """The fold identity: equal digests are one row whose count moves."""
        ...

    def summarize(self, **kwargs: Any) -> dict:
        """The ``Decision`` fields (``caller``, ``seconds``, ``policies``, ``at`` as keywords)."""
        ...

    def queued_bytes(self) -> int:
        """What it keeps alive while queued (counted against ``DECISION_QUEUE_MAX_BYTES``)."""
        ...


@dataclass(frozen=True, slots=True)
class FilterQuestion:
    """A filter answer: the pod, the nodes (slimmed while queued) and each node's verdict."""

    pod: PodView
    nodes: Sequence[Mapping]
    verdicts: Sequence[NodeVerdict]

    def digest(self, caller: str) -> str:
        return fold_digest(self.pod, self.verdicts, caller)

    def summarize(self, **kwargs: Any) -> dict:
        return summarize(self.pod, self.nodes, self.verdicts, **kwargs)

    def queued_bytes(self) -> int:
        return _queued_bytes((self.pod, self.nodes, self.verdicts))


# -- the queue and its writer thread ---------------------------------------------------------------
class _Writer:
    """A bounded in-process buffer and the daemon thread that drains it.

    The request thread only appends to a deque (atomic, no lock, no wake-up): waking the writer on
    every answer handed the GIL back and forth with the request thread, which showed up as latency
    on small calls. The writer wakes every ``DECISION_FLUSH_SECONDS`` (or at once for ``flush``) and
    writes what accumulated, so a burst of CA calls folds into one UPDATE per distinct question.

    The bound is on the queue's *bytes* (``DECISION_QUEUE_MAX_BYTES``), not calls or nodes: a queued
    call keeps its verdicts and the first ``DECISION_DETAIL_NODES`` nodes (slimmed, but with their
    annotations, which may be megabytes) alive, and one CA call may carry thousands of nodes. When the
    database is slower than CA, the queue fills to its bound and further records are dropped
    (``hami_sim_decisions_dropped_total``); memory stays put. The writer computes each question's fold digest (sorting a call's verdicts is its
    largest cost, and it must not hold up the answer); a question already on record (``known``)
    only moves its count. Only a new question is summarised (per-node, per-device detail) and inserted.
    """

    def __init__(self) -> None:
        self.items: deque[tuple] = deque()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.pid = 0
        self.lock = threading.Lock()
        self.queued_bytes = 0
        self.enqueued = itertools.count(1)  # next() is atomic: the number of items ever queued
        self.last_enqueued = 0
        self.done = 0  # items the writer has finished (written, dropped or failed)
        self.known: OrderedDict[str, None] = OrderedDict()

    def ensure_running(self) -> None:
        thread = self.thread
        if thread is not None and self.pid == os.getpid() and thread.is_alive():
            return
        with self.lock:
            if self.thread is not None and self.pid == os.getpid() and self.thread.is_alive():
                return
            if self.pid != os.getpid():  # forked (gunicorn): the parent's buffer and thread are not ours
                self.items = deque()
                self.wake = threading.Event()
                self.queued_bytes = 0
                self.enqueued = itertools.count(1)
                self.last_enqueued = self.done = 0
                self.known.clear()
            self.pid = os.getpid()
            self.thread = threading.Thread(target=self.run, name="decision-writer", daemon=True)
            self.thread.start()

    def put(self, payload: Question, kwargs: dict) -> None:
        self.ensure_running()
        size = payload.queued_bytes()
        limit = conf().decision_queue_max_bytes
        with self.lock:  # request threads add, the writer subtracts: unlocked, the count would drift
            if self.queued_bytes + size > limit:
                RECORD_DROPPED.inc()
                return
            self.queued_bytes += size
            self.items.append((payload, kwargs, size))
            self.last_enqueued = next(self.enqueued)

    def _remember(self, digest: str) -> None:
        self.known[digest] = None
        self.known.move_to_end(digest)
        while len(self.known) > 10000:
            self.known.popitem(last=False)

    def process(self, items: list[tuple]) -> None:
        """Items are ``(question, kwargs, size)``."""
        folded = self._fold(items)
        with transaction.atomic():
            for digest, entry in folded.items():
                self._store(digest, *entry)

    def _fold(self, items: list[tuple]) -> dict[str, list]:
        """The items by question: ``[payload, kwargs, count, first, last, seconds]`` per digest, the
        payload None when the question is already on record (only its count moves)."""
        folded: dict[str, list] = {}
        for payload, kwargs, *_size in items:
            try:
                digest = payload.digest(kwargs["caller"])
            except Exception:
                RECORD_ERRORS.inc()
                log.exception("could not fold a decision")
                continue
            if digest in self.known:
                payload = None  # already on record: only its count moves
            at = kwargs["at"]
            entry = folded.get(digest)
            if entry is None:
                folded[digest] = [payload, kwargs, 1, at, at, kwargs["seconds"]]
                continue
            if entry[0] is None and payload is not None:
                entry[0], entry[1] = payload, kwargs
            entry[2] += 1
            entry[3] = min(entry[3], at)
            if at >= entry[4]:
                entry[4], entry[5] = at, kwargs["seconds"]
        return folded

    def _store(self, digest: str, payload, kwargs: dict, count: int, first, last, seconds: float) -> None:
        """Move a known question's row, else summarise the question and insert it."""
        moved = {"count": count, "last_seen": last, "latency_ms": round(seconds * 1000, 3)}
        if (digest in self.known or payload is None) and bump(digest, moved):
            return
        self.known.pop(digest, None)
        if payload is None:  # the row was pruned since: the next call carries the detail again
            RECORD_DROPPED.inc()
            return
        try:
            row = payload.summarize(**kwargs)
        except Exception:  # one question that cannot be summarised; the others go on
            RECORD_ERRORS.inc()
            log.exception("could not summarise a decision")
            return
        row.update(first_seen=first, **moved)
        write_batch([row])
        self._remember(digest)

    def take(self) -> list[tuple]:
        """Up to ``_BATCH`` queued items, oldest first."""
        items = self.items
        batch = []
        while items and len(batch) < _BATCH:
            batch.append(items.popleft())
        return batch

    def run(self) -> None:
        while True:
            self.wake.wait(conf().decision_flush_seconds)
            self.wake.clear()
            while True:
                batch = self.take()
                if not batch:
                    break
                self.write(batch)
            try:
                connection.close()  # idle: give the connection back (CA's loop brings more in seconds)
            except Exception:
                log.exception("could not close the decision writer's database connection")

    def write(self, batch: list[tuple]) -> None:
        try:
            close_old_connections()
            self.process(batch)
        except Exception:
            RECORD_ERRORS.inc()
            self.known.clear()  # a rolled-back batch may have "known" rows that never landed
            log.exception("could not record %d decision(s)", len(batch))
        finally:
            written = sum(item[2] for item in batch)
            with self.lock:
                self.queued_bytes -= written
                self.done += len(batch)


#: what a queued call costs besides its strings: the tuple, kwargs, the PodView and the lists
_CALL_BYTES = 2048
#: a ``NodeVerdict`` kept alive by a queued call (its fit and reason are shared with the engine's memo)
_VERDICT_BYTES = 256
#: a slimmed node's dicts, labels and capacity, besides its annotations' text
_NODE_BYTES = 1024
#: a node kept as its bytes: the bytes object and its slots, besides its length
_RAW_NODE_BYTES = 64


def _text_bytes(mapping: object) -> int:
    """The characters of a mapping's string keys and values (annotations: what can be megabytes)."""
    if not isinstance(mapping, Mapping):
        return 0
    try:
        return sum(map(len, mapping.values())) + sum(map(len, mapping.keys()))
    except TypeError:  # not all strings (a session's or the UI's own node): count what is
        return sum(len(v) for v in (*mapping.keys(), *mapping.values()) if isinstance(v, str))


def _queued_bytes(payload: tuple) -> int:
    """What a queued call counts against ``DECISION_QUEUE_MAX_BYTES``: an estimate of the memory it
    keeps alive, from the lengths of its strings (cheap: the answering thread computes it)."""
    pod, held, verdicts = payload
    size = _CALL_BYTES + _text_bytes(getattr(pod, "annotations", None)) + _VERDICT_BYTES * len(verdicts)
    if isinstance(held, SightedNodes):  # the nodes' own bytes
        return size + sum(map(len, held.raw)) + _RAW_NODE_BYTES * len(held)
    for node in held:
        meta = node["metadata"]
        size += _NODE_BYTES + _text_bytes(meta.get("annotations")) + _text_bytes(meta.get("labels"))
    return size


_writer = _Writer()


def flush(timeout: float = 10.0) -> bool:
    """Write every queued record now and wait for it (tests, shutdown). True when all were written."""
    target = _writer.last_enqueued
    if _writer.done >= target:
        return True
    _writer.wake.set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _writer.done >= target:
            return True
        time.sleep(0.01)
    return False


def record(
    pod: PodView,
    nodes: Sequence[Mapping],
    verdicts: Sequence[NodeVerdict],
    *,
    caller: str = "extender",
    seconds: float = 0.0,
    policies: Mapping[str, Any] | None = None,
) -> None:
    """Record one filter answer (extender, ``session:<id>``, ``estimate``, ``ui``). Never raises."""
    if conf().decision_recording != "async":
        record_question(
            FilterQuestion(pod, nodes, verdicts), caller=caller, seconds=seconds, policies=policies
        )
        return
    # the writer folds it (``fold_digest``): the answering thread only slims the nodes a new
    # question's detail reads, so a queued call never keeps a request's full Node objects alive
    held = _held(nodes, conf().decision_detail_nodes)
    record_question(FilterQuestion(pod, held, verdicts), caller=caller, seconds=seconds, policies=policies)


def record_question(
    question: Question, *, caller: str, seconds: float = 0.0, policies: Mapping[str, Any] | None = None
) -> None:
    """Record one answer of any kind: queued for the writer (``async``), written now (``sync``) or
    not at all (``off``). Never raises."""
    mode = conf().decision_recording
    if mode == "off":
        return
    RECORDED.inc()
    kwargs = {"caller": caller, "seconds": seconds, "policies": policies, "at": timezone.now()}
    if mode != "sync":
        _writer.put(question, kwargs)
        return
    try:
        row = question.summarize(**kwargs)
    except Exception:
        RECORD_ERRORS.inc()
        log.exception("could not summarise a decision")
        return
    _write_safely([row])


def _held(nodes: Sequence[Mapping], count: int) -> Sequence[Mapping]:
    """The first ``count`` nodes as a queued call keeps them: nodes as the wire sent them
    (``SightedNodes``) as their bytes, decoded by the writer only for a question not on record yet
    (CA's next loop asks the same: nothing decoded on the answering thread); others slimmed."""
    if isinstance(nodes, SightedNodes):
        return nodes.head(count)
    return [_slim(node) for node in nodes[:count]]


def _slim(node: Mapping) -> dict:
    """What a record reads of a queued node (its device inventory and group): a Node from CA also
    carries a spec, images, conditions and managed fields, 10-50 KB that a queued record must not
    hold while the database is slow (``_queued_bytes`` charges what is kept)."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    return {
        "metadata": {k: meta[k] for k in ("name", "uid", "labels", "annotations") if k in meta},
        "status": {k: status[k] for k in ("capacity", "allocatable") if k in status},
    }


def policies_of(ctx) -> dict:
    """The scheduling policies in force for the pod (``PodContext``), as a decision row keeps them."""
    return {"node": ctx.node_policy, "gpu": ctx.gpu_policy.raw, "numaBind": ctx.gpu_policy.numa_bind}


def observe_filter(sender, *, ctx, args, verdicts, caller: str, seconds: float = 0.0, **kwargs) -> None:
    """Receiver of ``simulations.signals.filter_answered``: queue the answer as a decision record."""
    policies = policies_of(ctx)
    policies.update(kwargs.get("extra") or {})  # caller facts
    record(ctx.pod, args.nodes, verdicts, caller=caller, seconds=seconds, policies=policies)

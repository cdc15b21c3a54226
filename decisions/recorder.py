"""Record filter answers as folded ``Decision`` rows without slowing or failing the answer.

The answering thread only puts a small tuple on a bounded in-process queue (``record``: the
question with the nodes it keeps, ``decisions.question``); a daemon writer thread digests queued
answers and turns them into rows, folding identical questions (same pod, caller, node-group set and
verdicts) into one row with ``count``/``first_seen``/``last_seen``. A full queue drops the record
(counted), a database error is logged and counted: the caller never sees either.
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
from datetime import UTC, datetime
from typing import Any, Protocol

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from prometheus_client import Counter

from hami_sim.engine.requests import PodView
from hami_sim.engine.simulate import NodeVerdict
from hami_sim.project.conf import Conf, conf

from .question import FilterQuestion, held
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
    (``decisions.expander_calls.ExpanderQuestion``). Each kind digests and summarises itself; the queue,
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


# -- the queue and its writer thread ---------------------------------------------------------------
class _Writer:
    """A bounded in-process buffer and the daemon thread that drains it.

    The request thread only appends one tuple to a deque (under a lock for the byte count, no
    wake-up): waking the writer on every answer handed the GIL back and forth with the request
    thread, which showed up as latency on small calls. The writer wakes every
    ``DECISION_FLUSH_SECONDS`` (or at once for ``flush``) and writes what accumulated, so a burst of
    CA calls folds into one UPDATE per distinct question.

    The bound is on the queue's *bytes* (``DECISION_QUEUE_MAX_BYTES``), not calls or nodes: a queued
    call keeps its verdicts and the first ``DECISION_DETAIL_NODES`` nodes (slimmed, but with their
    annotations, which may be megabytes) alive, and one CA call may carry thousands of nodes. When the
    database is slower than CA, the queue fills to its bound and further records are dropped
    (``hami_sim_decisions_dropped_total``); memory stays put. The writer computes each question's
    fold digest (sorting a call's verdicts is its largest cost, and it must not hold up the answer);
    a question already on record (``known``) only moves its count. Only a new question is
    summarised (per-node, per-device detail) and inserted.

    An item is ``(question, caller, seconds, policies, at, size)``, ``at`` a ``time.time()`` (turned
    into a datetime by the writer): everything the answering thread would build for a row that
    folds into one already on record is left to the writer.
    """

    def __init__(self) -> None:
        self.items: deque[tuple] = deque()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.pid = 0
        self.running = False  # this process's writer thread was started and has not ended
        self.lock = threading.Lock()
        self.queued_bytes = 0
        self.enqueued = itertools.count(1)  # next() is atomic: the number of items ever queued
        self.last_enqueued = 0
        self.done = 0  # items the writer has finished (written, dropped or failed)
        self.known: OrderedDict[str, None] = OrderedDict()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """In a forked child (gunicorn) the parent's thread does not run: the next put starts one."""
        self.running = False

    def ensure_running(self) -> None:
        thread = self.thread
        if thread is not None and self.pid == os.getpid() and thread.is_alive():
            self.running = True
            return
        with self.lock:
            if self.thread is not None and self.pid == os.getpid() and self.thread.is_alive():
                self.running = True
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
            self.running = True

    def put(self, item: tuple, limit: int) -> None:
        """Queue ``item`` (its last field its size), or drop it past ``limit`` queued bytes."""
        if not self.running:
            self.ensure_running()
        size = item[5]
        with self.lock:  # request threads add, the writer subtracts: unlocked, the count would drift
            if self.queued_bytes + size > limit:
                RECORD_DROPPED.inc()
                return
            self.queued_bytes += size
            self.items.append(item)
            self.last_enqueued = next(self.enqueued)

    def _remember(self, digest: str) -> None:
        self.known[digest] = None
        self.known.move_to_end(digest)
        while len(self.known) > 10000:
            self.known.popitem(last=False)

    def process(self, items: list[tuple]) -> None:
        """Items are ``(question, caller, seconds, policies, at, size)``."""
        folded = self._fold(items)
        with transaction.atomic():
            for digest, entry in folded.items():
                self._store(digest, *entry)

    def _fold(self, items: list[tuple]) -> dict[str, list]:
        """The items by question: ``[question, caller, policies, count, first, last, seconds]`` per
        digest, the question None when it is already on record (only its count moves)."""
        folded: dict[str, list] = {}
        for question, caller, seconds, policies, at, _size in items:
            try:
                digest = question.digest(caller)
            except Exception:
                RECORD_ERRORS.inc()
                log.exception("could not fold a decision")
                continue
            if digest in self.known:
                question = None  # already on record: only its count moves
            entry = folded.get(digest)
            if entry is None:
                folded[digest] = [question, caller, policies, 1, at, at, seconds]
                continue
            if entry[0] is None and question is not None:
                entry[0], entry[1], entry[2] = question, caller, policies
            entry[3] += 1
            entry[4] = min(entry[4], at)
            if at >= entry[5]:
                entry[5], entry[6] = at, seconds
        return folded

    def _store(
        self,
        digest: str,
        question: Question | None,
        caller: str,
        policies: Mapping[str, Any] | None,
        count: int,
        first: float,
        last: float,
        seconds: float,
    ) -> None:
        """Move a known question's row, else summarise the question and insert it."""
        moved = {"count": count, "last_seen": _when(last), "latency_ms": round(seconds * 1000, 3)}
        if (digest in self.known or question is None) and bump(digest, moved):
            return
        self.known.pop(digest, None)
        if question is None:  # the row was pruned since: the next call carries the detail again
            RECORD_DROPPED.inc()
            return
        first_seen = _when(first)
        try:
            row = question.summarize(caller=caller, seconds=seconds, policies=policies, at=first_seen)
        except Exception:  # one question that cannot be summarised; the others go on
            RECORD_ERRORS.inc()
            log.exception("could not summarise a decision")
            return
        row.update(first_seen=first_seen, **moved)
        write_batch([row])
        self._remember(digest)

    def take(self) -> list[tuple]:
        """Up to ``_BATCH`` queued items, oldest first."""
        items = self.items
        batch: list[tuple] = []
        while items and len(batch) < _BATCH:
            batch.append(items.popleft())
        return batch

    def run(self) -> None:
        try:
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
        finally:
            self.running = False  # the next put starts another

    def write(self, batch: list[tuple]) -> None:
        try:
            close_old_connections()
            self.process(batch)
        except Exception:
            RECORD_ERRORS.inc()
            self.known.clear()  # a rolled-back batch may have "known" rows that never landed
            log.exception("could not record %d decision(s)", len(batch))
        finally:
            written = sum(item[5] for item in batch)
            with self.lock:
                self.queued_bytes -= written
                self.done += len(batch)


def _when(at: float) -> datetime:
    """A queued ``time.time()`` as ``timezone.now()`` would have said it then."""
    return datetime.fromtimestamp(at, tz=UTC) if settings.USE_TZ else datetime.fromtimestamp(at)


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
    spec: Mapping | None = None,
) -> None:
    """Record one filter answer (extender, ``session:<id>``, ``estimate``, ``ui``). Never raises.
    ``spec``: the pod as asked, kept slimmed (``summary.pod_spec``) to judge it again later.

    Queued (``async``), the question keeps only the first ``DECISION_DETAIL_NODES`` nodes, as
    ``question.held`` says; the writer folds it (``fold_digest``), so a queued call never keeps a request's
    full Node objects alive and the answering thread decodes nothing."""
    settings_now = conf()
    if settings_now.decision_recording != "async":
        _record_now(FilterQuestion(pod, nodes, verdicts, spec=spec), caller, seconds, policies, settings_now)
        return
    RECORDED.inc()
    question = held(pod, nodes, verdicts, settings_now.decision_detail_nodes, spec)
    item = (question, caller, seconds, policies, time.time(), question.queued_bytes())
    _writer.put(item, settings_now.decision_queue_max_bytes)


def record_question(
    question: Question, *, caller: str, seconds: float = 0.0, policies: Mapping[str, Any] | None = None
) -> None:
    """Record one answer of any kind: queued for the writer (``async``), written now (``sync``) or
    not at all (``off``). Never raises."""
    settings_now = conf()
    if settings_now.decision_recording != "async":
        _record_now(question, caller, seconds, policies, settings_now)
        return
    RECORDED.inc()
    item = (question, caller, seconds, policies, time.time(), question.queued_bytes())
    _writer.put(item, settings_now.decision_queue_max_bytes)


def _record_now(
    question: Question, caller: str, seconds: float, policies: Mapping[str, Any] | None, settings_now: Conf
) -> None:
    """``sync``: summarised and written in the caller's thread (never raising); ``off``: nothing."""
    if settings_now.decision_recording == "off":
        return
    RECORDED.inc()
    try:
        row = question.summarize(caller=caller, seconds=seconds, policies=policies, at=_when(time.time()))
    except Exception:
        RECORD_ERRORS.inc()
        log.exception("could not summarise a decision")
        return
    _write_safely([row])


def policies_of(ctx: Any) -> dict:
    """The scheduling policies in force for the pod (``PodContext``), as a decision row keeps them."""
    return {"node": ctx.node_policy, "gpu": ctx.gpu_policy.raw, "numaBind": ctx.gpu_policy.numa_bind}


def observe_filter(
    sender: object,
    *,
    ctx: Any,
    args: Any,
    verdicts: Sequence[NodeVerdict],
    caller: str,
    seconds: float = 0.0,
    **kwargs: Any,
) -> None:
    """Receiver of ``simulations.signals.filter_answered``: queue the answer as a decision record."""
    policies = policies_of(ctx)
    extra = kwargs.get("extra")  # caller facts
    if extra:
        policies.update(extra)
    record(ctx.pod, args.nodes, verdicts, caller=caller, seconds=seconds, policies=policies, spec=args.pod)

"""Record filter answers as folded ``Decision`` rows without slowing or failing the answer.

The extender thread only digests the question and puts a small tuple on a bounded in-process queue
(``record``); a daemon writer thread turns queued answers into rows, folding identical questions
(same pod, caller, node-group set and verdicts) into one row with ``count``/``first_seen``/``last_seen``. A full queue
drops the record (counted), a database error is logged and counted: the caller never sees either.
The queue is bounded in bytes (``DECISION_QUEUE_MAX_BYTES``). A row the database refuses (a NUL
character, a name longer than its column, anything else) is stored trimmed or, failing that, as a
marker of why; each row is written in its own savepoint, so one bad record never takes its batch.

``DECISION_RECORDING`` selects the mode: ``async`` (default), ``sync`` (write in the caller's thread,
still never raising: used by tests and by callers that already run in a worker) or ``off``.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import threading
import time
from collections import Counter as Tally
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson
from django.db import DatabaseError, IntegrityError, close_old_connections, connection, transaction
from django.db.models import F
from django.utils import timezone
from prometheus_client import Counter

from hami_sim.conf import conf
from hami_sim.engine.reasons import parse_reason
from hami_sim.engine.requests import PodView
from hami_sim.engine.simulate import NodeVerdict

from .models import Decision

__all__ = [
    "RECORDED",
    "RECORD_ERRORS",
    "RECORD_DROPPED",
    "record",
    "observe_filter",
    "flush",
    "summarize",
    "write_batch",
    "storable",
]

log = logging.getLogger("hami_sim.decisions")

RECORDED = Counter("hami_sim_decisions_recorded_total", "Filter answers recorded (before folding)")
RECORD_ERRORS = Counter("hami_sim_decision_record_errors_total", "Decision batches lost to a database error")
RECORD_DROPPED = Counter("hami_sim_decisions_dropped_total", "Decision records dropped: queue full")
RECORD_REPAIRED = Counter(
    "hami_sim_decision_records_repaired_total",
    "Decision rows the database refused as they were, stored trimmed or as a marker",
    ["how"],
)

_BATCH = 500


# -- summarising: engine objects -> plain JSON-able dicts -------------------------------------------------
def _request_summary(pod: PodView) -> list[dict]:
    out = []
    for container in pod.requests.containers:
        out.append(
            {
                vtype: {
                    "nums": req.nums,
                    "memreq": req.memreq,
                    "mem_percentage_req": req.mem_percentage_req,
                    "coresreq": req.coresreq,
                }
                for vtype, req in container.items()
            }
        )
    return out


MAX_REASON_CHARS = 2000


def _node_detail(node: Mapping, verdict: NodeVerdict, inventory_of, with_devices: bool = True) -> dict:
    """Per-node verdict plus every device of the node: chosen / free / rejected (with the rule).

    ``with_devices=False`` (nodes past ``DECISION_DETAIL_NODES``) keeps the verdict and reason only:
    rows averaged 89 KB with every device of every node (issue 16 item 10).
    """
    fit = verdict.fit
    chosen: dict[str, dict] = {}
    device_reasons: dict[str, str] = {}
    failed_container = -1
    if fit is not None:
        device_reasons = fit.device_reasons
        failed_container = fit.failed_container
        for ci, container in enumerate(fit.containers):
            for dev in container:
                slot = chosen.setdefault(dev.uuid, {"usedmem": 0, "usedcores": 0, "containers": []})
                slot["usedmem"] += dev.usedmem
                slot["usedcores"] += dev.usedcores
                slot["containers"].append(ci)
    devices: list[dict] = []
    if with_devices and not verdict.unresolvable and (fit is not None or device_reasons):
        try:
            inventory = inventory_of(node)
            infos = inventory.devices if not inventory.error else ()
        except Exception:  # an inventory that cannot be rebuilt only loses the device detail
            infos = ()
        for info in infos:
            row = {
                "uuid": info.id,
                "index": info.index,
                "type": info.type,
                "devmem": info.devmem,
                "devcore": info.devcore,
                "count": info.count,
                "numa": info.numa,
                "health": info.health,
                "mode": info.mode,
            }
            if info.id in chosen:
                row.update(verdict="chosen", reason="", **chosen[info.id])
            elif info.id in device_reasons:
                row.update(verdict="rejected", reason=device_reasons[info.id])
            else:
                row.update(verdict="free" if verdict.fits else "unchecked", reason="")
            devices.append(row)
    return {
        "name": verdict.name,
        "group": verdict.node_group or "",
        "source": verdict.source,
        "fits": verdict.fits,
        "unresolvable": verdict.unresolvable,
        "reason": verdict.reason[:MAX_REASON_CHARS],
        "score": round(float(verdict.score_after), 4),
        "failed_container": failed_container,
        "devices": devices,
    }


#: distinct (group, verdict, reason) rows kept for the nodes past ``DECISION_LISTED_NODES``
MAX_FOLDED_ROWS = 32


def _folded_details(verdicts: Sequence[NodeVerdict]) -> list[dict]:
    """The nodes past ``DECISION_LISTED_NODES``, one row per (group, verdict, reason) with its count.

    CA may send thousands of nodes in one call and each listed node costs ~180 bytes of the row, so a
    row's size would follow the cluster's (issue 16 item 10); folded, it is bounded. The verdict
    counts and groups of the decision are still taken from every node (``summarize``).
    """
    if not verdicts:
        return []
    counts = Tally(
        (v.node_group or "", v.source, v.fits, v.unresolvable, v.reason[:MAX_REASON_CHARS]) for v in verdicts
    )
    kept = counts.most_common(MAX_FOLDED_ROWS)
    rest = sum(counts.values()) - sum(n for _, n in kept)
    rows = [_folded_row(f"{n} more node(s)", n, *verdict) for verdict, n in kept]
    if rest:
        rows.append(_folded_row(f"{rest} more node(s) with other verdicts", rest, "", "", False, False, ""))
    return rows


def _folded_row(
    name: str, folded: int, group: str, source: str, fits: bool, unresolvable: bool, reason: str
) -> dict:
    """A node row of a decision that stands for ``folded`` nodes (no score, no devices)."""
    return {
        "name": name,
        "group": group,
        "source": source,
        "fits": fits,
        "unresolvable": unresolvable,
        "reason": reason,
        "score": 0.0,
        "failed_container": -1,
        "devices": [],
        "folded": folded,
    }


def _reason_names(reason: str) -> list[tuple[str, int]]:
    parsed = parse_reason(reason)
    return list(parsed.items()) if parsed else [(reason, 1)]


def fold_digest(pod: PodView, verdicts: Sequence[NodeVerdict], caller: str) -> str:
    """Identity of a question: pod, caller (and session), and the set of (group, fits, reason).

    Template node names change every CA loop (``template-node-for-<group>-<random>``), so nodes are
    identified by their node group; a node without one by its name.
    """
    caller, _, session = caller.partition(":")
    fold = sorted({(v.node_group or v.name, v.fits, v.reason) for v in verdicts})
    return hashlib.blake2b(orjson.dumps([pod.key, caller, session, fold]), digest_size=20).hexdigest()


def summarize(
    pod: PodView,
    nodes: Sequence[Mapping],
    verdicts: Sequence[NodeVerdict],
    *,
    caller: str,
    seconds: float,
    policies: Mapping[str, Any] | None = None,
    at: datetime | None = None,
    inventory_of=None,
) -> dict:
    """The ``Decision`` fields for one answer, plus its fold digest."""
    if inventory_of is None:
        from hami_sim.runtime.simulator import get_simulator

        inventory_of = get_simulator().inventory
    caller, _, session = caller.partition(":")
    settings_now = conf()
    answered = list(verdicts)
    listed = answered[: settings_now.decision_listed_nodes]
    with_devices = min(settings_now.decision_detail_nodes, len(nodes))  # queued records hold no more
    details = [
        _node_detail(nodes[i] if i < with_devices else {}, v, inventory_of, with_devices=i < with_devices)
        for i, v in enumerate(listed)
    ]
    details += _folded_details(answered[len(listed) :])
    groups = sorted({v.node_group or v.name for v in answered})
    fit_groups = sorted({v.node_group or v.name for v in answered if v.fits})
    fit_count = sum(1 for v in answered if v.fits)
    if fit_count:
        verdict = Decision.Verdict.FIT
    elif answered and all(v.unresolvable for v in answered):
        verdict = Decision.Verdict.UNRESOLVABLE
    else:
        verdict = Decision.Verdict.NO_FIT
    tally: Tally[str] = Tally()
    for v in answered:
        if not v.fits and v.reason:
            for name, n in _reason_names(v.reason[:MAX_REASON_CHARS]):
                tally[name] += n
    top_reason = tally.most_common(1)[0][0][:300] if tally else ""
    return {
        "digest": fold_digest(pod, verdicts, f"{caller}:{session}" if session else caller),
        "pod_uid": pod.uid,
        "pod_namespace": pod.namespace,
        "pod_name": pod.name,
        "pod_owner": pod.owner,
        "caller": caller if caller in Decision.Caller.values else Decision.Caller.EXTENDER,
        "session": session,
        "verdict": verdict,
        "node_groups": groups,
        "fit_groups": fit_groups,
        "node_count": len(answered),
        "fit_count": fit_count,
        "top_reason": top_reason,
        "request": _request_summary(pod),
        "nodes": details,
        "policies": dict(policies or {}),
        "latency_ms": round(seconds * 1000, 3),
        "first_seen": at or timezone.now(),
        "last_seen": at or timezone.now(),
    }


# -- writing ---------------------------------------------------------------------------------------------
def write_batch(rows: Sequence[dict]) -> int:
    """Upsert summaries, folding by digest; returns the number of distinct rows touched.

    Each new row goes in its own savepoint (``_insert``): a row the database refuses is stored
    trimmed or as a marker, and never rolls back the others of its batch."""
    folded: dict[str, dict] = {}
    for row in rows:
        seen = folded.get(row["digest"])
        if seen is None:
            folded[row["digest"]] = dict(row, count=row.get("count", 1))
        else:
            seen["count"] += row.get("count", 1)
            seen["first_seen"] = min(seen["first_seen"], row["first_seen"])
            if row["last_seen"] >= seen["last_seen"]:
                seen["last_seen"] = row["last_seen"]
                seen["latency_ms"] = row["latency_ms"]
    with transaction.atomic():
        for digest, row in folded.items():
            if not _bump(digest, row):
                _insert(digest, row)
    return len(folded)


def _insert(digest: str, row: dict) -> None:
    """Create one row: as summarised but storable (``storable``: trimmed, NUL characters replaced),
    else as a marker naming the database's refusal; a race with another writer bumps its row."""
    clean = storable(row)
    if clean != row:
        RECORD_REPAIRED.labels("trimmed").inc()
    error = _try_create(digest, clean)
    if error is None:
        return
    log.warning("decision %s stored as a marker: %s", digest, error)
    RECORD_REPAIRED.labels("marker").inc()
    error = _try_create(digest, _marker(clean, error))
    if error is not None:
        raise error


def _try_create(digest: str, row: dict) -> Exception | None:
    """Create ``row`` in its own savepoint; None when it (or another writer's row) is now stored,
    else the database's refusal (the savepoint is rolled back, the batch goes on)."""
    try:
        with transaction.atomic():
            Decision.objects.create(**row)
        return None
    except IntegrityError as exc:  # another writer created it first (or a constraint refused it)
        with transaction.atomic():
            return None if _bump(digest, row) else exc
    except (DatabaseError, ValueError) as exc:  # psycopg refuses NUL before the server sees it
        return exc


#: what a string column may hold (``Decision`` field -> max_length), read once from the model
_CHAR_LIMITS = {
    f.name: f.max_length for f in Decision._meta.get_fields() if getattr(f, "max_length", None) and f.concrete
}
_TRIMMED = "…"


def _clean_text(text: str, limit: int | None = None) -> str:
    """``text`` as PostgreSQL stores it: NUL characters and lone surrogates replaced, at most
    ``limit`` characters (the last one then says it was trimmed)."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + _TRIMMED
    return text


def _clean_json(value: Any) -> Any:
    if isinstance(value, str):
        return _clean_text(value)
    if isinstance(value, dict):
        return {_clean_text(str(k)): _clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_json(v) for v in value]
    return value


def storable(row: dict) -> dict:
    """The row with every string the database would refuse repaired: strings in columns trimmed to
    the column and NUL characters (text and JSON) replaced by U+FFFD."""
    out = dict(row)
    for key, value in row.items():
        if isinstance(value, str):
            out[key] = _clean_text(value, _CHAR_LIMITS.get(key))
        elif isinstance(value, dict | list):
            out[key] = _clean_json(value)
    return out


def _marker(row: dict, error: BaseException) -> dict:
    """The row that still records the question when the summary itself cannot be stored: who asked,
    the verdict and counts, and why the detail is missing (in ``top_reason``)."""
    why = _clean_text(f"unstorable record: {error.__class__.__name__}: {str(error).strip()}", 300)
    keep = ("digest", "caller", "verdict", "latency_ms", "count", "first_seen", "last_seen")
    marker = {key: row[key] for key in keep if key in row}
    for key in ("node_count", "fit_count"):  # what a PostgreSQL integer holds
        marker[key] = min(max(int(row.get(key) or 0), 0), 2**31 - 1)
    for key in ("pod_uid", "pod_namespace", "pod_name", "pod_owner", "session"):
        text = row.get(key)
        ascii_text = text.encode("ascii", "replace").decode() if isinstance(text, str) else ""
        marker[key] = _clean_text(ascii_text, _CHAR_LIMITS.get(key))
    marker.update(top_reason=why, node_groups=[], fit_groups=[], request=[], nodes=[], policies={})
    return marker


def _bump(digest: str, row: dict) -> bool:
    return bool(
        Decision.objects.filter(digest=digest).update(
            count=F("count") + row["count"], last_seen=row["last_seen"], latency_ms=row["latency_ms"]
        )
    )


def _write_safely(rows: Sequence[dict]) -> None:
    try:
        write_batch(rows)
    except Exception:
        RECORD_ERRORS.inc()
        log.exception("could not record %d decision(s)", len(rows))


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

    def put(self, payload: tuple, kwargs: dict) -> None:
        self.ensure_running()
        size = _queued_bytes(payload)
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
        """Items are ``(payload, kwargs)``; payload ``(pod, nodes, verdicts)``."""
        folded: dict[str, list] = {}
        for payload, kwargs, *_size in items:
            try:
                digest = fold_digest(payload[0], payload[2], kwargs["caller"])
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
        with transaction.atomic():
            for digest, (payload, kwargs, count, first, last, seconds) in folded.items():
                bump = {"count": count, "last_seen": last, "latency_ms": round(seconds * 1000, 3)}
                if (digest in self.known or payload is None) and _bump(digest, bump):
                    continue
                self.known.pop(digest, None)
                if payload is None:  # the row was pruned since: the next call carries the detail again
                    RECORD_DROPPED.inc()
                    continue
                try:
                    row = summarize(*payload, **kwargs)
                except Exception:  # one question that cannot be summarised; the others go on
                    RECORD_ERRORS.inc()
                    log.exception("could not summarise a decision")
                    continue
                row.update(first_seen=first, **bump)
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
    settings = conf()
    mode = settings.decision_recording
    if mode == "off":
        return
    RECORDED.inc()
    kwargs = {"caller": caller, "seconds": seconds, "policies": policies, "at": timezone.now()}
    if mode == "sync":
        try:
            row = summarize(pod, nodes, verdicts, **kwargs)
        except Exception:
            RECORD_ERRORS.inc()
            log.exception("could not summarise a decision")
            return
        _write_safely([row])
        return
    # the writer folds it (``fold_digest``): the answering thread only slims the nodes a new
    # question's detail reads, so a queued call never keeps a request's full Node objects alive
    held = [_slim(node) for node in nodes[: settings.decision_detail_nodes]]
    _writer.put((pod, held, verdicts), kwargs)


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


def observe_filter(sender, *, ctx, args, verdicts, caller: str, seconds: float = 0.0, **kwargs) -> None:
    """Receiver of ``simulations.signals.filter_answered``: queue the answer as a decision record."""
    policies = {"node": ctx.node_policy, "gpu": ctx.gpu_policy.raw, "numaBind": ctx.gpu_policy.numa_bind}
    policies.update(kwargs.get("extra") or {})  # caller facts, e.g. the expander's wire form
    record(ctx.pod, args.nodes, verdicts, caller=caller, seconds=seconds, policies=policies)

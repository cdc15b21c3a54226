"""Progress of long work, for whoever watches it: a bar per stage on a terminal (``manage.py
sync_cluster``, ``import_profiles``) or the running task's row on the Task runs page.

The work says how far it is with ``report(stage, done, total)`` (or iterates through ``counted``)
without knowing who listens; the caller decides with ``reporting(reporter)``. Nothing listens by
default, so a sync run by the watcher or a test pays one context-variable read per report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, TypeVar

from tqdm import tqdm

__all__ = ["Reporter", "reporting", "report", "counted", "TerminalProgress", "terminal_progress"]

T = TypeVar("T")
#: ``(stage, done, total)``; ``total`` is ``None`` while unknown (a list whose size the API did not say).
Reporter = Callable[[str, int, "int | None"], None]

_current: ContextVar[Reporter | None] = ContextVar("hami_sim_progress", default=None)


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Send every ``report`` of the work run inside to ``reporter`` (``None``: to nobody)."""
    token = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(token)


def report(stage: str, done: int, total: int | None = None) -> None:
    reporter = _current.get()
    if reporter is not None:
        reporter(stage, done, total)


def counted(items: Iterable[T], stage: str, total: int | None = None, every: int = 50) -> Iterator[T]:
    """``items`` unchanged, reporting ``stage`` every ``every`` items and once at the end."""
    reporter = _current.get()
    if reporter is None:
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    done = 0
    reporter(stage, 0, total)
    for item in items:
        yield item
        done += 1
        if done % every == 0:
            reporter(stage, done, total)
    reporter(stage, done, total if total is not None else done)


class TerminalProgress:
    """One tqdm bar per stage on ``stream``, each left on its own line when the next stage starts.
    tqdm draws nothing when ``stream`` is not a terminal (``disable=None``), so piped or logged
    output carries no bars."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.stage: str | None = None
        self.bar: tqdm | None = None

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(desc=stage, total=total, file=self.stream, disable=None, leave=True)
        bar = self.bar
        assert bar is not None
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar, self.stage = None, None


@contextmanager
def terminal_progress(stream: IO[str]) -> Iterator[None]:
    """Bars on ``stream`` for the work run inside, closed when it ends (or fails)."""
    bars = TerminalProgress(stream)
    try:
        with reporting(bars):
            yield
    finally:
        bars.close()

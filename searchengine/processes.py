"""Child processes that must not outlive their parent (indexing workers, server processes).

:func:`worker_pool` is the one way the product starts a pool of worker
processes (encoding vectors, analysing documents for a cluster):
forked, so they inherit what the parent has loaded (the analyzer, the
model), ignoring Ctrl-C (the parent stops them), and gone with the parent
even when it is killed. :func:`in_order` feeds such a pool with a bounded
number of tasks ahead and hands the results back in order.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

_T = TypeVar("_T")
_R = TypeVar("_R")


def exit_with_parent(parent: int) -> None:
    """Exit this (forked) process when ``parent`` is gone, e.g. killed by
    SIGKILL: a thread checks twice a second. Used by indexing workers and
    by the web's server processes."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _worker_started(parent: int) -> None:
    """A pool worker's start: Ctrl-C is the parent's to handle; exit with the parent."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent)


def worker_pool(processes: int) -> Pool:
    """A pool of ``processes`` forked worker processes (at least one) that
    ignore Ctrl-C and exit when this process does. End it with
    ``terminate()`` and ``join()``.

    Forked, not spawned: a spawned process would run the caller's main
    module again, and would load the analyzer or the model again.
    """
    import multiprocessing

    return multiprocessing.get_context("fork").Pool(
        max(1, processes), initializer=_worker_started, initargs=(os.getpid(),)
    )


class WorkerDied(RuntimeError):
    """A worker process of a pool died (killed, out of memory) with a task unanswered."""


def in_order(pool: Pool, task: Callable[[_T], _R], items: Iterable[_T], ahead: int) -> Iterator[tuple[_T, _R]]:
    """``(item, task(item))`` of each of ``items``, run by ``pool``'s processes, in the
    order of ``items``, with at most ``ahead`` tasks given out and not yet
    taken back (so the input is read only that far ahead: memory stays
    bounded whatever its size, unlike ``Pool.imap``, which reads it all).

    Raises:
        WorkerDied: a worker died (its task would never be answered).
        Exception: whatever ``task`` raised, in this process.
    """
    from multiprocessing import TimeoutError as NotYet

    workers = {process.pid for process in getattr(pool, "_pool", ())}
    pending: deque = deque()

    def result():
        item, waiting = pending.popleft()
        while True:
            try:
                return item, waiting.get(timeout=1.0)
            except NotYet:
                # The pool replaces a dead worker with a new one, and the dead one's task is lost.
                if workers and {process.pid for process in getattr(pool, "_pool", ())} != workers:
                    raise WorkerDied("a worker process died") from None

    for item in items:
        pending.append((item, pool.apply_async(task, (item,))))
        if len(pending) >= max(1, ahead):
            yield result()
    while pending:
        yield result()

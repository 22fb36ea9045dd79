"""Serving the web app: one waitress process, or a supervisor of several sharing one port.

The port is bound at once (so a port in use is reported before anything
loads) but listened on only when a server is ready, i.e. the index is open,
its columns mapped, the analyzer loaded and the postings of frequent words
read (:meth:`searchengine.search.SearchIndex.warm_up`). Until then a client's
connection is refused rather than left hanging; the log says "Loading ...",
then "Serving ... ready in N s".
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Collection
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

from searchengine.errors import SearchEngineError
from searchengine.limits import DEFAULT_TIME_BUDGET
from searchengine.processes import exit_with_parent
from searchengine.web import create_app

if TYPE_CHECKING:
    from searchengine.search import SearchIndex
    from searchengine.web.guard import ServeLimits


def _say(message: str) -> None:
    """One line for the operator, on standard error."""
    print(message, file=sys.stderr, flush=True)


def serve(
    index: SearchIndex,
    index_dir: Path | str,
    *,
    host: str,
    port: int,
    threads: int,
    workers: int,
    debug: bool,
    limits: ServeLimits | None = None,
) -> None:
    """Serve ``index`` (open at ``index_dir``, a folder or a cluster URL) on
    ``host:port`` until Ctrl-C or SIGTERM. Messages name the index without credentials.

    With ``workers`` above 1, :func:`serve_processes` serves from that many
    processes; ``debug`` runs Flask's development server (never expose it).
    ``limits``: rate limits, the cap on expensive requests and the trusted
    proxies (:mod:`searchengine.web.guard`; default :class:`ServeLimits`'s).
    Each search may take ``index.time_budget`` seconds.

    Raises:
        SearchEngineError: a server process failed at its start.
        OSError: the address cannot be bound (e.g. the port is in use).
    """
    if limits is None:
        from searchengine.web.guard import ServeLimits

        limits = ServeLimits()
    if workers > 1 and not debug:
        # Each worker opens its own; files held here would be inherited by
        # every worker and keep the first generation on disk after rebuilds.
        index.close()
        serve_processes(index_dir, index.engine.location, host, port, threads, workers, limits, index.time_budget)
        return
    if debug:
        index.warm_up()
        create_app(index=index, limits=limits).run(host=host, port=port, debug=True)
        return
    import waitress

    # Bound now (a port in use fails at once), listened on only when ready:
    # until then a client's connection is refused, never left waiting.
    sock = _bind(host, port)
    port = sock.getsockname()[1]
    _say(f"Loading {index.engine.location}; port {port} accepts connections once the index is ready")
    started = time.monotonic()
    index.warm_up()
    server = waitress.create_server(create_app(index=index, limits=limits), sockets=[sock], **waitress_options(threads))
    _say(
        f"Serving {index.engine.location} on http://{_shown_host(host)}:{port}/, ready in "
        f"{time.monotonic() - started:.1f} s (Ctrl-C to stop)"
    )
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def _bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and not yet listening (waitress listens on it).

    Raises:
        OSError: the address cannot be bound (e.g. the port is in use).
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _shown_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# A server process that fails by itself sooner than this after its start is
# not restarted: it would fail again (e.g. an index it cannot open).
SERVER_PROCESS_MIN_SECONDS = 10.0
# Seconds a server process has to finish after SIGTERM before it is killed.
STOP_GRACE_SECONDS = 5.0


def serve_processes(
    index_dir: Path | str,
    shown: str,
    host: str,
    port: int,
    threads: int,
    workers: int,
    limits: ServeLimits | None = None,
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> None:
    """Serve with ``workers`` waitress processes of ``threads`` threads each,
    sharing one listening socket (each applying ``limits`` on its own, each
    search taking ``time_budget`` seconds at most).

    Searching is CPU-bound Python, so one process uses one core at most;
    several processes use several. Waitress reads each request whole before
    a thread takes it, so clients that send slowly or never finish a request
    hold no thread. This process binds the socket, forks the servers (each
    opens the index itself and follows rebuilds like a single server does),
    starts again one that dies, and stops them all on Ctrl-C or SIGTERM.
    Server processes exit on their own when this one is killed. The requests
    a process that died had not finished are answered 503 with
    ``Retry-After`` by this one (:mod:`searchengine.web.inflight`).
    """
    sock = _bind(host, port)  # a port in use is a one-line error before any process starts
    port = sock.getsockname()[1]
    from searchengine.web.counters import share_between_processes

    share_between_processes()  # one rate-limit count per client, whichever process answers it
    from searchengine.web.inflight import Supervision

    supervision = Supervision()  # what each server process has not answered yet
    parent = os.getpid()
    started: dict[int, float] = {}
    slots: dict[int, int] = {}  # server process -> its place in shares
    shares = ConnectionShares(workers)
    # Each server process writes a byte here once it listens; the first one
    # makes the service ready. The socket listens from that moment only.
    ready_read, ready_write = os.pipe()
    began = time.monotonic()

    def announce() -> None:
        with os.fdopen(ready_read, "rb", buffering=0) as pipe:
            if pipe.read(1):
                _say(
                    f"Serving {shown} on http://{_shown_host(host)}:{port}/ with {workers} processes, ready in "
                    f"{time.monotonic() - began:.1f} s (Ctrl-C to stop)"
                )
            ready = 1
            while pipe.read(1):  # the other first starts, then restarts
                ready += 1
                if ready == workers:  # until then the ready ones take every connection
                    _say(f"All {workers} server processes ready in {time.monotonic() - began:.1f} s")

    def start(slot: int) -> None:
        # SIGTERM is held back across the fork: one that reached the child
        # before it reset the parent's handler would be lost, and the child
        # would serve on after the parent stopped.
        shares.release(slot)
        mine, theirs = supervision.pair()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        with supervision.lock:  # no connection received from another process while forking
            pid = os.fork()
        if pid:
            theirs.close()
            supervision.watch(pid, mine)
            started[pid] = time.monotonic()
            slots[pid] = slot
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            return
        code = 1
        try:
            mine.close()
            supervision.forget_in_child()
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the servers
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            exit_with_parent(parent)
            _serve_socket(index_dir, sock, threads, ready_write, shares, slot, limits, time_budget, theirs)
            code = 0
        except BaseException as exc:  # noqa: BLE001 (a forked child must never return)
            _say(f"Error: server process {os.getpid()}: {exc}")
        finally:
            os._exit(code)

    def terminate(signum: int, frame: FrameType | None) -> NoReturn:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    _say(f"Loading {shown} into {workers} server processes; port {port} accepts connections once one is ready")
    threading.Thread(target=announce, name="ready", daemon=True).start()
    threading.Thread(target=supervision.run, name="in-flight", daemon=True).start()
    try:
        for slot in range(workers):
            start(slot)
        while True:
            pid, status = os.wait()
            # (not ``began``: announce() reads that one from its thread)
            child_began = started.pop(pid, None)
            if child_began is None:
                continue
            slot = slots.pop(pid)
            answered = supervision.died(pid)
            early = time.monotonic() - child_began < SERVER_PROCESS_MIN_SECONDS
            if early and not os.WIFSIGNALED(status):
                raise SearchEngineError("a server process failed at start; stopping")
            how = f"was killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "exited"
            unfinished = f"; 503 sent on the {answered} connections it held" if answered else ""
            _say(f"server process {pid} {how}{unfinished}; starting another")
            if early:
                time.sleep(1)  # no tight loop of restarts
            start(slot)
    except KeyboardInterrupt:
        pass
    finally:
        for name in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C must not cut the stop short
            signal.signal(name, signal.SIG_IGN)
        supervision.stop()
        _stop(started)
        sock.close()


def _stop(pids: Collection[int], grace: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM to each of ``pids`` (children of this process), then SIGKILL to
    any still running ``grace`` seconds later; returns once all are reaped."""
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = set(pids)
    while left:
        for pid in list(left):
            if os.waitpid(pid, os.WNOHANG)[0]:
                left.discard(pid)
        if left and time.monotonic() > deadline:
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            for pid in left:
                os.waitpid(pid, 0)
            return
        time.sleep(0.02)


def _serve_socket(
    index_dir: Path | str,
    sock: socket.socket,
    threads: int,
    ready: int,
    shares: ConnectionShares,
    slot: int,
    limits: ServeLimits | None,
    time_budget: float,
    supervisor: socket.socket | None = None,
) -> None:
    """One server process: the index, warmed, behind waitress on the shared ``sock``
    (accepting in turn with the others: ``shares``, its place ``slot``); a
    byte written to the pipe ``ready`` once it listens; each request it queues
    and finishes told to the ``supervisor`` (:mod:`searchengine.web.inflight`)."""
    import waitress

    from searchengine.search import SearchIndex

    # Opened at the first request when it cannot be now: a process started
    # again while the index is damaged or being replaced answers 503 until
    # it can be read, instead of stopping the service.
    index = SearchIndex(index_dir, lazy=True, time_budget=time_budget)
    try:
        index.warm_up()
    except SearchEngineError as exc:
        _say(f"server process {os.getpid()}: {exc}; answering 503 until the index can be read")
    server = waitress.create_server(create_app(index=index, limits=limits), sockets=[sock], **waitress_options(threads))
    shares.balance(server, slot)
    if supervisor is not None:
        from searchengine.web.inflight import report_requests

        report_requests(server, supervisor)
    os.write(ready, b"1")
    server.run()


class ConnectionShares:
    """The open connections of each server process, in memory the processes
    share, so that a new connection goes to one of those with the fewest.

    The processes accept from one socket, and whichever wakes first takes a
    connection; a client keeps its connection for all its requests, so a
    process that took more clients at the start served them in turn while
    another stood idle (8 clients over 2 processes: one process did 3 times
    the other's work in a measured run, and the slowest requests waited for
    it). With :meth:`balance`, a process that has more connections than
    another waits :data:`ACCEPT_DELAY` before it accepts, so that one with
    fewer takes the connection first; every process keeps accepting, so a
    connection is never left waiting for a busy or stopped one.

    A place holds ``UNREADY`` until its process serves (loading, or started
    again after a crash), which keeps it out of the count.
    """

    UNREADY = 2**31 - 1
    ACCEPT_DELAY = 0.02

    def __init__(self, workers: int) -> None:
        import mmap

        self._memory = mmap.mmap(-1, 4 * workers)  # anonymous and shared: forked processes see one copy
        self.counts = memoryview(self._memory).cast("i")
        for slot in range(workers):
            self.release(slot)

    def release(self, slot: int) -> None:
        """Take place ``slot`` out of the count (its process is not serving)."""
        self.counts[slot] = self.UNREADY

    def balance(self, server: Any, slot: int) -> None:
        """Make waitress ``server`` (a ``TcpWSGIServer``) note its open
        connections in place ``slot``, and accept later than a process with fewer."""
        readable, accept = server.readable, server.handle_accept
        counts = self.counts

        def noted() -> bool:  # asked by waitress's loop before each poll
            counts[slot] = len(server.active_channels)
            return readable()

        def handle_accept() -> None:
            counts[slot] = mine = len(server.active_channels)
            if mine > min(counts):
                time.sleep(self.ACCEPT_DELAY)
            accept()  # none left (another took it): waitress returns
            counts[slot] = len(server.active_channels)

        server.readable, server.handle_accept = noted, handle_accept


def waitress_options(threads: int) -> dict[str, Any]:
    """Waitress settings of every server process.

    Open connections wait for free threads in waitress's event loop, so
    the cap on them is high (``poll``, not ``select``, lifts the 1,024-file
    limit), and a connection that sends nothing for 30 s is closed: idle or
    stalled clients cannot hold the server.
    """
    return {
        "threads": threads,
        "ident": "searchengine",
        "connection_limit": 1000,
        "channel_timeout": 30,
        "asyncore_use_poll": True,
    }

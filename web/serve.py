"""Serving the web app: one waitress process, or a supervisor of several sharing one port."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from pathlib import Path

from searchengine.errors import SearchEngineError
from searchengine.processes import exit_with_parent
from web.app import create_app


def _say(message: str) -> None:
    """One line for the operator, on standard error."""
    print(message, file=sys.stderr, flush=True)


def serve(index, index_dir: Path | str, *, host: str, port: int, threads: int, workers: int, debug: bool) -> None:
    """Serve ``index`` (open at ``index_dir``, a folder or a cluster URL) on
    ``host:port`` until Ctrl-C or SIGTERM. Messages name the index without credentials.

    With ``workers`` above 1, :func:`serve_processes` serves from that many
    processes; ``debug`` runs Flask's development server (never expose it).

    Raises:
        SearchEngineError: a server process failed at its start.
        OSError: the address cannot be bound (e.g. the port is in use).
    """
    if workers > 1 and not debug:
        # Each worker opens its own; files held here would be inherited by
        # every worker and keep the first generation on disk after rebuilds.
        index.close()
        serve_processes(index_dir, index.engine.location, host, port, threads, workers)
        return
    index.warm_up()
    app = create_app(index=index)
    if debug:
        app.run(host=host, port=port, debug=True)
        return
    import waitress

    server = waitress.create_server(app, host=host, port=port, **waitress_options(threads))
    _say(f"Serving {index.engine.location} on http://{server.effective_host}:{server.effective_port}/ (Ctrl-C to stop)")
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


# A server process that fails by itself sooner than this after its start is
# not restarted: it would fail again (e.g. an index it cannot open).
SERVER_PROCESS_MIN_SECONDS = 10.0


def serve_processes(index_dir: Path | str, shown: str, host: str, port: int, threads: int, workers: int) -> None:
    """Serve with ``workers`` waitress processes of ``threads`` threads each,
    sharing one listening socket.

    Searching is CPU-bound Python, so one process uses one core at most;
    several processes use several. Waitress reads each request whole before
    a thread takes it, so clients that send slowly or never finish a request
    hold no thread. This process binds the socket, forks the servers (each
    opens the index itself and follows rebuilds like a single server does),
    starts again one that dies, and stops them all on Ctrl-C or SIGTERM.
    Server processes exit on their own when this one is killed.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # a port in use is a one-line error before any process starts
    sock.listen(1024)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    parent = os.getpid()
    started: dict[int, float] = {}

    def start() -> None:
        pid = os.fork()
        if pid:
            started[pid] = time.monotonic()
            return
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the servers
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            exit_with_parent(parent)
            _serve_socket(index_dir, sock, threads)
            code = 0
        except BaseException as exc:  # noqa: BLE001 (a forked child must never return)
            _say(f"Error: server process {os.getpid()}: {exc}")
        finally:
            os._exit(code)

    def terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    _say(f"Serving {shown} on http://{host}:{port}/ with {workers} processes (Ctrl-C to stop)")
    try:
        for _ in range(workers):
            start()
        while True:
            pid, status = os.wait()
            began = started.pop(pid, None)
            if began is None:
                continue
            early = time.monotonic() - began < SERVER_PROCESS_MIN_SECONDS
            if early and not os.WIFSIGNALED(status):
                raise SearchEngineError("a server process failed at start; stopping")
            how = f"was killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "exited"
            _say(f"server process {pid} {how}; starting another")
            if early:
                time.sleep(1)  # no tight loop of restarts
            start()
    except KeyboardInterrupt:
        pass
    finally:
        for pid in started:
            os.kill(pid, signal.SIGTERM)
        for pid in started:
            os.waitpid(pid, 0)
        sock.close()


def _serve_socket(index_dir: Path | str, sock, threads: int) -> None:
    """One server process: the index, warmed, behind waitress on the shared ``sock``."""
    import waitress

    from searchengine.search import open_index

    index = open_index(index_dir)
    index.warm_up()
    waitress.create_server(create_app(index=index), sockets=[sock], **waitress_options(threads)).run()


def waitress_options(threads: int) -> dict:
    """Waitress settings of every server process.

    Open connections wait for free threads in waitress's event loop, so
    the cap on them is high (``poll``, not ``select``, lifts the 1,024-file
    limit), and a connection that sends nothing for 30 s is closed: idle or
    stalled clients cannot hold the server.
    """
    return {"threads": threads, "ident": "searchengine", "connection_limit": 1000,
            "channel_timeout": 30, "asyncore_use_poll": True}

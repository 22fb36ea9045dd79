"""No request lost with its server process: the supervisor answers for a process that died.

A server process can die in the middle of a request: a read of a
memory-mapped index file that was cut under it (a full disk, a stray
``truncate``) raises SIGBUS, which no Python code can catch. The
connections the process held would then be closed by the kernel, and their
clients would see a reset instead of an answer.

So each server process tells the supervisor, over a Unix socket pair made
at its start, of every connection it takes (with a duplicate of its file
descriptor, passed as ``SCM_RIGHTS``), of every request it queues (whether
it is the API's) and of every connection it closes. The supervisor's
duplicate keeps such a connection open when the process dies; it then
answers on each connection the process still held with ``503`` and
``Retry-After: 1`` (JSON when its last request was the API's, a short page
otherwise) and closes it: a request the process was serving, one it was
still reading and one sent on a connection it had answered before are all
answered. Connections the dead process had not yet taken wait in the shared
listening socket's queue and are answered by the other processes and by the
one started in its place.

Each connection costs the server process two ``sendmsg`` calls (a few
microseconds) and one per request; the supervisor's thread one ``recvmsg``
per message.
"""

from __future__ import annotations

import array
import itertools
import json
import os
import select
import socket
import struct
import threading
from typing import Any

_OPENED, _QUEUED, _CLOSED = b"O", b"Q", b"C"
_KEY = struct.Struct("=Q")
_API = b"A"
#: Seconds the client of a request whose process died is told to wait.
RETRY_AFTER = 1
_MESSAGE = "the server process answering this request stopped; try again"


def _answer(api: bool) -> bytes:
    """The whole HTTP response the supervisor sends for a request whose process died."""
    if api:
        body = json.dumps({"error": _MESSAGE}).encode()
        kind = "application/json"
    else:
        body = (
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Error 503</title></head>'
            f"<body><h1>Error 503</h1><p>{_MESSAGE}.</p></body></html>\n"
        ).encode()
        kind = "text/html; charset=utf-8"
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        f"Content-Type: {kind}\r\nContent-Length: {len(body)}\r\nRetry-After: {RETRY_AFTER}\r\n"
        "Connection: close\r\nServer: searchengine\r\n\r\n"
    )
    return head.encode() + body


class Supervision:
    """The supervisor's side: a socket pair per server process, and the
    connections each process holds (duplicates of their descriptors).
    :meth:`run` reads the processes' messages in a thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._ends: dict[int, socket.socket] = {}  # server process -> the supervisor's end
        # server process -> connection key -> [connection fd, was its last request the API's]
        self._open: dict[int, dict[int, list[Any]]] = {}
        self._stopped = False
        self._answered: dict[int, int] = {}  # dead server process -> its connections answered here

    @staticmethod
    def pair() -> tuple[socket.socket, socket.socket]:
        """A new ``(supervisor's end, server process's end)``, made before the fork."""
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def watch(self, pid: int, end: socket.socket) -> None:
        """Follow the server process ``pid`` through the supervisor's ``end`` of its pair."""
        end.setblocking(False)
        with self.lock:
            self._ends[pid] = end
            self._open[pid] = {}

    def forget_in_child(self) -> None:
        """In a newly forked server process: close the supervisor's ends and
        the connections it keeps (they are other processes' clients)."""
        for end in self._ends.values():
            end.close()
        for connections in self._open.values():
            for fd, _ in connections.values():
                os.close(fd)
        self._ends.clear()
        self._open.clear()

    def run(self) -> None:
        """Read every process's messages until :meth:`stop` (the thread's body)."""
        while not self._stopped:
            with self.lock:
                ends = dict(self._ends)
            if not ends:
                threading.Event().wait(0.05)
                continue
            try:
                ready, _, _ = select.select(list(ends.values()), [], [], 0.1)
            except (OSError, ValueError):  # an end closed meanwhile
                continue
            dead = []
            with self.lock:
                for pid, end in ends.items():
                    if end in ready and self._ends.get(pid) is end and self._drain(pid):
                        dead.append(pid)
            for pid in dead:  # its end closed: it died (or is stopping); at once, not when it is reaped
                self.died(pid, reaped=False)

    def stop(self) -> None:
        self._stopped = True

    def _drain(self, pid: int) -> bool:
        """Read the messages waiting from ``pid`` (the lock held); whether its end is closed."""
        end, connections = self._ends[pid], self._open[pid]
        fds = array.array("i")
        while True:
            try:
                data, ancillary, _, _ = end.recvmsg(64, socket.CMSG_SPACE(fds.itemsize))
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:
                return True
            if not data:
                return True
            received = [
                fd
                for level, kind, payload in ancillary
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
                for fd in array.array("i", payload[: len(payload) - len(payload) % fds.itemsize])
            ]
            key = _KEY.unpack_from(data, 1)[0]
            kind = data[:1]
            if kind == _OPENED and received:
                old = connections.pop(key, None)
                if old is not None:
                    os.close(old[0])
                connections[key] = [received.pop(), False]
            elif kind == _QUEUED and key in connections:
                connections[key][1] = data[1 + _KEY.size :] == _API
            elif kind == _CLOSED and key in connections:
                os.close(connections.pop(key)[0])
            for fd in received:
                os.close(fd)

    def died(self, pid: int, *, reaped: bool = True) -> int:
        """Answer on every connection the dead process ``pid`` held (503,
        ``Retry-After``) and close them; returns how many were, by this call
        or by the reader thread before the process was ``reaped``."""
        with self.lock:
            if pid not in self._ends:
                return self._answered.pop(pid, 0) if reaped else 0
            self._drain(pid)  # the messages it sent before it died
            end = self._ends.pop(pid)
            connections = self._open.pop(pid, {})
            if not reaped:  # told when it is reaped
                self._answered[pid] = len(connections)
        end.close()
        for fd, api in connections.values():
            try:
                with socket.socket(fileno=fd) as connection:
                    connection.settimeout(2)
                    connection.sendall(_answer(api))
                    connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # the client left
        return len(connections)


def report_requests(server: Any, end: socket.socket) -> None:
    """Make waitress ``server`` (in a server process) tell the supervisor,
    through ``end``, of each connection it takes and closes and each request
    it queues."""
    keys = itertools.count(1)
    add_task = server.add_task
    channel_class = server.channel_class

    def send(message: bytes, fds: list[int]) -> None:
        try:
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
            end.sendmsg([message], ancillary)
        except OSError:
            pass  # the supervisor is gone: this process stops with it

    def queued(channel: Any) -> None:
        requests = list(channel.requests)
        path = str(requests[0].path) if requests else ""
        api = _API if path == "/api" or path.startswith("/api/") else b""
        if channel.searchengine_key is not None:
            send(_QUEUED + _KEY.pack(channel.searchengine_key) + api, [])
        add_task(channel)

    class Reported(channel_class):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.searchengine_key: int | None = next(keys)
            send(_OPENED + _KEY.pack(self.searchengine_key), [self.socket.fileno()])

        def del_channel(self, map: Any = None) -> None:  # noqa: A002 (waitress's name)
            # Every way waitress closes a channel goes through here.
            if getattr(self, "searchengine_key", None) is not None:
                send(_CLOSED + _KEY.pack(self.searchengine_key), [])
                self.searchengine_key = None
            super().del_channel(map)

    server.add_task = queued
    server.channel_class = Reported

"""The supervisor answers for a server process that died (searchengine.web.inflight),
with real loopback connections and the messages a server process sends."""

from __future__ import annotations

import socket

import pytest

from searchengine.web import inflight
from searchengine.web.inflight import Supervision


@pytest.fixture
def connection():
    """``(client, server side)``: a real TCP connection on loopback."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
    yield client, accepted
    client.close()
    accepted.close()


def send(end: socket.socket, kind: bytes, key: int, extra: bytes = b"", fds: list[int] | None = None) -> None:
    import array

    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    end.sendmsg([kind + inflight._KEY.pack(key) + extra], ancillary)


def read_all(client: socket.socket) -> bytes:
    client.settimeout(5)
    parts = []
    while chunk := client.recv(65536):
        parts.append(chunk)
    return b"".join(parts)


@pytest.mark.parametrize(
    ("api", "kind", "body"),
    [
        (True, "application/json", b'{"error": "the server process answering this request stopped; try again"}'),
        (False, "text/html; charset=utf-8", b"<h1>Error 503</h1><p>the server process answering this request stopped"),
    ],
)
def test_a_connection_of_a_dead_process_is_answered_503(connection, api, kind, body):
    client, accepted = connection
    supervision = Supervision()
    mine, theirs = supervision.pair()
    supervision.watch(4242, mine)
    send(theirs, inflight._OPENED, 1, fds=[accepted.fileno()])
    send(theirs, inflight._QUEUED, 1, inflight._API if api else b"")
    client.sendall(b"GET /api/search?q=gpu HTTP/1.1\r\nHost: x\r\n\r\n")
    accepted.close()  # the process dies: its descriptors close, its end too
    theirs.close()
    assert supervision.died(4242) == 1
    answer = read_all(client)
    head, _, text = answer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 503 Service Unavailable"
    assert {"Retry-After: 1", "Connection: close", f"Content-Type: {kind}", f"Content-Length: {len(text)}"} <= set(
        lines
    )
    assert body in text
    assert supervision.died(4242) == 0  # answered once (by the call that reaped it)


def test_a_closed_connection_is_let_go_and_the_reader_thread_answers_at_once(connection):
    import threading

    client, accepted = connection
    supervision = Supervision()
    mine, theirs = supervision.pair()
    supervision.watch(7, mine)
    reader = threading.Thread(target=supervision.run, daemon=True)
    reader.start()
    try:
        send(theirs, inflight._OPENED, 1, fds=[accepted.fileno()])
        send(theirs, inflight._CLOSED, 1)
        with socket.create_server(("127.0.0.1", 0)) as listener:  # a second connection, still open at the death
            other = socket.create_connection(listener.getsockname())
            other_accepted, _ = listener.accept()
        send(theirs, inflight._OPENED, 2, fds=[other_accepted.fileno()])
        accepted.close()
        other_accepted.close()
        theirs.close()  # the process died: the reader thread sees its end close
        assert read_all(client) == b""  # the closed one: let go, nothing sent
        assert read_all(other).startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert supervision.died(7) == 1  # reaped later: the reader had answered
        other.close()
    finally:
        supervision.stop()
        reader.join(5)

"""Hostile answers of the test API server: what a broken or malicious server may send.

Each is a :class:`~tests.apiserver.faults.Fault` mode: a list body far larger than any real one
(``body_bytes``, chunked or with a Content-Length), an endless log (``log_bytes``), a body
dripped one byte at a time (``drip``), the status line and headers dripped too (``drip_head``),
a continue token that never changes (``continue_token``). Bodies are generated as they are sent, never held whole.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

PIECE = 64 * 1024


def huge_list(handler: Any, size: int, declare_length: bool) -> None:
    """``{"kind":"List","items":[],"padding":"xxxx…"}`` of ``size`` bytes."""
    head, tail = b'{"kind":"List","apiVersion":"v1","metadata":{},"items":[],"padding":"', b'"}'
    filler = max(0, size - len(head) - len(tail))
    handler.recorded.status = 200
    pieces = _pieces(head, filler, b"x", tail)
    _send(handler, "application/json", pieces, len(head) + filler + len(tail), declare_length)


def endless_log(handler: Any, size: int) -> None:
    """``size`` bytes of timestamped log lines, chunked."""
    line = b"2026-11-28T00:41:00.000000001Z I1128 00:41:00.000000 1 filler line of a hostile log\n"
    handler.recorded.status = 200
    _send(handler, "text/plain", _pieces(b"", size, line, b""), size, False)


def drip(handler: Any, raw: bytes, every: float) -> None:
    """Write ``raw`` one byte at a time, ``every`` seconds apart (headers already sent)."""
    for index in range(len(raw)):
        handler.wfile.write(raw[index : index + 1])
        handler.wfile.flush()
        time.sleep(every)


def drip_answer(handler: Any, every: float) -> None:
    """A whole answer (status line, headers, an empty list), one byte every ``every`` seconds."""
    body = b'{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}'
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    handler.recorded.status = 200
    drip(handler, head % len(body) + body, every)


def _pieces(head: bytes, count: int, unit: bytes, tail: bytes) -> Iterator[bytes]:
    yield head
    block = (unit * (PIECE // len(unit) + 1))[:PIECE]
    while count > 0:
        piece = block[: min(PIECE, count)]
        count -= len(piece)
        yield piece
    yield tail


def _send(
    handler: Any, content_type: str, pieces: Iterator[bytes], length: int, declare: bool
) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", content_type)
    if declare:
        handler.send_header("Content-Length", str(length))
    else:
        handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for piece in pieces:
        if piece:
            handler.wfile.write(piece if declare else b"%x\r\n%s\r\n" % (len(piece), piece))
    if not declare:
        handler.wfile.write(b"0\r\n\r\n")


class DripProxy:
    """A TCP proxy in front of the server that passes the server's bytes on one every ``every``
    seconds, from the TLS handshake on (the client's bytes go through at once)."""

    def __init__(self, port: int, every: float) -> None:
        self.target, self.every = port, every
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=_pump, args=(client, server, 0.0), daemon=True).start()
            threading.Thread(target=_pump, args=(server, client, self.every), daemon=True).start()

    def close(self) -> None:
        self.listener.close()


def _pump(source: socket.socket, sink: socket.socket, every: float) -> None:
    try:
        while data := source.recv(1 if every else PIECE):
            sink.sendall(data)
            time.sleep(every)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            end.close()

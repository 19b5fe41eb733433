"""Helpers for tests of ``serve --http``'s wire: raw sockets and h11 as the client's parser.

* :func:`raw` sends bytes on a fresh connection and returns what came back until the
  server closed it or went quiet.
* :func:`responses` parses those bytes as the HTTP responses to ``n`` requests (h11, the
  client's side), each a :class:`Reply` (status, headers, body; the informational ``100
  Continue`` skipped).
* :func:`post` / :func:`get` are one request each with ``http.client`` (keep-alive,
  chunked replies), returning a :class:`Reply`.
"""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from typing import Any

import h11


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[str]:
        """The ``data:`` lines of a server-sent event stream."""
        text = self.body.decode("utf-8")
        return [part[6:] for part in text.split("\n\n") if part.startswith("data: ")]


def raw(port: int, data: bytes, *, quiet_s: float = 5.0, half_close: bool = False) -> bytes:
    """Send ``data`` on a new connection; what came back before the server closed it or
    was quiet for ``quiet_s`` seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        try:
            s.sendall(data)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may close on a fatal request before all of it is sent
        return read_all(s, quiet_s)


def read_all(s: socket.socket, quiet_s: float) -> bytes:
    out = b""
    s.settimeout(quiet_s)
    while True:
        try:
            chunk = s.recv(65536)
        except (TimeoutError, ConnectionResetError):
            return out
        if not chunk:
            return out
        out += chunk


def responses(data: bytes, methods: list[str] | None = None) -> list[Reply]:
    """The responses in ``data``, parsed as a client would (h11); the request methods, when
    given, tell a HEAD's empty body from a cut one."""
    conn = h11.Connection(h11.CLIENT)
    conn.receive_data(data)
    conn.receive_data(b"")  # the connection ended: a body delimited by the close ends too
    out: list[Reply] = []
    for method in methods or ["GET"] * 1000:
        if conn.our_state is not h11.IDLE:
            break
        conn.send(h11.Request(method=method, target="/", headers=[("Host", "x")]))
        conn.send(h11.EndOfMessage())
        reply: Reply | None = None
        while True:
            try:
                ev = conn.next_event()
            except h11.RemoteProtocolError:
                if reply is None:  # the connection ended between two responses
                    return out
                raise  # a response cut off: the server's fault
            if ev is h11.NEED_DATA or isinstance(ev, h11.ConnectionClosed):
                return out
            if isinstance(ev, h11.Response):
                headers = {k.decode().lower(): v.decode("latin-1") for k, v in ev.headers}
                reply = Reply(ev.status_code, headers, b"")
            elif isinstance(ev, h11.Data) and reply is not None:
                reply.body += ev.data
            elif isinstance(ev, h11.EndOfMessage):
                assert reply is not None
                out.append(reply)
                break
        if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
            return out
        conn.start_next_cycle()
    return out


def request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> Reply:
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    c.request(method, path, body=data, headers=hdrs)
    r = c.getresponse()
    reply = Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    if conn is None:
        c.close()
    return reply


def post(port: int, path: str, body: Any, **kw: Any) -> Reply:
    return request(port, "POST", path, body, **kw)


def get(port: int, path: str, **kw: Any) -> Reply:
    return request(port, "GET", path, **kw)


def is_api_error(reply: Reply, status: int) -> bool:
    """``reply`` is an error with ``status`` in OpenAI's shape."""
    if reply.status != status:
        return False
    err = reply.json()["error"]
    return isinstance(err["message"], str) and isinstance(err["type"], str)

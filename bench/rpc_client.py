"""A small blocking JSON-RPC client for ``specedit serve`` (LSP framing over a socket).

Contract: :class:`RpcClient` connects to a Unix socket (:meth:`RpcClient.unix`) or to the
loopback TCP port (:meth:`RpcClient.tcp`), sends requests (:meth:`RpcClient.call` returns the
result or raises, :meth:`RpcClient.request` returns the whole response) and notifications,
and keeps the notifications it reads meanwhile in ``inbox`` (:meth:`wait_notification`).
Every read honours the socket's timeout. The server soak (``bench/server_bench.py``) and the
server tests use it; the editor plugins are the real clients.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any


class Closed(Exception):
    pass


class RpcClient:
    """Send requests/notifications and read messages; notifications are kept in ``inbox``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        self.next_id = 1
        self.inbox: list[dict[str, Any]] = []

    @classmethod
    def unix(cls, path: Path | str, timeout: float = 30.0) -> RpcClient:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(str(path))
        return cls(s)

    @classmethod
    def tcp(cls, port: int, timeout: float = 30.0) -> RpcClient:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        return cls(s)

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request_async(self, method: str, params: Any = None) -> int:
        mid = self.next_id
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": mid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return mid

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """The whole response object (with ``result`` or ``error``)."""
        mid = self.request_async(method, params)
        return self.wait_response(mid)

    def call(self, method: str, params: Any = None) -> Any:
        resp = self.request(method, params)
        if "error" in resp:
            raise AssertionError(f"{method} failed: {resp['error']}")
        return resp["result"]

    def wait_response(self, mid: Any) -> dict[str, Any]:
        while True:
            msg = self.read()
            if "method" in msg:
                self.inbox.append(msg)
            elif msg.get("id") == mid:
                return msg
            else:
                raise AssertionError(f"unexpected message {msg}")

    def read(self) -> Any:
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                n = int(head.split(b":", 1)[1])
                if len(rest) >= n:
                    self.buf = rest[n:]
                    return json.loads(rest[:n])
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("the server closed the connection")
            self.buf += chunk

    def wait_notification(
        self, method: str, pred: Any = None, timeout: float = 120.0
    ) -> dict[str, Any]:
        """The first notification ``method`` (matching ``pred(params)``), from inbox or wire."""
        deadline = time.monotonic() + timeout
        while True:
            for i, msg in enumerate(self.inbox):
                if msg.get("method") == method and (pred is None or pred(msg.get("params"))):
                    return self.inbox.pop(i)["params"]
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {timeout}s")
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            self.inbox.append(self.read())

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m["params"] for m in self.inbox if m.get("method") == method]

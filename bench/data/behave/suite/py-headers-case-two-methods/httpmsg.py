"""Build and parse the HTTP/1.1 messages the webhook relay sends and receives.

Deliberately small: the relay speaks to a handful of known endpoints over a plain
socket and needs nothing more than a request line, headers and a body.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

CRLF = "\r\n"


class Headers:
    """Header fields of one message, one value per name."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()):
        self._fields: dict[str, str] = {}
        for name, value in pairs:
            self.set(name, value)

    def set(self, name: str, value: str) -> None:
        """Set ``name`` to ``value``, replacing any earlier value."""
        if not name or any(c in name for c in " :\r\n"):
            raise ValueError(f"bad header name {name!r}")
        self._fields[name] = value.strip()

    def get(self, name: str, default: str | None = None) -> str | None:
        """The value of ``name``, or ``default``."""
        return self._fields.get(name, default)

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields.items())

    def __len__(self) -> int:
        return len(self._fields)

    def serialize(self) -> str:
        return "".join(f"{name}: {value}{CRLF}" for name, value in self._fields.items())


@dataclass
class Request:
    method: str
    target: str
    headers: Headers = field(default_factory=Headers)
    body: bytes = b""

    def to_bytes(self, host: str) -> bytes:
        self.headers.set("Host", host)
        if self.body:
            self.headers.set("Content-Length", str(len(self.body)))
        head = f"{self.method} {self.target} HTTP/1.1{CRLF}" + self.headers.serialize() + CRLF
        return head.encode("latin-1") + self.body


@dataclass
class Response:
    status: int
    reason: str
    headers: Headers
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def content_length(self) -> int | None:
        value = self.headers.get("Content-Length")
        return int(value) if value is not None else None


def parse_response(raw: bytes) -> Response:
    """One complete response (status line, headers, body) from ``raw``."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("incomplete response: no blank line after the headers")
    lines = head.decode("latin-1").split(CRLF)
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {lines[0]!r}")
    code, _, reason = rest.partition(" ")
    headers = Headers()
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"bad header line {line!r}")
        headers.set(name.strip(), value)
    resp = Response(int(code), reason, headers, body)
    n = resp.content_length()
    if n is not None and len(body) < n:
        raise ValueError(f"body is {len(body)} bytes, Content-Length says {n}")
    return resp

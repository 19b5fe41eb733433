"""A tiny parser for HTTP/1.1 style messages, used by the test proxy.

A message is a start line, header lines ``Name: value``, one empty line, then
the body.  Header names are case-insensitive; continuation lines (starting
with a space or a tab) are not supported by the proxy and are rejected.
"""

from dataclasses import dataclass, field


class MessageError(ValueError):
    """The message is not well formed."""


@dataclass
class Message:
    start_line: str
    headers: dict = field(default_factory=dict)
    body: str = ""

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    @property
    def content_length(self):
        value = self.header("content-length")
        return int(value) if value is not None else None


def split_start_line(line):
    """The three parts of a request or status line."""
    parts = line.split(" ", 2)
    if len(parts) != 3:
        raise MessageError(f"bad start line: {line!r}")
    return tuple(parts)


def parse_header_line(line):
    if line[:1] in (" ", "\t"):
        raise MessageError("continuation lines are not supported")
    name, sep, value = line.partition(":")
    if not sep or not name.strip():
        raise MessageError(f"bad header line: {line!r}")
    return name.strip().lower(), value.strip()


def parse_headers(lines):
    """The headers of a message from its header lines (after the start line).

    Repeated headers are joined with ', ' as RFC 9110 allows.
    """
    headers = {}
    for line in lines:
        line = line.rstrip("\r\n")
        if not line:
            continue
        name, value = parse_header_line(line)
        if name in headers:
            headers[name] = headers[name] + ", " + value
        else:
            headers[name] = value
    return headers


def parse_message(text):
    """A ``Message`` from the full text of a message."""
    head, sep, body = text.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    if not lines or not lines[0]:
        raise MessageError("empty message")
    return Message(lines[0], parse_headers(lines[1:]), body)


def format_message(msg):
    """The text of ``msg`` with CRLF line ends, headers in title case."""
    out = [msg.start_line]
    for name, value in msg.headers.items():
        out.append(f"{'-'.join(p.capitalize() for p in name.split('-'))}: {value}")
    out.append("")
    out.append(msg.body)
    return "\r\n".join(out)

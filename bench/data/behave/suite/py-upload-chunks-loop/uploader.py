"""Upload build artifacts to the artifact store in fixed-size parts.

The store accepts a file as numbered parts (``PUT /<key>/parts/<n>``) followed by a
``complete`` call carrying the SHA-256 of the whole file; the transport is injected so
that tests and the dry-run mode can record the calls instead of sending them.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)

PART_SIZE = 64 * 1024
MAX_PARTS = 10_000

Transport = Callable[[str, str, bytes], int]
"""``transport(method, url, body)`` -> HTTP status."""


class UploadError(RuntimeError):
    pass


@dataclass
class UploadResult:
    key: str
    parts: int
    size: int
    sha256: str


def iter_parts(f: BinaryIO, size: int = PART_SIZE) -> Iterator[bytes]:
    """Yield the content of ``f`` in pieces of at most ``size`` bytes, until end of file."""
    if size <= 0:
        raise ValueError("size must be positive")
    data = f.read(size)
    if data:
        yield data


def sha256_of(f: BinaryIO) -> str:
    h = hashlib.sha256()
    for part in iter_parts(f):
        h.update(part)
    return h.hexdigest()


def part_url(base: str, key: str, n: int) -> str:
    return f"{base.rstrip('/')}/{key}/parts/{n}"


def upload(f: BinaryIO, key: str, base: str, transport: Transport) -> UploadResult:
    """Send ``f`` as parts 1, 2, ... then complete it; raise UploadError on a bad status."""
    h = hashlib.sha256()
    n = size = 0
    for n, part in enumerate(iter_parts(f), start=1):
        if n > MAX_PARTS:
            raise UploadError(f"{key}: more than {MAX_PARTS} parts")
        status = transport("PUT", part_url(base, key, n), part)
        if status >= 300:
            raise UploadError(f"{key}: part {n} got HTTP {status}")
        h.update(part)
        size += len(part)
        log.debug("%s: part %d (%d bytes)", key, n, len(part))
    digest = h.hexdigest()
    status = transport("POST", f"{base.rstrip('/')}/{key}/complete", digest.encode())
    if status >= 300:
        raise UploadError(f"{key}: complete got HTTP {status}")
    return UploadResult(key, n, size, digest)


def upload_path(path: str | Path, base: str, transport: Transport, key: str | None = None) -> UploadResult:
    p = Path(path)
    with p.open("rb") as f:
        return upload(f, key or p.name, base, transport)


def dry_run_transport(calls: list[tuple[str, str, int]]) -> Transport:
    """A transport that records ``(method, url, len(body))`` and answers 200."""

    def send(method: str, url: str, body: bytes) -> int:
        calls.append((method, url, len(body)))
        return 200

    return send


if __name__ == "__main__":
    import sys

    calls: list[tuple[str, str, int]] = []
    for name in sys.argv[1:]:
        res = upload_path(name, "https://artifacts.invalid", dry_run_transport(calls))
        print(f"{res.key}: {res.parts} parts, {res.size} bytes, sha256 {res.sha256}")

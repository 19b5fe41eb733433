"""On-demand thumbnails for the gallery's uploaded images.

Originals are kept as binary PGM files (``P5``, 8-bit grey) under a storage folder.
Thumbnails are scaled down on first request with a box filter and kept in memory,
keyed by image name and edge size, so that a gallery page of forty images does not
decode forty originals each time it is shown.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
HEADER_RE = re.compile(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s")
SIZES = (64, 128, 256)


class ImageError(ValueError):
    """The bytes are not an 8-bit binary PGM image."""


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    pixels: bytes  # row-major, one byte per pixel

    def to_pgm(self) -> bytes:
        return b"P5\n%d %d\n255\n" % (self.width, self.height) + self.pixels


def parse_pgm(data: bytes) -> Image:
    """Decode a binary PGM with a maxval of 255 (header comments are not supported)."""
    m = HEADER_RE.match(data)
    if not m:
        raise ImageError("not a binary PGM")
    width, height, maxval = (int(g) for g in m.groups())
    if maxval != 255 or width <= 0 or height <= 0:
        raise ImageError(f"unsupported PGM: {width}x{height}, maxval {maxval}")
    pixels = data[m.end() : m.end() + width * height]
    if len(pixels) < width * height:
        raise ImageError("truncated pixel data")
    return Image(width, height, pixels)


def scale_down(img: Image, edge: int) -> Image:
    """Shrink ``img`` so that its longer side is at most ``edge``, averaging each box of
    source pixels; an image that is small enough already is returned as it is."""
    factor = -(-max(img.width, img.height) // edge)  # ceiling division
    if factor <= 1:
        return img
    w, h = -(-img.width // factor), -(-img.height // factor)
    out = bytearray(w * h)
    for ty in range(h):
        for tx in range(w):
            total = count = 0
            for y in range(ty * factor, min((ty + 1) * factor, img.height)):
                row = y * img.width
                for x in range(tx * factor, min((tx + 1) * factor, img.width)):
                    total += img.pixels[row + x]
                    count += 1
            out[ty * w + tx] = total // count
    return Image(w, h, bytes(out))


class ThumbnailStore:
    """Originals on disk under ``root``, thumbnails in memory."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._thumbs: dict[tuple[str, int], bytes] = {}
        self.hits = self.misses = 0

    def _path(self, name: str) -> Path:
        if not NAME_RE.match(name):
            raise ValueError(f"bad image name: {name!r}")
        return self.root / f"{name}.pgm"

    def _forget(self, name: str) -> None:
        """Drop every cached thumbnail of ``name``."""
        for key in [k for k in self._thumbs if k[0] == name]:
            del self._thumbs[key]

    def save(self, name: str, data: bytes) -> Image:
        """Store ``data`` (a PGM) as the original of ``name``, replacing any earlier one."""
        img = parse_pgm(data)
        path = self._path(name)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(img.to_pgm())
        tmp.replace(path)
        log.info("saved %s (%dx%d)", name, img.width, img.height)
        return img

    def delete(self, name: str) -> bool:
        path = self._path(name)
        self._forget(name)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        log.info("deleted %s", name)
        return True

    def thumbnail(self, name: str, edge: int = 128) -> bytes:
        """The PGM bytes of ``name`` scaled to fit in ``edge`` (one of ``SIZES``)."""
        if edge not in SIZES:
            raise ValueError(f"thumbnail size must be one of {SIZES}")
        key = (name, edge)
        cached = self._thumbs.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        try:
            data = self._path(name).read_bytes()
        except FileNotFoundError:
            raise KeyError(name) from None
        thumb = scale_down(parse_pgm(data), edge).to_pgm()
        self._thumbs[key] = thumb
        return thumb

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.pgm"))

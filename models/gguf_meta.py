"""Read a GGUF file's metadata (never its tensor data) and reject broken files early.

Contract: ``read_metadata(path)`` returns a ``GGUFInfo`` or raises ``ModelError`` naming the
path and the reason, for a missing file, a file that is not GGUF (bad magic), a file too
short for the tensor data its header declares (truncated download or copy), or any other
parse failure. It is meant to run before llama.cpp ever sees the file, so that those
failures surface as clear messages rather than crashes inside native code.

The header is scanned with ``struct`` over a memory map, using the ``gguf`` package's type
tables, skipping arrays (not ``gguf.GGUFReader``: ``docs/notes.md`` says why); tests
cross-check the result against ``GGUFReader``. Results are cached per process, keyed by
path, size and modification time.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType

from ..engine.backend import ModelError

__all__ = ["GGUFInfo", "read_metadata", "scan_header"]

logger = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
SUPPORTED_VERSIONS = (2, 3)

_SCALAR_FORMATS: dict[int, str] = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}


@dataclass(frozen=True)
class GGUFInfo:
    """The metadata specedit needs from a GGUF file."""

    path: Path
    architecture: str
    name: str
    context_length: int
    vocab_size: int
    chat_template: str | None
    bos_id: int | None
    eos_ids: tuple[int, ...]
    file_size: int
    tokenizer_model: str | None
    file_type: int | None = None
    """``general.file_type`` (llama.cpp's ``LlamaFileType``), None when the header has none."""

    @property
    def quantization(self) -> str | None:
        """The file type as llama.cpp names it (``Q4_K_M``, ``F16``), None when unknown."""
        if self.file_type is None:
            return None
        from gguf import LlamaFileType

        try:
            name = LlamaFileType(self.file_type).name
        except ValueError:
            return f"type {self.file_type}"
        return name.removeprefix("MOSTLY_").removeprefix("ALL_")


@dataclass(frozen=True)
class ArrayField:
    """An array metadata value, kept as element type and length only."""

    elem_type: int
    count: int


@dataclass(frozen=True)
class HeaderScan:
    """Everything in a GGUF header except array contents and tensor data."""

    version: int
    fields: dict[str, Any]  # scalars and strings as Python values, arrays as ArrayField
    n_tensors: int
    data_offset: int
    data_end: int  # largest tensor data end offset (absolute), data_offset if no tensors


class _Cursor:
    """Sequential little/big-endian reads from a buffer; struct.error means out of bounds."""

    def __init__(self, buf: Any, endian: str) -> None:
        self.buf = buf
        self.pos = 0
        self.e = endian

    def read(self, fmt: str) -> Any:
        value = struct.unpack_from(self.e + fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.read("Q")
        end = self.pos + n
        if end > len(self.buf):
            raise struct.error("string runs past the end of the file")
        raw = self.buf[self.pos : end]
        self.pos = end
        return bytes(raw).decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        unpack, pos, e = struct.unpack_from, self.pos, self.e + "Q"
        for _ in range(count):
            pos += 8 + unpack(e, self.buf, pos)[0]
        if pos > len(self.buf):
            raise struct.error("string array runs past the end of the file")
        self.pos = pos

    def value(self, vtype: int) -> Any:
        if vtype == GGUFValueType.STRING:
            return self.string()
        if vtype == GGUFValueType.ARRAY:
            elem, count = self.read("I"), self.read("Q")
            if elem == GGUFValueType.STRING:
                self.skip_strings(count)
            elif elem == GGUFValueType.ARRAY:
                for _ in range(count):
                    self.value(GGUFValueType.ARRAY)
            else:
                self.pos += count * struct.calcsize(_SCALAR_FORMATS[elem])
                if self.pos > len(self.buf):
                    raise struct.error("array runs past the end of the file")
            return ArrayField(elem, count)
        fmt = _SCALAR_FORMATS.get(vtype)
        if fmt is None:
            raise ValueError(f"unknown metadata value type {vtype}")
        return self.read(fmt)


def scan_header(buf: Any) -> HeaderScan:
    """Parse a GGUF header from a bytes-like buffer (usually an mmap of the whole file)."""
    if bytes(buf[:4]) != GGUF_MAGIC:
        raise ValueError("bad magic")
    cur = _Cursor(buf, "<")
    cur.pos = 4
    version = cur.read("I")
    if version & 0xFFFF == 0:  # written on a big-endian host
        cur.e = ">"
        version = struct.unpack_from(">I", buf, 4)[0]
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"unsupported GGUF version {version}")
    n_tensors, n_kv = cur.read("Q"), cur.read("Q")
    fields: dict[str, Any] = {}
    for _ in range(n_kv):
        key = cur.string()
        fields[key] = cur.value(cur.read("I"))
    tensors: list[tuple[int, int]] = []  # (relative offset, n_bytes)
    for _ in range(n_tensors):
        cur.string()
        n_dims = cur.read("I")
        n_elems = 1
        for _ in range(n_dims):
            n_elems *= cur.read("Q")
        qtype = GGMLQuantizationType(cur.read("I"))
        block, type_size = GGML_QUANT_SIZES[qtype]
        tensors.append((cur.read("Q"), n_elems * type_size // block))
    align = fields.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(align, int) or align <= 0 or align & (align - 1):
        raise ValueError(f"invalid general.alignment {align!r}")
    data_offset = -(-cur.pos // align) * align
    data_end = max((data_offset + off + n for off, n in tensors), default=data_offset)
    return HeaderScan(version, fields, n_tensors, data_offset, data_end)


def _check_header(path: Path) -> int:
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ModelError(f"{path}: not a regular file")
        with path.open("rb") as f:
            magic = f.read(4)
    except FileNotFoundError:
        raise ModelError(f"model file not found: {path}") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read model file ({exc.strerror or exc})") from exc
    if magic != GGUF_MAGIC:
        raise ModelError(f"{path}: not a GGUF file (bad magic {magic!r}, expected {GGUF_MAGIC!r})")
    return size


def read_metadata(path: str | Path) -> GGUFInfo:
    """Parse ``path``'s GGUF header and key/value metadata; see the module contract."""
    path = Path(path)
    file_size = _check_header(path)
    info = _read_cached(path.resolve(), file_size, path.stat().st_mtime_ns)
    return info if info.path == path else dataclasses.replace(info, path=path)


@functools.lru_cache(maxsize=16)
def _read_cached(path: Path, file_size: int, _mtime_ns: int) -> GGUFInfo:
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            scan = scan_header(mm)
    except (struct.error, ValueError, KeyError, OverflowError, OSError) as exc:
        raise ModelError(
            f"{path}: unreadable GGUF file, probably truncated or corrupt "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    if scan.data_end > file_size:
        raise ModelError(
            f"{path}: truncated GGUF file: tensor data ends at byte {scan.data_end} "
            f"but the file has {file_size} bytes"
        )
    return _info(scan.fields, path, file_size)


def _info(fields: dict[str, Any], path: Path, file_size: int) -> GGUFInfo:
    def text(key: str) -> str | None:
        value = fields.get(key)
        return value if isinstance(value, str) and value else None

    def integer(key: str) -> int | None:
        value = fields.get(key)
        return int(value) if isinstance(value, int) else None

    arch = text("general.architecture")
    if arch is None:
        raise ModelError(f"{path}: GGUF metadata lacks general.architecture")
    ctx = integer(f"{arch}.context_length")
    if ctx is None:
        raise ModelError(f"{path}: GGUF metadata lacks {arch}.context_length")
    vocab = integer(f"{arch}.vocab_size")
    tokens = fields.get("tokenizer.ggml.tokens")
    if vocab is None and isinstance(tokens, ArrayField):
        vocab = tokens.count
    if not vocab:
        raise ModelError(f"{path}: GGUF metadata has neither {arch}.vocab_size nor tokens")
    eos_ids: list[int] = []
    for key in ("eos_token_id", "eot_token_id", "eom_token_id"):
        value = integer(f"tokenizer.ggml.{key}")
        if value is not None and value not in eos_ids:
            eos_ids.append(value)
    info = GGUFInfo(
        path=path,
        architecture=arch,
        name=text("general.name") or path.stem,
        context_length=ctx,
        vocab_size=vocab,
        chat_template=text("tokenizer.chat_template"),
        bos_id=integer("tokenizer.ggml.bos_token_id"),
        eos_ids=tuple(eos_ids),
        file_size=file_size,
        tokenizer_model=text("tokenizer.ggml.model"),
        file_type=integer("general.file_type"),
    )
    logger.debug("read GGUF metadata: %s", info)
    return info

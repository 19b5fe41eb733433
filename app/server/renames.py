"""``refactor/rename``: a Python rename by rope's analysis (``app.code.refactor``) over the
socket, with no model call and no write.

Contract: :func:`rename_request` takes the raw params (``docs/protocol.md``: ``text`` or
an absolute ``path``, ``old``, ``new``, a 0-based ``line``, ``docs``) and returns
:meth:`Renamed.to_json <specedit.app.code.refactor.Renamed.to_json>` (the new text, its hunks,
0-based lines), plus ``baseSha256`` when the text was read from ``path``. Params that are
not the right types, and names that are not identifiers, raise ``RpcError`` -32602; a
rename the user can fix otherwise (not Python, does not parse, a name not found, taken or
naming several things, a file that cannot be read) raises -32803 with ``data: {kind}``.
It reads a file and runs rope: the server calls it in a worker thread.
"""

from __future__ import annotations

import logging
from typing import Any

from ..code.refactor import RenameError, is_python, rename_python
from ..store.files import FileError, read_source
from .params import parse_rename
from .rpc import INVALID_PARAMS, REQUEST_FAILED, RpcError

__all__ = ["rename_request"]

log = logging.getLogger(__name__)


def rename_request(params: Any) -> dict[str, Any]:
    p = parse_rename(params)
    text, base = p.text, None
    if text is None:
        assert p.path is not None  # parse_rename: a text, or a path to read
        try:
            src = read_source(p.path)
        except FileError as e:
            raise RpcError(REQUEST_FAILED, str(e), {"kind": "file"}) from None
        text, base = src.text, src.sha256
    if p.path is not None and not is_python(p.path, text):
        raise RpcError(
            REQUEST_FAILED,
            f"{p.path} is not a Python file: refactor/rename renames Python names "
            "(other languages: rewrite/start)",
            {"kind": "not_python"},
        )
    line = None if p.line is None else p.line + 1
    res = rename_python(text, p.old, p.new, line=line, docs=p.docs)
    if isinstance(res, RenameError):
        code = INVALID_PARAMS if res.kind == "bad_name" else REQUEST_FAILED
        raise RpcError(code, res.message, {"kind": res.kind})
    log.info("refactor/rename %s -> %s in %s: %d lines", p.old, p.new, p.path, len(res.hunks))
    out = res.to_json()
    if base is not None:
        out["baseSha256"] = base
    return out

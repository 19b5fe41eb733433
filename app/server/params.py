"""Validation of ``specedit serve`` request params: wrong params become JSON-RPC -32602.

Contract: :func:`parse_start`, :func:`parse_warm`, :func:`parse_apply`,
:func:`parse_answer` and :func:`parse_rename` take the raw ``params`` of ``rewrite/start`` /
``rewrite/warm`` / ``rewrite/apply`` / ``answer/start`` / ``refactor/rename`` and return
typed values, or raise
:class:`~specedit.app.server.rpc.RpcError` with code -32602 and a message naming the field.
A ``text`` is at most :data:`~specedit.app.store.files.MAX_SOURCE_BYTES` of UTF-8, as a file the
CLI reads is. These functions may take a while on a large text (tree-sitter): the server
calls them in a worker thread.
Ranges are 0-based ``[startLine, endLine)`` over lines split on ``"\\n"`` (as hunks are).
With ``options.expand == "node"`` the range grows to the enclosing tree-sitter node
(``app.code.syntax``) when the language is known from ``options.language`` or ``path``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

from ...engine.sampling import SamplingParams
from ..code.diff import split_lines
from ..options import ANSWER_STYLES, DRAFT_MODES, EDIT_MODES, RewriteOptions
from ..store.files import MAX_SOURCE_BYTES
from .rpc import INVALID_PARAMS, RpcError

MAX_INSTRUCTION = 20_000
_SHA = re.compile(r"[0-9a-f]{64}")


def _bad(msg: str) -> RpcError:
    return RpcError(INVALID_PARAMS, msg)


def _obj(params: Any, what: str) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise _bad(f"{what} takes an object of named params")
    return params


def _int(v: Any, name: str, lo: int, hi: int = 1 << 31) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _bad(f"{name} must be an integer in [{lo}, {hi}]")
    return v


def _num(v: Any, name: str, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise _bad(f"{name} must be a number")
    if not lo <= v <= hi:
        raise _bad(f"{name} must be in [{lo}, {hi}]")
    return float(v)


def _opt_str(p: dict[str, Any], key: str) -> str | None:
    v = p.get(key)
    if v is not None and not isinstance(v, str):
        raise _bad(f"{key} must be a string")
    return v


def _text(p: dict[str, Any], what: str) -> str:
    text = p.get("text")
    if not isinstance(text, str):
        raise _bad(f"text (the buffer's content) must be a {what}string")
    # a character is at most 4 bytes: only a long text needs encoding to be measured
    if (
        len(text) > MAX_SOURCE_BYTES // 4
        and len(text.encode("utf-8", "replace")) > MAX_SOURCE_BYTES
    ):
        raise _bad(f"text is over {MAX_SOURCE_BYTES:,} bytes, the largest file specedit takes")
    return text


def session_id(params: Any) -> str:
    p = _obj(params, "this method")
    sid = p.get("sessionId")
    if not isinstance(sid, str) or not sid:
        raise _bad("sessionId must be a non-empty string")
    return sid


@dataclass(frozen=True)
class StartParams:
    text: str
    path: str | None
    base_sha256: str | None
    opts: RewriteOptions
    range_json: dict[str, int] | None


def _options(raw: Any) -> tuple[dict[str, Any], str | None, str | None]:
    """Keyword arguments for RewriteOptions, the expand mode and the language override."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _bad("options must be an object")
    kw: dict[str, Any] = {}
    if raw.get("k") is not None:
        kw["k"] = _int(raw["k"], "options.k", 0, 64)
    if raw.get("maxTokens") is not None:
        kw["max_tokens"] = _int(raw["maxTokens"], "options.maxTokens", 1, 1 << 20)
    draft = raw.get("draft", "lookup")
    if draft not in DRAFT_MODES:
        raise _bad("options.draft must be one of " + ", ".join(f'"{m}"' for m in DRAFT_MODES))
    kw["draft"] = draft
    exact = raw.get("exact", False)
    if not isinstance(exact, bool):
        raise _bad("options.exact must be a boolean")
    kw["exact"] = exact
    edit = raw.get("edit", RewriteOptions().edit)
    if edit not in EDIT_MODES:
        raise _bad("options.edit must be " + ", ".join(f'"{m}"' for m in EDIT_MODES))
    kw["edit"] = edit
    verbatim = raw.get("verbatim", True)
    if not isinstance(verbatim, bool):
        raise _bad("options.verbatim must be a boolean")
    kw["verbatim"] = verbatim
    d = SamplingParams()  # the one set of sampling defaults
    temperature = _num(raw.get("temperature", d.temperature), "options.temperature", 0.0, 10.0)
    top_p = _num(raw.get("topP", d.top_p), "options.topP", 1e-6, 1.0)
    top_k = _int(raw.get("topK", d.top_k), "options.topK", 0, 1 << 20)
    seed = _int(raw.get("seed", d.seed), "options.seed", 0, (1 << 63) - 1)
    kw["sampling"] = SamplingParams(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
    expand = raw.get("expand")
    if expand not in (None, "none", "node"):
        raise _bad('options.expand must be "node" or "none"')
    lang = _opt_str(raw, "language")
    return kw, expand, lang


def _said(p: dict, key: str) -> str:
    """``p[key]``: what the user typed, a non-empty string of at most MAX_INSTRUCTION
    characters (an instruction, a question)."""
    v = p.get(key)
    if not isinstance(v, str) or not v.strip():
        raise _bad(f"{key} must be a non-empty string")
    if len(v) > MAX_INSTRUCTION:
        raise _bad(f"{key} is over {MAX_INSTRUCTION} characters")
    return v


def parse_start(params: Any) -> StartParams:
    p = _obj(params, "rewrite/start")
    text = _text(p, "")
    instruction = _said(p, "instruction")
    path = _opt_str(p, "path")
    if path is not None and ("\x00" in path or not path):
        raise _bad("path must be a non-empty string without NUL")
    sha = _opt_str(p, "baseSha256")
    if sha is not None and not _SHA.fullmatch(sha):
        raise _bad("baseSha256 must be 64 lowercase hex digits")
    kw, expand, lang = _options(p.get("options"))
    region = _region(p.get("range"), text, path, expand, lang)
    if not text.strip():
        raise _bad("text is empty; there is nothing to rewrite")
    opts = RewriteOptions(instruction=instruction, region=region, **kw)
    range_json = {"startLine": region[0], "endLine": region[1]} if region else None
    return StartParams(text, path, sha, opts, range_json)


def _region(rng: Any, text: str, path: str | None, expand, lang) -> tuple[int, int] | None:
    if rng is None:
        return None
    if not isinstance(rng, dict):
        raise _bad("range must be {startLine, endLine}")
    n = max(len(split_lines(text)), 1)
    a = _int(rng.get("startLine"), "range.startLine", 0, n - 1)
    b = _int(rng.get("endLine"), "range.endLine", a + 1, n)
    if expand == "node":
        a, b = _expand(text, path, lang, a, b)
    return a, b


def parse_warm(params: Any) -> tuple[str, str | None, tuple[int, int] | None]:
    """``rewrite/warm``: the buffer's text, path and range (after ``options.expand``), as
    ``rewrite/start`` would send them; its other options are checked, then not used."""
    p = _obj(params, "rewrite/warm")
    text = _text(p, "non-empty ")
    if not text.strip():
        raise _bad("text (the buffer's content) must be a non-empty string")
    path = _opt_str(p, "path")
    if path is not None and ("\x00" in path or not path):
        raise _bad("path must be a non-empty string without NUL")
    _, expand, lang = _options(p.get("options"))
    return text, path, _region(p.get("range"), text, path, expand, lang)


def _expand(text: str, path: str | None, lang: str | None, a: int, b: int) -> tuple[int, int]:
    from ..code import syntax

    lang = lang or (syntax.language_for_path(path) if path else None)
    if not lang:
        return a, b
    na, nb = syntax.enclosing_node_range(text, lang, a, b)
    n = max(len(split_lines(text)), 1)
    na, nb = max(0, min(na, a)), min(n, max(nb, b))
    return na, nb


@dataclass(frozen=True)
class ApplyParams:
    session_id: str
    path: str
    hunk_ids: list[int] | None
    force: bool = False
    """Apply a result flagged as suspect (it deletes lines the instruction did not ask to)."""


def parse_apply(params: Any) -> ApplyParams:
    p = _obj(params, "rewrite/apply")
    sid = session_id(p)
    path = p.get("path")
    if not isinstance(path, str) or "\x00" in path or not os.path.isabs(path):
        raise _bad("path must be an absolute file path")
    ids = p.get("hunkIds")
    if ids is not None:
        if not isinstance(ids, list):
            raise _bad("hunkIds must be an array of integers")
        ids = [_int(i, "hunkIds[]", 0) for i in ids]
    force = p.get("force", False)
    if not isinstance(force, bool):
        raise _bad("force must be a boolean")
    return ApplyParams(sid, path, ids, force)


MAX_CONTEXT_FILES = 64
"""Context files of one ``answer/start`` at most."""


@dataclass(frozen=True)
class AnswerParams:
    question: str
    files: list[tuple[str, str | None]]
    """``(path, text)``; a None text is read from the file at ``path`` (an absolute path)."""
    style: str
    opts: RewriteOptions


def parse_answer(params: Any) -> AnswerParams:
    """``answer/start``'s params (``docs/protocol.md``): each text at most
    :data:`~specedit.app.store.files.MAX_SOURCE_BYTES`, as ``rewrite/start``'s is."""
    p = _obj(params, "answer/start")
    question = _said(p, "question")
    raw = p.get("contextFiles")
    if not isinstance(raw, list) or not raw:
        raise _bad("contextFiles must be a non-empty array of {path, text?}")
    if len(raw) > MAX_CONTEXT_FILES:
        raise _bad(f"contextFiles has over {MAX_CONTEXT_FILES} files")
    files: list[tuple[str, str | None]] = []
    for i, f in enumerate(raw):
        what = f"contextFiles[{i}]"
        if not isinstance(f, dict):
            raise _bad(f"{what} must be an object {{path, text?}}")
        path = f.get("path")
        if not isinstance(path, str) or not path or "\x00" in path:
            raise _bad(f"{what}.path must be a non-empty string without NUL")
        if any(path == seen for seen, _ in files):
            raise _bad(f"{what}.path {path!r} is given twice")
        text = None
        if f.get("text") is not None:
            try:
                text = _text(f, "")
            except RpcError as e:
                raise _bad(f"{what}.{e.message}") from None
        elif not os.path.isabs(path):
            raise _bad(f"{what}: without a text, path must be an absolute file path to read")
        files.append((path, text))
    style = p.get("style", "quote")
    if style not in ANSWER_STYLES:
        raise _bad("style must be " + " or ".join(f'"{s}"' for s in ANSWER_STYLES))
    kw: dict[str, Any] = {}
    if p.get("maxTokens") is not None:
        kw["max_tokens"] = _int(p["maxTokens"], "maxTokens", 1, 1 << 20)
    verbatim = p.get("verbatim", True)
    if not isinstance(verbatim, bool):
        raise _bad("verbatim must be a boolean")
    return AnswerParams(question, files, style, RewriteOptions(verbatim=verbatim, **kw))


@dataclass(frozen=True)
class RenameParams:
    text: str | None
    """None: read the file at ``path`` (an absolute path)."""
    path: str | None
    old: str
    new: str
    line: int | None
    """0-based, as every line of the protocol."""
    docs: bool = False


def parse_rename(params: Any) -> RenameParams:
    """``refactor/rename``'s params (``docs/protocol.md``); whether ``old`` and ``new`` are
    identifiers is ``app.code.refactor``'s to say."""
    p = _obj(params, "refactor/rename")
    path = _opt_str(p, "path")
    if path is not None and ("\x00" in path or not path):
        raise _bad("path must be a non-empty string without NUL")
    text = _text(p, "") if p.get("text") is not None else None
    if text is None and (path is None or not os.path.isabs(path)):
        raise _bad("give text (the buffer's content), or a path: an absolute file path to read")
    names = [p.get("old"), p.get("new")]
    for key, v in zip(("old", "new"), names, strict=True):
        if not isinstance(v, str) or not v or len(v) > 1000:
            raise _bad(f"{key} must be a non-empty string: a name")
    line = None if p.get("line") is None else _int(p["line"], "line", 0)
    docs = p.get("docs", False)
    if not isinstance(docs, bool):
        raise _bad("docs must be a boolean")
    return RenameParams(text, path, names[0], names[1], line, docs)

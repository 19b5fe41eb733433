"""The command line's flags: the one parser (``build_parser``) and the ``LoadConfig`` its
flags ask for (``load_config``), shared by ``app.cli.main`` and ``app.cli.doctor`` (which reports
what each entry point loads with no options).

Contract: ``build_parser()`` returns the ``specedit`` parser with every subcommand; its
defaults come from ``LoadConfig``, ``RewriteOptions`` and ``SamplingParams`` (and
``$SPECEDIT_MODEL`` / ``$SPECEDIT_ENGINE`` for ``--model`` / ``--engine``); a bad value
(``--k -1``, ``--lines 5:2``, ``--draft x``) is argparse's one-line error.
``load_config(args)`` is the ``LoadConfig`` of parsed flags (``--draft model:X`` names
a draft model).
"""

from __future__ import annotations

import argparse
import os

from ...engine.sampling import SamplingParams
from ...models.catalog import CATALOG
from ..options import (
    ANSWER_STYLES,
    BACKENDS,
    DRAFT_MODES,
    EDIT_MODES,
    REVIEWS,
    LoadConfig,
    RewriteOptions,
    env_model,
)


def _k(v: str) -> int | None:
    if v == "auto":
        return None
    k = int(v)
    if k < 0:
        raise argparse.ArgumentTypeError("k must be >= 0 or 'auto'")
    return k


def _lines(v: str) -> tuple[int, int]:
    a, _, b = v.partition(":")
    try:
        start, end = int(a), int(b)
    except ValueError as e:
        raise argparse.ArgumentTypeError("--lines takes START:END (1-based, inclusive)") from e
    if start < 1 or end < start:
        raise argparse.ArgumentTypeError("--lines takes START:END with 1 <= START <= END")
    return start - 1, end


def _line(v: str) -> int:
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError("--line takes a line number (1-based)")
    return n


def _draft(v: str) -> str:
    if (v in DRAFT_MODES and v != "model") or (v.startswith("model:") and len(v) > 6):
        return v
    raise argparse.ArgumentTypeError("--draft takes lookup, suffix, none, auto or model:NAME|PATH")


def _gpu_layers(v: str) -> int | str:
    from ...models.llama_build import parse_gpu_layers

    try:
        return parse_gpu_layers(v)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_model(p: argparse.ArgumentParser, draft_model: bool = True) -> None:
    """The flags of ``LoadConfig``: which model, where it runs (defaults from LoadConfig)."""
    d = LoadConfig()
    g = p.add_argument_group("model")
    g.add_argument(
        "--model",
        default=env_model() or d.model,
        help="catalog name, GGUF path, or an Ollama/LM Studio/HF name: ollama:NAME:TAG, "
        f"lmstudio:PUB/MODEL, hf:ORG/REPO/FILE.gguf (default: $SPECEDIT_MODEL, else {d.model})",
    )
    if draft_model:
        g.add_argument(
            "--draft-model", default=None, metavar="NAME|PATH", help="a draft model (--draft auto)"
        )
    g.add_argument(
        "--backend",
        choices=BACKENDS,
        default=d.backend,
        help="auto: torch with the Triton verifier on a CUDA GPU, else llama.cpp",
    )
    g.add_argument(
        "--gpu-layers",
        type=_gpu_layers,
        default=d.gpu_layers,
        metavar="N|all|auto",
        help="llama.cpp layers offloaded to the GPU (auto: all when the build and a GPU allow)",
    )
    g.add_argument("--device", default=d.device, help="torch device (cuda, cuda:1, cpu)")
    g.add_argument(
        "--quant",
        choices=["int4", "int8", "none"],
        default=d.quant,
        help="torch weight quantization (default: the GGUF's)",
    )
    g.add_argument(
        "--ctx", dest="n_ctx", type=int, default=d.n_ctx, help="context length in tokens"
    )
    g.add_argument("--threads", type=int, default=d.threads)
    g.add_argument(
        "--engine",
        default=os.environ.get("SPECEDIT_ENGINE") or d.engine,
        metavar="openai:URL",
        help="run the model on an OpenAI-compatible server (openai:http://HOST:PORT/v1; "
        "openai-chat:URL for one that takes only chat messages; key from "
        "$SPECEDIT_ENGINE_KEY or $OPENAI_API_KEY); --model gives its tokenizer",
    )


def _add_decoding(p: argparse.ArgumentParser) -> None:
    _add_model(p)
    d, s = RewriteOptions(), SamplingParams()
    g = p.add_argument_group("decoding")
    g.add_argument(
        "--draft",
        type=_draft,
        default=d.draft,
        metavar="lookup|suffix|none|auto|model:NAME|PATH",
        help="proposer: prompt lookup, none, a draft model, or auto (lookup + --draft-model)",
    )
    g.add_argument("--k", type=_k, default=d.k, metavar="N|auto", help="draft length")
    g.add_argument("--temperature", type=float, default=s.temperature)
    g.add_argument("--top-p", type=float, default=s.top_p)
    g.add_argument("--top-k", type=int, default=s.top_k)
    g.add_argument("--seed", type=int, default=s.seed)
    g.add_argument("--max-tokens", type=int, default=d.max_tokens)
    g.add_argument("--exact", action="store_true", help="verify in bit-exact sub-blocks")
    g.add_argument(
        "--no-prompt-cache",
        action="store_true",
        help="do not keep the file prefix's KV state on disk for the next run",
    )
    g.add_argument("--json", action="store_true", help="print one JSON object")


def load_config(a: argparse.Namespace) -> LoadConfig:
    """The ``LoadConfig`` the parsed flags ask for (``--draft model:X`` names a draft model)."""
    draft = getattr(a, "draft", "") or ""
    return LoadConfig(
        model=a.model,
        backend=a.backend,
        device=a.device,
        gpu_layers=a.gpu_layers,
        quant=a.quant,
        n_ctx=a.n_ctx,
        threads=a.threads,
        draft_model=draft[6:] if draft.startswith("model:") else a.draft_model,
        engine=getattr(a, "engine", "") or "",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="specedit", description="Rewrite files with a local model, fast."
    )
    p.add_argument("--log-level", default="WARNING")
    sub = p.add_subparsers(dest="cmd")

    r = sub.add_parser("rewrite", help="rewrite a file and print the diff")
    r.add_argument("path")
    r.add_argument("-i", "--instruction", required=True)
    r.add_argument(
        "--context",
        nargs="*",
        default=[],
        dest="context_files",
        help="context files (draft sources)",
    )
    r.add_argument("--lines", type=_lines, default=None, help="only lines START:END")
    r.add_argument(
        "--edit",
        choices=EDIT_MODES,
        default=RewriteOptions().edit,
        help="how the model writes the change: only the lines that change (blocks), the "
        "whole file or region (whole), or auto: blocks, else whole (README: edit modes)",
    )
    r.add_argument(
        "--review",
        choices=REVIEWS,
        default=RewriteOptions().review,
        help="the model reviews a finished change (one yes/no question, no tokens "
        "written) and a 'no' past the model's measured threshold flags it: auto (models "
        "with a threshold; none has one yet), on (record the score), off",
    )
    r.add_argument(
        "--no-verbatim",
        action="store_true",
        help="let the blocks asked again, after blocks that could not be placed, have any "
        "text as their SEARCH sides (by default they can only copy lines of the file)",
    )
    r.add_argument("--write", action="store_true", help="apply the result (atomic, backed up)")
    r.add_argument(
        "--force",
        action="store_true",
        help="with --write: write a read-only or foreign file, or a result flagged as "
        "deleting lines it was not asked to",
    )
    _add_decoding(r)

    n = sub.add_parser(
        "rename",
        help="rename a Python name in one file with rope's analysis (no model)",
        description="Rename OLD to NEW in one Python file with rope's analysis, without a "
        "model: its definition and the uses rope resolves to it, nothing else (not "
        "os.environ.get when a method get is renamed). Only FILE is read or changed.",
    )
    n.add_argument("path", metavar="FILE")
    n.add_argument("old", metavar="OLD", help="the name to rename (defined in FILE)")
    n.add_argument("new", metavar="NEW", help="its new name")
    n.add_argument(
        "--line",
        type=_line,
        default=None,
        metavar="N",
        help="start from OLD on line N (1-based): needed when OLD names several things",
    )
    n.add_argument(
        "--docs", action="store_true", help="also rename in strings and comments (rope's docs)"
    )
    n.add_argument("--write", action="store_true", help="apply the result (atomic, backed up)")
    n.add_argument(
        "--force",
        action="store_true",
        help="with --write: write a read-only or foreign file, or a result with occurrences "
        "rope was unsure of",
    )
    n.add_argument("--json", action="store_true", help="print one JSON object")

    g = sub.add_parser(
        "generate", help="answer a question from context files, quoting them (quotes checked)"
    )
    g.add_argument("--context", nargs="+", required=True, dest="context_files")
    g.add_argument("-p", "--prompt", required=True)
    g.add_argument(
        "--style",
        choices=ANSWER_STYLES,
        default="quote",
        help="quote: the model's answer, then the passage it rests on, copied in from the "
        "files and checked (default); free: the model's answer alone",
    )
    g.add_argument(
        "--no-verbatim",
        action="store_true",
        help="let the model write what it likes inside a quote (by default a quoted passage "
        "can only be a copy of the file its citation names)",
    )
    g.add_argument(
        "--typed-quotes",
        action="store_true",
        help="ask for quotes and let the model choose and type its passages and quote more "
        "than one (by default the model answers in its own words and the program chooses the "
        "passage for the question and the answer and writes it, whole lines to its "
        "paragraph's end)",
    )
    _add_decoding(g)

    m = sub.add_parser("models", help="list, pull, locate or verify catalog models")
    ms = m.add_subparsers(dest="action", required=True)
    ms.add_parser("list", help="the catalog, and what Ollama, LM Studio and HF's cache hold")
    for action, text in (
        ("pull", "download and check a model"),
        ("path", "print the file of an installed model (or of ollama:NAME, lmstudio:…, hf:…)"),
        ("verify", "recompute the sha256 of an installed model"),
    ):
        ma = ms.add_parser(action, help=text)
        ma.add_argument("name", metavar="NAME", help=f"catalog model: {', '.join(CATALOG)}")
        if action == "pull":
            ma.add_argument("--force", action="store_true", help="download again over any file")

    for name, what in (("undo", "restore the previous content"), ("redo", "redo an undone write")):
        u = sub.add_parser(name, help=f"{what} of a file")
        u.add_argument("path")
        u.add_argument("--force", action="store_true", help="even if the file changed since")

    # registered without importing bench (which imports the product): ``main`` hands
    # ``specedit bench ...`` to bench.cli before this parser ever runs
    sub.add_parser(
        "bench",
        help="benchmark specedit against plain decoding and peers (specedit bench --help)",
        add_help=False,
    )

    s = sub.add_parser("serve", help="serve editor plugins on a local socket")
    _add_model(s)
    s.add_argument("--tcp", action="store_true", help="also listen on 127.0.0.1 with a token")
    s.add_argument(
        "--http",
        default=None,
        metavar="[HOST:]PORT",
        help="serve an OpenAI-compatible HTTP API instead (host 127.0.0.1 by default; any "
        "other address needs the bearer token kept in the state dir)",
    )
    s.add_argument("--socket", default=None, help="socket path (default: per-user runtime dir)")
    s.add_argument("--log-file", default=None, help="default: <state dir>/logs/server.log")
    s.add_argument(
        "--log-level", dest="serve_log_level", default=None, help="log file level (INFO)"
    )

    d = sub.add_parser("doctor", help="report versions, builds, devices and state (bug reports)")
    d.add_argument("--json", action="store_true", help="the same report as one JSON object")
    d.add_argument("--verify", action="store_true", help="also hash the installed models")

    t = sub.add_parser("tui", help="open the terminal app (also: specedit PATH)")
    t.add_argument("path", nargs="?")
    _add_model(t)
    # None = not given: the app's config file and $SPECEDIT_MODEL fill those in
    t.set_defaults(model=None, backend=None, gpu_layers=None, device=None, n_ctx=None)
    return p

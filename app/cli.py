"""The ``specedit`` command line: rewrite, generate, models, undo, bench, serve and the TUI.

Contract: every user-fixable problem (bad file, unknown or corrupt model, file
too long, hash conflict) ends with one clear line on stderr, exit status 1,
and the file untouched. The streaming text goes to stderr when it is a
terminal; the diff (or ``--json`` object) goes to stdout, so pipes get clean
output. Lines for people (errors, the stats line, "wrote … (backup …)") go
through :func:`say`: wrapped to the terminal's width on a terminal, one line each
in a pipe or a log file, with user text (paths, messages) never read as markup.
All the work is done by ``app.rewrite`` / ``app.files``, which the TUI and the
server use too.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
import time

from rich.console import Console
from rich.markup import escape

from ..engine.backend import UserError
from ..engine.sampling import SamplingParams
from ..models.catalog import CATALOG, DEFAULT_MODEL
from .options import ANSWER_STYLES, BACKENDS, EDIT_MODES, LoadConfig, RewriteOptions

log = logging.getLogger("specedit")
err = Console(stderr=True, highlight=False)
out = Console(highlight=False, soft_wrap=True)


def say(markup: str, *, console: Console | None = None) -> None:
    """Print a line for people on stderr: wrapped on a terminal, whole in a pipe or a log.

    ``markup`` may style its own words; put user text through ``escape`` first."""
    console = console or err
    console.print(markup, soft_wrap=not console.is_terminal)


def error(message: object) -> None:
    """The one line of a failure: ``error: <message>`` (the message is never markup)."""
    say(f"[red]error:[/] {escape(str(message))}")


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


def _draft(v: str) -> str:
    if v in ("lookup", "none", "auto") or (v.startswith("model:") and len(v) > 6):
        return v
    raise argparse.ArgumentTypeError("--draft takes lookup, none, auto or model:NAME|PATH")


def _gpu_layers(v: str) -> int | str:
    from ..models.llama_build import parse_gpu_layers

    try:
        return parse_gpu_layers(v)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _check_lines(lines: tuple[int, int] | None, text: str, path: str) -> None:
    """Refuse ``--lines`` outside the file before any model loads (1-based, as typed)."""
    if lines is None:
        return
    from .diff import split_lines

    n = len(split_lines(text))
    start, end = lines[0] + 1, lines[1]
    if end > n:
        raise UserError(f"--lines {start}:{end} is outside {path}, which has {n} lines")


def _add_model(p: argparse.ArgumentParser, draft_model: bool = True) -> None:
    """The flags of ``LoadConfig``: which model, where it runs (defaults from LoadConfig)."""
    d = LoadConfig()
    g = p.add_argument_group("model")
    g.add_argument(
        "--model",
        default=os.environ.get("SPECEDIT_MODEL") or d.model,
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
    g.add_argument("--ctx", type=int, default=d.n_ctx, help="context length in tokens")
    g.add_argument("--threads", type=int, default=d.threads)
    g.add_argument(
        "--engine",
        default=os.environ.get("SPECEDIT_ENGINE") or d.engine,
        metavar="openai:URL",
        help="run the model on an OpenAI-compatible server (openai:http://HOST:PORT/v1; "
        "key from $SPECEDIT_ENGINE_KEY or $OPENAI_API_KEY); --model gives its tokenizer",
    )


def _add_decoding(p: argparse.ArgumentParser) -> None:
    _add_model(p)
    d, s = RewriteOptions(), SamplingParams()
    g = p.add_argument_group("decoding")
    g.add_argument(
        "--draft",
        type=_draft,
        default=d.draft,
        metavar="lookup|none|auto|model:NAME|PATH",
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
        n_ctx=a.ctx,
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
    r.add_argument("--context", nargs="*", default=[], help="context files (draft sources)")
    r.add_argument("--lines", type=_lines, default=None, help="only lines START:END")
    r.add_argument(
        "--edit",
        choices=EDIT_MODES,
        default=RewriteOptions().edit,
        help="how the model writes the change: only the lines that change (blocks), the "
        "whole file or region (whole), or auto: blocks, else whole (README: edit modes)",
    )
    r.add_argument("--write", action="store_true", help="apply the result (atomic, backed up)")
    r.add_argument(
        "--force",
        action="store_true",
        help="with --write: write a read-only or foreign file, or a result flagged as "
        "deleting lines it was not asked to",
    )
    _add_decoding(r)

    g = sub.add_parser(
        "generate", help="answer a question from context files, quoting them (quotes checked)"
    )
    g.add_argument("--context", nargs="+", required=True)
    g.add_argument("-p", "--prompt", required=True)
    g.add_argument(
        "--style",
        choices=ANSWER_STYLES,
        default="quote",
        help="quote: a short answer, then the passages it rests on, checked against the "
        "files (default); free: an answer in the model's own words, no quotes",
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
    t.set_defaults(model=None, backend=None, gpu_layers=None, device=None, ctx=None)
    return p


def _sampling(a) -> SamplingParams:
    return SamplingParams(temperature=a.temperature, top_k=a.top_k, top_p=a.top_p, seed=a.seed)


def _draft_mode(a) -> str:
    return "model" if a.draft.startswith("model:") else a.draft


def _session(a):
    from .loaded_model import load_model

    return load_model(load_config(a))


def _stream(a):
    if a.json or not sys.stderr.isatty():
        return None
    return lambda piece: err.out(piece, style="dim", end="")


def cmd_rewrite(a) -> int:
    from .files import check_writable, read_source, write_atomic
    from .rewrite import rewrite

    src = read_source(a.path)
    _check_lines(a.lines, src.text, a.path)
    if a.write:
        check_writable(src, force=a.force)  # refuse before the model loads, not after
    context = tuple((p, read_source(p).text) for p in a.context)
    t0 = time.perf_counter()
    sess = _session(a)
    t_load = time.perf_counter() - t0
    opts = RewriteOptions(
        instruction=a.instruction,
        draft=_draft_mode(a),
        k=a.k,
        sampling=_sampling(a),
        exact=a.exact,
        max_tokens=a.max_tokens,
        context=context,
        region=a.lines,
        edit=a.edit,
        prompt_cache=not a.no_prompt_cache,
    )
    res = rewrite(sess, src.text, opts, path=a.path, on_text=_stream(a))
    t_diff = time.perf_counter()
    stats = res.metrics.snapshot()
    stats["model"] = sess.describe()
    stats["timing_s"] = {
        "model_load": round(t_load, 3),
        "prefill": stats["prefill_s"],
        "decode": stats["decode_s"],
        "diff": round(time.perf_counter() - t_diff, 4),
        "total": round(time.perf_counter() - t0, 3),
    }
    written = None
    refused = ""
    if a.write and res.status == "ok" and res.hunks:
        if res.suspect is not None and not a.force:
            refused = f"{res.suspect.message}; not written (--force writes it anyway)"
        else:
            written = write_atomic(src, res.new_text, force=a.force)
    if a.json:
        obj = res.to_json()
        obj["stats"] = stats
        obj["written"] = bool(written)
        if refused:
            obj["refused"] = refused
        out.out(json.dumps(obj, ensure_ascii=False))
    else:
        if _stream(a):
            err.out("")
        if res.diff:
            out.out(res.diff, end="")
        _summary(stats, res.message, sess)
        if written:
            undo = shlex.join(["specedit", "undo", str(written.path)])
            say(escape(f"wrote {written.path} (backup {written.backup_path}; undo: {undo})"))
    if res.status != "ok":
        error(res.message)
        return 1
    if refused:
        error(refused)
        return 1
    return 0


def _summary(s: dict, message: str, sess) -> None:
    line = (
        f"{s['generated_tokens']} tokens, decode {s['decode_tps']:.1f} tok/s, "
        f"prefill {s['prefill_tps']:.0f} tok/s, {s['tokens_per_call']:.2f} tokens/call, "
        f"acceptance {s['acceptance']:.0%}, exact={'yes' if s['exact'] else 'no'} "
        f"({s['backend']} on {s['device']})"
    )
    say(f"[bold]{escape(sess.model_name)}[/]: {escape(line)}")
    if s.get("edit_mode"):
        say(
            f"edit mode {s['edit_mode']}: {s['generated_tokens']} tokens generated for a "
            f"{s['file_tokens']}-token text"
            + (escape(f" ({s['edit_reason']})") if s["edit_reason"] else "")
            + (escape(f" (blocks given up: {s['edit_fallback']})") if s["edit_fallback"] else "")
            + (
                escape(f" (repaired: {', '.join(s['edit_repairs'])})")
                if s.get("edit_repairs")
                else ""
            )
        )
    if s["off_reason"]:
        say(escape(f"speculation off: {s['off_reason']}"))
    if message:
        say(escape(message))


def cmd_generate(a) -> int:
    from .files import read_source
    from .rewrite import answer

    context = [(p, read_source(p).text) for p in a.context]
    sess = _session(a)
    opts = RewriteOptions(
        draft=_draft_mode(a),
        k=a.k,
        sampling=_sampling(a),
        exact=a.exact,
        max_tokens=a.max_tokens,
        prompt_cache=not a.no_prompt_cache,
    )
    stream = None if a.json else (lambda piece: out.out(piece, end=""))
    res = answer(sess, a.prompt, context, opts, on_text=stream, style=a.style)
    if a.json:
        out.out(json.dumps(res.to_json(), ensure_ascii=False))
    else:
        out.out("")
        _citations(res.citations)
        _summary(res.metrics.snapshot(), "", sess)
    return 0


def _citations(citations) -> None:
    """The answer's quotes checked against the files, one line each, after the answer:
    ``✓ README.md:L129`` or ``✗ README.md:L12: not in README.md``."""
    if not citations:
        out.print("[yellow]✗ no quotes[/]: nothing in this answer is checked against the files")
        return
    out.print("")
    for c in citations:
        where = escape(c.label() + ("" if c.file else " (uncited)"))
        if c.found:
            out.print(f"[green]✓[/] {where}")
        else:
            out.print(f"[red]✗ {where}: {escape(c.problem)}[/]")


def cmd_models(a) -> int:
    from ..models import catalog, stores
    from .progress import rich_progress

    if a.action == "list":
        for name, e in CATALOG.items():
            mark = "installed" if catalog.is_installed(name) else "-"
            default = " (default)" if name == DEFAULT_MODEL else ""
            out.print(f"{name:22} {e.size_bytes / 1e6:7.0f} MB  {mark:9}  {e.description}{default}")
        out.out("\n".join(stores.listing()))  # Ollama, LM Studio, HF: plain, never markup
        return 0
    from .loaded_model import model_hash_record

    if a.action == "pull":
        with rich_progress() as progress:
            path = catalog.pull(a.name, progress, force=a.force, record=model_hash_record())
        out.out(str(path))
    elif a.action == "path":
        out.out(str(catalog.resolve_model(a.name)))
    else:
        with rich_progress() as progress:
            path = catalog.verify(a.name, progress, record=model_hash_record())
        out.out(f"{path}: sha256 ok")
    return 0


def cmd_undo(a) -> int:
    """``specedit undo|redo PATH [--force]``: say what was restored from, and where the
    text it replaced went."""
    from rich.markup import escape

    from .undo import redo, undo

    r = (undo if a.cmd == "undo" else redo)(a.path, force=a.force)
    other = "redo" if a.cmd == "undo" else "undo"
    line = f"restored {r.path} from {r.step}"
    if r.saved and r.forced:
        line += f"; your edits since were saved to {r.saved} (specedit {other} puts them back)"
    elif r.saved:
        line += f"; specedit {other} puts back the text it replaced ({r.saved})"
    say(escape(line))  # whole in a log, wrapped on a terminal
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":  # bench builds its own parsers, on top of the product
        from ..bench.cli import main as bench_main

        return bench_main(argv[1:])
    known = set("rewrite generate models undo redo bench serve tui doctor -h --help".split())
    tui_opts = ("--model", "--draft-model", "--backend", "--gpu-layers", "--device", "--quant")
    if not argv or (argv[0] not in known and (not argv[0].startswith("--") or argv[0] in tui_opts)):
        argv = ["tui", *argv]  # `specedit` and `specedit PATH` open the terminal app
    a = build_parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, str(a.log_level).upper(), logging.WARNING),
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        if a.cmd == "rewrite":
            return cmd_rewrite(a)
        if a.cmd == "generate":
            return cmd_generate(a)
        if a.cmd == "models":
            return cmd_models(a)
        if a.cmd in ("undo", "redo"):
            return cmd_undo(a)
        if a.cmd == "serve" and a.http:
            from .server.http_serve import http_main

            return http_main(a, load_config(a))
        if a.cmd == "serve":
            from .server import serve_main

            return serve_main(a, load_config(a))
        if a.cmd == "doctor":
            from .doctor import doctor_main

            return doctor_main(a)
        if a.cmd == "tui":
            from .tui import run_tui

            return run_tui(a, load_config(a))
    except UserError as e:
        error(e)
        return 1
    except KeyboardInterrupt:
        say("interrupted; nothing was written")
        return 130
    build_parser().print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``specedit`` command line: rewrite, rename, generate, models, undo, bench, serve and
the TUI.

Contract: every user-fixable problem (bad file, unknown or corrupt model, file
too long, hash conflict) ends with one clear line on stderr, exit status 1,
and the file untouched. The
streaming text goes to stderr when it is a terminal; the diff (or ``--json`` object)
goes to stdout, so pipes get clean output. Lines for people (errors, the stats line,
"wrote … (backup …)") go through :func:`say`: wrapped to the terminal's width on a
terminal, one line each in a pipe or a log file, with user text (paths, messages) never
read as markup.
All the work is done by ``app.edit.rewrite`` / ``app.store.files`` (``app.code.refactor`` for
``rename``), which the TUI and the server use too.
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
import time

from rich.console import Console
from rich.markup import escape

from ...engine.backend import UserError
from ...engine.sampling import SamplingParams
from ...models.catalog import CATALOG, DEFAULT_MODEL
from ..answer.quotes import NO_QUOTES
from ..options import RewriteOptions
from .flags import build_parser, load_config

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


def _check_lines(lines: tuple[int, int] | None, text: str, path: str) -> None:
    """Refuse ``--lines`` outside the file before any model loads (1-based, as typed)."""
    if lines is None:
        return
    from ..code.diff import split_lines

    n = len(split_lines(text))
    start, end = lines[0] + 1, lines[1]
    if end > n:
        raise UserError(f"--lines {start}:{end} is outside {path}, which has {n} lines")


def _sampling(a) -> SamplingParams:
    return SamplingParams(temperature=a.temperature, top_k=a.top_k, top_p=a.top_p, seed=a.seed)


def _draft_mode(a) -> str:
    return "model" if a.draft.startswith("model:") else a.draft


def _load(a):
    from ..runtime.loaded_model import load_model

    return load_model(load_config(a))


def _stream(a):
    if a.json or not sys.stderr.isatty():
        return None
    return lambda piece: err.out(piece, style="dim", end="")


def cmd_rewrite(a) -> int:
    from ..edit.result import Status
    from ..edit.rewrite import rewrite
    from ..store.files import check_writable, read_source, write_atomic

    src = read_source(a.path)
    _check_lines(a.lines, src.text, a.path)
    if a.write:
        check_writable(src, force=a.force)  # refuse before the model loads, not after
    context_files = tuple((p, read_source(p).text) for p in a.context_files)
    t0 = time.perf_counter()
    loaded = _load(a)
    t_load = time.perf_counter() - t0
    opts = RewriteOptions(
        instruction=a.instruction,
        draft=_draft_mode(a),
        k=a.k,
        sampling=_sampling(a),
        exact=a.exact,
        max_tokens=a.max_tokens,
        context_files=context_files,
        region=a.lines,
        edit=a.edit,
        review=a.review,
        prompt_cache=not a.no_prompt_cache,
        verbatim=not a.no_verbatim,
    )
    res = rewrite(loaded, src.text, opts, path=a.path, on_text=_stream(a))
    t_diff = time.perf_counter()
    stats = res.stats.snapshot()
    stats["model"] = loaded.describe()
    stats["timing_s"] = _timing(stats, t0, t_load, diff=time.perf_counter() - t_diff)
    written = None
    refused = ""
    if a.write and res.status == Status.OK and res.hunks:
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
        _summary(stats, res.message, loaded)
        if written:
            undo = shlex.join(["specedit", "undo", str(written.path)])
            say(escape(f"wrote {written.path} (backup {written.backup_path}; undo: {undo})"))
    if res.status != Status.OK:
        error(res.message)
        return 1
    if refused:
        error(refused)
        return 1
    return 0


def cmd_rename(a) -> int:
    """``specedit rename FILE OLD NEW``: rope's rename (``app.code.refactor``), no model. The
    diff goes to stdout, warnings and the summary to stderr; a problem the user can fix
    (a file that is not Python or does not parse, a name not found, taken or ambiguous, a
    result rope was unsure of with ``--write`` and no ``--force``) is one line and status 1,
    the file untouched."""
    from ..code.diff import unified_diff
    from ..code.refactor import RenameError, is_python, rename_python
    from ..store.files import FileError, check_writable, read_source, write_atomic

    def refuse(kind: str, message: str, obj: dict | None = None) -> int:
        if a.json:
            obj = obj or {"status": "error"}
            obj["error"] = {"kind": kind, "message": message}
            out.out(json.dumps(obj, ensure_ascii=False))
        error(message)
        return 1

    try:
        src = read_source(a.path)
        if a.write:
            check_writable(src, force=a.force)
    except FileError as e:
        return refuse("file", str(e))
    if not is_python(a.path, src.text):
        return refuse(
            "not_python",
            f"{a.path} is not a Python file: specedit rename renames Python names "
            "(other languages: specedit rewrite -i 'Rename ...')",
        )
    res = rename_python(src.text, a.old, a.new, line=a.line, docs=a.docs)
    if isinstance(res, RenameError):
        return refuse(res.kind, f"{a.path}: {res.message}")
    obj = {"status": "ok", "path": a.path, **res.to_json()}
    obj["diff"] = unified_diff(src.text, res.new_text, path=a.path)
    written = None
    if a.write and res.doubtful and not a.force:
        obj["written"] = False
        if not a.json:
            out.out(obj["diff"], end="")
            _rename_notes(res)
        return refuse(
            "doubtful",
            f"{a.path}: not written: rope left occurrences it was unsure of (the warnings "
            "above); --force writes it anyway",
            obj,
        )
    if a.write and res.hunks:
        try:
            written = write_atomic(src, res.new_text, force=a.force)
        except FileError as e:
            return refuse("file", str(e))
    obj["written"] = bool(written)
    obj["backup"] = str(written.backup_path) if written and written.backup_path else None
    if a.json:
        out.out(json.dumps(obj, ensure_ascii=False))
        return 0
    out.out(obj["diff"], end="")
    _rename_notes(res)
    lines = len(res.changed_lines)
    say(
        escape(
            f"renamed {a.old} to {a.new}: {res.occurrences} occurrences on {lines} "
            f"line{'s' * (lines != 1)} (rope, no model)"
        )
    )
    if written:
        undo = shlex.join(["specedit", "undo", str(written.path)])
        say(escape(f"wrote {written.path} (backup {written.backup_path}; undo: {undo})"))
    return 0


def _timing(stats: dict, t0: float, t_load: float, **more: float) -> dict:
    """Where a command's wall time went (``stats["timing_s"]``): the model's load, the
    engine's prefill and decode, ``more`` (the diff), and the wall time since ``t0``."""
    return {
        "model_load": round(t_load, 3),
        "prefill": stats["prefill_s"],
        "decode": stats["decode_s"],
        **{k: round(v, 4) for k, v in more.items()},
        "total": round(time.perf_counter() - t0, 3),
    }


def _wall(t: dict) -> None:
    """The wall line of an answer (``_timing``): what answers are compared by, with the
    model's tokens, where a rate would count text the program copied in."""
    say(
        escape(
            f"wall {t['total']:.1f} s: load {t['model_load']:.1f} s, prefill "
            f"{t['prefill']:.1f} s, decode {t['decode']:.1f} s"
        )
    )


def _rename_notes(res) -> None:
    for n in res.notes:
        say(f"[yellow]warning:[/] {escape(f'line {n.line}: {n.message}')}")


def _summary(s: dict, message: str, loaded) -> None:
    line = (
        f"{s['generated_tokens']} tokens, decode {s['decode_tps']:.1f} tok/s, "
        f"prefill {s['prefill_tps']:.0f} tok/s, {s['tokens_per_call']:.2f} tokens/call, "
        f"acceptance {s['acceptance']:.0%}, exact={'yes' if s['exact'] else 'no'} "
        f"({s['backend']} on {s['device']})"
    )
    say(f"[bold]{escape(loaded.model_name)}[/]: {escape(line)}")
    if s.get("inserted_tokens"):  # the program's text: in no rate (engine.metrics)
        say(
            escape(
                f"copied from the files: {s['inserted_tokens']} tokens, written by the "
                "program (no target call, in no tok/s)"
            )
        )
    if s.get("edit_mode"):
        say(
            f"edit mode {s['edit_mode']}: {s['generated_tokens']} tokens generated for a "
            f"{s['file_tokens']}-token text"
            + (escape(f" ({s['edit_reason']})") if s["edit_reason"] else "")
            + (escape(f" ({s['given_up']})") if s["given_up"] else "")
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
    from ..answer.answer import answer
    from ..store.files import read_source

    context_files = [(p, read_source(p).text) for p in a.context_files]
    t0 = time.perf_counter()
    loaded = _load(a)
    t_load = time.perf_counter() - t0
    opts = RewriteOptions(
        draft=_draft_mode(a),
        k=a.k,
        sampling=_sampling(a),
        exact=a.exact,
        max_tokens=a.max_tokens,
        prompt_cache=not a.no_prompt_cache,
        verbatim=not a.no_verbatim,
        insert_quotes=not a.typed_quotes,
    )
    stream = None if a.json else (lambda piece: out.out(piece, end=""))
    res = answer(loaded, a.prompt, context_files, opts, on_text=stream, style=a.style)
    obj = res.to_json()
    obj["stats"]["timing_s"] = _timing(obj["stats"], t0, t_load)
    if a.json:
        out.out(json.dumps(obj, ensure_ascii=False))
    else:
        out.out("")
        _citations(res.citations)
        _summary(obj["stats"], "", loaded)
        _wall(obj["stats"]["timing_s"])
    return 0


def _citations(citations) -> None:
    """The answer's quotes checked against the files, one line each, after the answer:
    ``✓ README.md:L129`` or ``✗ README.md:L12: not in README.md``."""
    if not citations:
        out.print(f"[yellow]{escape(NO_QUOTES)}[/]")
        return
    out.print("")
    for c in citations:
        out.print(f"[{'green' if c.found else 'red'}]{escape(c.verdict())}[/]")


def cmd_models(a) -> int:
    from ...models import catalog, stores
    from .progress import rich_progress

    if a.action == "list":
        for name, e in CATALOG.items():
            mark = "installed" if catalog.is_installed(name) else "-"
            default = " (default)" if name == DEFAULT_MODEL else ""
            out.print(f"{name:22} {e.size_bytes / 1e6:7.0f} MB  {mark:9}  {e.description}{default}")
        out.out("\n".join(stores.listing()))  # Ollama, LM Studio, HF: plain, never markup
        return 0
    from ..runtime.loaded_model import model_hash_record

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

    from ..store.undo import redo, undo

    r = (undo if a.cmd == "undo" else redo)(a.path, force=a.force)
    other = "redo" if a.cmd == "undo" else "undo"
    line = f"restored {r.path} from {r.step}"
    if r.saved and r.forced:
        line += f"; your edits since were saved to {r.saved} (specedit {other} puts them back)"
    elif r.saved:
        line += f"; specedit {other} puts back the text it replaced ({r.saved})"
    say(escape(line))  # whole in a log, wrapped on a terminal
    return 0


PLUGIN_GROUP = "specedit.commands"
"""The entry-point group of commands that live outside the product (``specedit bench``):
each builds its own parser and is found by name, never imported by the product."""


def plugin_command(name: str):
    """The ``main(argv)`` registered for ``specedit NAME`` in ``PLUGIN_GROUP``, or None."""
    from importlib.metadata import entry_points

    found = entry_points(group=PLUGIN_GROUP, name=name)
    return next(iter(found)).load() if found else None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = plugin_command(argv[0]) if argv and argv[0] == "bench" else None
    if command is not None:  # bench builds its own parsers, on top of the product
        return command(argv[1:])
    known = set("rewrite rename generate models undo redo bench serve tui doctor -h --help".split())
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
        if a.cmd == "rename":
            return cmd_rename(a)
        if a.cmd == "generate":
            return cmd_generate(a)
        if a.cmd == "models":
            return cmd_models(a)
        if a.cmd in ("undo", "redo"):
            return cmd_undo(a)
        if a.cmd == "serve" and a.http:
            from ..server.http_serve import http_main

            return http_main(a, load_config(a))
        if a.cmd == "serve":
            from ..server import serve_main

            return serve_main(a, load_config(a))
        if a.cmd == "doctor":
            from .doctor import doctor_main

            return doctor_main(a)
        if a.cmd == "tui":
            from ..tui import run_tui

            return run_tui(a, load_config(a))
        if a.cmd == "bench":  # main found no registered bench command
            raise UserError(
                f"specedit bench is not installed here (no {PLUGIN_GROUP} entry point): "
                "pip install -e '.[bench]' from the repository"
            )
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

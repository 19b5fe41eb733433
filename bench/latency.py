"""End-to-end latency of one rewrite, split into its parts.

Contract: ``specedit bench latency [--model M] [--lines N] [-r R] [--exact] [--k K]``
rewrites an ``N``-line real source file (the standard library's
``textwrap.py``) with a one-line change through the real command,
``specedit rewrite FILE -i ... --edit whole --json`` (``--edit`` picks another mode),
in a fresh process each time, and
reports medians over ``R`` repeats (of the ``--cases`` asked for, default all) of each part
the user waits for:
``wall`` (the whole command), ``import`` (starting Python and importing the
CLI, measured on its own), ``model_load`` (llama.cpp load, cached exactness
check, cost-curve level), ``prefill``, ``decode``, ``rest`` (prompt building,
extraction, hunks and diff) and ``process`` (wall minus the command's own
total: interpreter start, imports, exit).

Three cases: ``cold`` (``--no-prompt-cache``: the whole prompt is prefilled),
``warm`` (the file's prefix state saved on disk by an earlier run with the same
file, as after a first edit: only the instruction is prefilled), and ``editor``:
a loaded model (as in ``specedit serve`` or the terminal app) whose cache holds
another file, warmed up on this one (``app.edit.rewrite.warm``) for ``--typing``
seconds while the user types the instruction; ``wall`` is then the wait after
Enter, including the warm-up's last chunk. ``region`` is the editor case with the
range an editor sends for the cursor's definition (``expand: node``): only
``TextWrapper.__init__`` is rewritten. Runs use a
scratch state directory (with the user's model checks copied in), so the
user's prompt cache is neither used nor filled. It also checks the edit: the
diff should change one line. ``--exact`` runs every case exact, ``--k`` with a fixed
draft length: either gives the same text whatever the timing, as the test of this
bench's plumbing needs (``--k`` costs less on a CPU build whose batches are inexact).
A JSON record goes to ``bench/results``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .record import save_record
from .tasks import stdlib_dir, truncate_lines

log = logging.getLogger(__name__)

INSTRUCTION = "Change the default width of TextWrapper.__init__ from 70 to 80. Change nothing else."


CASES = ("cold", "warm", "editor", "region")


def _file(lines: int, folder: Path) -> Path:
    text = truncate_lines((stdlib_dir() / "textwrap.py").read_text(encoding="utf-8"), lines)
    path = folder / "textwrap_excerpt.py"
    path.write_text(text, encoding="utf-8")
    return path


def _cli(path: Path, model: str, edit: str, extra: list[str], env: dict) -> dict:
    cmd = [str(Path(sys.executable).with_name("specedit")), "rewrite", str(path)]
    cmd += ["-i", INSTRUCTION, "--model", model, "--edit", edit, "--json", *extra]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"specedit rewrite failed: {proc.stderr.strip()[-500:]}")
    out = json.loads(proc.stdout)
    tm = out["stats"]["timing_s"]
    return _parts(wall, tm["total"], tm["model_load"], out["stats"], out["diff"])


def _parts(wall: float, total: float, model_load: float, stats: dict, diff: str) -> dict:
    """One run's row: ``total`` is the rewrite's own time (the command's, or the wait after
    Enter), ``stats`` the engine's metrics snapshot."""
    prefill, decode = stats["prefill_s"], stats["decode_s"]
    return {
        "wall": wall,
        "model_load": model_load,
        "prefill": prefill,
        "decode": decode,
        "rest": max(total - model_load - prefill - decode, 0.0),
        "process": max(wall - total, 0.0),
        "prompt_tokens": stats["prompt_tokens"],
        "cached_tokens": stats["cached_tokens"],
        "generated_tokens": stats["generated_tokens"],
        "decode_tps": stats["decode_tps"],
        "tokens_per_call": stats["tokens_per_call"],
        "changed_lines": sum(
            1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")
        ),
    }


def _target_region(text: str) -> tuple[int, int] | None:
    """The definition around the line the instruction changes (``width=70`` in __init__),
    as an editor's range with ``expand: node`` gives it; None if the excerpt stops before."""
    from ..app.code.syntax import enclosing_node_range

    lines = [i for i, ln in enumerate(text.splitlines()) if "width=70" in ln]
    return enclosing_node_range(text, "python", lines[0], lines[0] + 1) if lines else None


def _editor(
    loaded, path: Path, text: str, typing_s: float, edit: str, region=None, exact=False, k=None
) -> dict:
    """The editor case: warm up for ``typing_s`` seconds, then rewrite (interrupting it);
    ``region``: only those lines, the rest of the file stays as it is."""
    from ..app.edit.rewrite import rewrite, warm
    from ..app.options import RewriteOptions

    opts = RewriteOptions(instruction=INSTRUCTION, region=region, edit=edit, exact=exact, k=k)
    kw = {"path": path.name, "region": region}  # the warm-up an editor sends
    loaded.target.rollback(0)  # the cache held another file
    stop, warmed = threading.Event(), []
    th = threading.Thread(target=lambda: warmed.append(warm(loaded, text, interrupt=stop, **kw)))
    th.start()
    time.sleep(typing_s)
    stop.set()  # Enter: the rewrite waits for the warm-up's current chunk at most
    t = time.perf_counter()
    res = rewrite(loaded, text, opts, path=path.name)
    wall = time.perf_counter() - t
    th.join()
    row = _parts(wall, wall, 0.0, res.stats.snapshot(), res.diff)
    return {**row, "warm_tokens": warmed[0].evaluated_tokens, "warm_status": warmed[0].status}


def _import_s() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import specedit.app.cli.main"], check=True)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    from ..app.runtime.loaded_model import model_checks_file

    ap = argparse.ArgumentParser(prog="specedit bench latency", description=__doc__)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--lines", type=int, default=200)
    ap.add_argument("-r", "--repeats", type=int, default=3)
    ap.add_argument(
        "--typing", type=float, default=10.0, help="seconds spent typing the instruction"
    )
    ap.add_argument(
        "--edit",
        default="whole",
        choices=["whole", "auto", "blocks"],
        help="edit mode of every case (whole: the same generation in each, so the cases "
        "compare; auto may fall back to a second stage in one case and not another)",
    )
    ap.add_argument("--exact", action="store_true", help="every case in exact mode")
    ap.add_argument("--k", type=int, default=None, help="a fixed draft length in every case")
    ap.add_argument(
        "--cases",
        nargs="+",
        default=list(CASES),
        choices=CASES,
        help="the cases to run (default: all; region runs only where the file reaches "
        "TextWrapper.__init__)",
    )
    ap.add_argument("--out", default="bench/results")
    a = ap.parse_args(argv)
    exact = (["--exact"] if a.exact else []) + ([] if a.k is None else ["--k", str(a.k)])
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from ..app.runtime.loaded_model import load_model

    cases: dict[str, list[dict]] = {c: [] for c in CASES if c in a.cases}
    imports = []
    with tempfile.TemporaryDirectory() as tmp:
        path = _file(a.lines, Path(tmp))
        scratch = Path(tmp) / "state"
        scratch.mkdir()
        checks = model_checks_file()
        if checks.exists():
            shutil.copy(checks, scratch / "model_checks.json")
        env = {**os.environ, "SPECEDIT_STATE_DIR": str(scratch)}
        if "warm" in cases:  # fills the prompt cache (and the checks, if new)
            _cli(path, a.model, a.edit, exact, env)
        for i in range(a.repeats):
            log.warning("repeat %d/%d", i + 1, a.repeats)
            imports.append(_import_s())
            if "cold" in cases:
                cold = ["--no-prompt-cache", *exact]
                cases["cold"].append(_cli(path, a.model, a.edit, cold, env))
            if "warm" in cases:
                cases["warm"].append(_cli(path, a.model, a.edit, exact, env))
        text = path.read_text(encoding="utf-8")
        region = _target_region(text) if "region" in cases else None
        if "region" in cases and region is None:
            log.warning("the excerpt ends before TextWrapper.__init__: no region case")
            del cases["region"]
        if "editor" in cases or "region" in cases:
            loaded = load_model(a.model)
            try:
                for _ in range(a.repeats):
                    ed = (loaded, path, text, a.typing, a.edit)
                    if "editor" in cases:
                        cases["editor"].append(_editor(*ed, exact=a.exact, k=a.k))
                    if region is not None:
                        cases["region"].append(_editor(*ed, region, exact=a.exact, k=a.k))
            finally:
                loaded.target.close()
    record = {
        "model": a.model,
        "edit": a.edit,
        "lines": a.lines,
        "instruction": INSTRUCTION,
        "typing_s": a.typing,
        "import_s": statistics.median(imports),
        "medians": {
            c: {
                k: round(statistics.median(r[k] for r in rs), 3)
                for k in rs[0]
                if not isinstance(rs[0][k], str)
            }
            for c, rs in cases.items()
        },
        "runs": cases,
    }
    out = save_record(record, a.out, "latency")
    parts = ("wall", "process", "model_load", "prefill", "decode", "rest")
    head = "".join(f"{c:>10}" for c in cases)
    sys.stdout.write(f"{'':>12}{head}   (medians of {a.repeats}, seconds)\n")
    for k in parts:
        row = "".join(f"{record['medians'][c][k]:10.3f}" for c in cases)
        sys.stdout.write(f"{k:>12}{row}\n")
    sys.stdout.write(f"{'import':>12}{record['import_s']:10.3f}   (inside process)\n")
    if "editor" in cases:
        sys.stdout.write(
            f"editor: warmed up for {a.typing:.0f} s while typing, "
            f"{record['medians']['editor']['warm_tokens']:.0f} tokens read before Enter\n"
        )
    for c in cases:
        m = record["medians"][c]
        sys.stdout.write(
            f"{c}: {m['prompt_tokens']:.0f} prompt tokens prefilled ({m['cached_tokens']:.0f} "
            f"cached), {m['generated_tokens']:.0f} generated at {m['decode_tps']:.1f} tok/s "
            f"({m['tokens_per_call']:.1f}/call), {m['changed_lines']:.0f} changed line(s)\n"
        )
    sys.stdout.write(f"wrote {out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

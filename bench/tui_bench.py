"""Decode tokens/s inside the terminal app vs headless, on the same rewrite task.

Contract: ``run_tui_bench(cfg)`` loads one model and runs the same instruction on
the same file ``repeats`` times in three modes, rotating their order every repeat so
machine noise and warm-up hit them alike:

* ``headless``: ``app.edit.rewrite.rewrite`` on the main thread, the call ``specedit rewrite``
  makes;
* ``headless_thread``: the same call on a worker thread, as the app runs it: this
  separates the cost of the UI from the cost of the thread the engine runs on (with
  llama.cpp's OpenMP build, a busy machine can slow the *main* thread's team a lot);
* ``tui``: the full Textual app (``SpecEditApp.run_test``, headless terminal, live diff,
  8 Hz status bar, file watcher) driven by Pilot: type the instruction, press Enter, wait
  for review. Its figure is read from the same ``Metrics`` object the status bar shows.

All report ``Metrics.decode_tps`` (generated tokens / decode seconds). The record holds
every run, the medians, the ratios of tui to both headless modes and whether the outputs
were equal. One warm-up run of each mode is not counted. Run it as
``python -m specedit.bench.tui_bench [--file F] [--instruction I] [--repeats N]``; it
prints one line per run, a summary, and writes the JSON record (``--json PATH``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..app.edit.rewrite import rewrite
from ..app.options import RewriteOptions
from ..app.runtime.loaded_model import LoadedModel, load_model
from ..app.store.files import read_source
from ..models.catalog import TEST_MODEL
from .record import config_from_args

log = logging.getLogger(__name__)

MODES = ("headless", "headless_thread", "tui")
SAMPLE = Path(__file__).resolve().parent.parent / "app" / "samples" / "inventory.py"


@dataclass(frozen=True)
class TuiBenchConfig:
    """What to run."""

    model: str = TEST_MODEL
    """Catalog name or GGUF path."""
    file: str = str(SAMPLE)
    """The file to rewrite (copied to a temp dir; the original is never written)."""
    instruction: str = "Rename the method total_value to inventory_value."
    """The edit, identical in both modes."""
    repeats: int = 3
    """Counted runs per mode (plus one warm-up each)."""
    n_ctx: int = 4096
    threads: int | None = None
    size: tuple[int, int] = (120, 36)
    """Terminal size of the app."""


async def _tui_once(
    loaded: LoadedModel, path: Path, cfg: TuiBenchConfig, screenshot: str | None = None
) -> dict:
    from ..app.tui.app import SpecEditApp
    from ..app.tui.config import TuiSettings

    app = SpecEditApp(path.name, loaded=loaded, settings=TuiSettings(model=loaded.model_name))
    async with app.run_test(size=cfg.size) as pilot:
        await pilot.pause(0.1)
        screen = app.screen
        screen.query_one("#instruction").value = cfg.instruction
        await pilot.press("enter")
        while screen.mode == "generating":
            await asyncio.sleep(0.1)  # a light poll: the app's own timers do the work
            if screenshot and _past_first_change(screen.state.live.preview()):
                _save_svg(app, screenshot)
                screenshot = None
        live = screen.state.live
        review = screen.state.review
        metrics = live.metrics
        new_text = None
        if review is not None:
            review.accept_all()
            new_text = review.result_text()
        await pilot.press("escape")
    return {"metrics": metrics, "output": new_text, "mode_after": screen.mode}


def _past_first_change(preview) -> bool:
    """True once generation is a few lines past its first changed line."""
    return bool(preview.hunks) and preview.frontier >= preview.hunks[0].start_line + 4


def _save_svg(app, target: str) -> None:
    """Save the app's screen as an SVG at ``target`` (the README screenshot)."""
    out = Path(target).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    app.save_screenshot(filename=out.name, path=str(out.parent))
    log.info("saved a screenshot to %s", out)


def _headless_once(loaded: LoadedModel, path: Path, cfg: TuiBenchConfig) -> dict:
    src = read_source(path)
    res = rewrite(loaded, src.text, RewriteOptions(instruction=cfg.instruction), path=path.name)
    return {"metrics": res.metrics, "output": res.new_text if res.hunks else None}


def _headless_thread_once(loaded: LoadedModel, path: Path, cfg: TuiBenchConfig) -> dict:
    box: list[dict] = []
    worker = threading.Thread(target=lambda: box.append(_headless_once(loaded, path, cfg)))
    worker.start()
    worker.join()
    return box[0]


def _record(mode: str, out: dict, wall: float) -> dict:
    m = out["metrics"]
    return {
        "mode": mode,
        "decode_tps": round(m.decode_tps, 3),
        "generated_tokens": m.generated_tokens,
        "tokens_per_call": round(m.tokens_per_call, 3),
        "acceptance": round(m.acceptance, 4),
        "decode_s": round(m.decode_s, 4),
        "wall_s": round(wall, 3),
        "output": out["output"],
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def run_tui_bench(cfg: TuiBenchConfig, screenshot: str | None = None) -> dict:
    """Run the benchmark (see module docstring) and return its JSON-able record.

    With ``screenshot``, the warm-up TUI run saves an SVG of the app mid-generation there.
    """
    loaded = load_model(cfg.model, n_ctx=cfg.n_ctx, threads=cfg.threads)
    load_start = os.getloadavg()
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="specedit-tui-bench-") as tmp:
        path = Path(tmp) / Path(cfg.file).name
        path.write_bytes(Path(cfg.file).read_bytes())
        cwd = os.getcwd()
        os.chdir(tmp)  # the app shows paths relative to the working directory
        screenshot = os.path.join(cwd, screenshot) if screenshot else None
        try:
            for i in range(cfg.repeats + 1):
                for j in range(len(MODES)):
                    mode = MODES[(i + j) % len(MODES)]
                    t = time.perf_counter()
                    if mode == "tui":
                        shot = screenshot if i == 0 else None
                        out = asyncio.run(_tui_once(loaded, path, cfg, shot))
                    elif mode == "headless_thread":
                        out = _headless_thread_once(loaded, path, cfg)
                    else:
                        out = _headless_once(loaded, path, cfg)
                    rec = _record(mode, out, time.perf_counter() - t)
                    rec["warmup"] = i == 0
                    runs.append(rec)
                    log.info("%s", {k: v for k, v in rec.items() if k != "output"})
        finally:
            os.chdir(cwd)
    counted = [r for r in runs if not r["warmup"]]
    med = {
        mode: statistics.median(r["decode_tps"] for r in counted if r["mode"] == mode)
        for mode in MODES
    }
    outputs = {r["output"] for r in counted}
    record = {
        "config": asdict(cfg),
        "model": loaded.describe(),
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_start": [round(x, 2) for x in load_start],
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", ""),
        },
        "runs": [{k: v for k, v in r.items() if k != "output"} for r in runs],
        "median_decode_tps": {k: round(v, 3) for k, v in med.items()},
        "ratio_tui_to_headless": _ratio(med["tui"], med["headless"]),
        "ratio_tui_to_headless_thread": _ratio(med["tui"], med["headless_thread"]),
        "outputs_equal": len(outputs) == 1,
        "changed": next(iter(outputs)) is not None if len(outputs) == 1 else None,
    }
    loaded.target.close()
    return record


def main(argv: list[str] | None = None) -> int:
    d = TuiBenchConfig()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=d.model)
    p.add_argument("--file", default=d.file)
    p.add_argument("--instruction", default=d.instruction)
    p.add_argument("-r", "--repeats", type=int, default=d.repeats)
    p.add_argument("--ctx", dest="n_ctx", type=int, default=d.n_ctx)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--json", default=None, help="write the record here")
    p.add_argument("--screenshot", default=None, help="save an SVG of the app (warm-up run)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    cfg = config_from_args(TuiBenchConfig, a)
    record = run_tui_bench(cfg, a.screenshot)
    text = json.dumps(record, indent=1)
    if a.json:
        Path(a.json).write_text(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What every bench script shares: its flags, its config from them, its JSON record, its plot.

Contract: ``add_common(parser, defaults)`` declares the flags every task benchmark takes
(``--model``, ``--kinds``, ``-n``, ``-r``, ``--max-lines``, ``--max-tokens``, ``--ctx``,
``--threads``, ``--k``, ``--out``), for those fields its config dataclass ``defaults``
has, with its defaults. ``save_record(record, out_dir, stem)`` creates ``out_dir`` and writes
``<out_dir>/<stem>-<YYYYmmdd-HHMMSS>.json``; it returns that path, whose
``with_suffix`` gives sibling files (the plot) the same stamp; given that path again it
rewrites the file (a long run saves after each task). ``save_and_log(record, out_dir, stem)``
saves it and logs its summary and path (a bench command's last step).
``config_from_args(cls, args)`` builds a bench's config dataclass from parsed
arguments of the same names (``--ctx`` is ``n_ctx``; lists become tuples where
the field's default is a tuple; fields without an argument keep their defaults).
``pyplot()`` is matplotlib's pyplot on the Agg backend, or None when it is not installed.
``machine(extra)`` says where a record was measured: the CPU's model name (``lscpu``'s, from
``/proc/cpuinfo``; batched calls cost differently on AVX2 and AMX, so ratios from two CPUs do
not compare), cores, load average, platform, Python, numpy and the time, plus ``extra``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import platform
import time
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)

C = TypeVar("C")


def add_common(p: argparse.ArgumentParser, defaults: Any) -> None:
    """The shared flags of a task benchmark whose config ``defaults`` has the field."""
    have = {f.name for f in dataclasses.fields(defaults)}
    d = defaults
    if "model" in have:
        p.add_argument("--model", default=d.model)
    if "kinds" in have:
        p.add_argument("--kinds", nargs="+", default=list(d.kinds))
    if "n_per_kind" in have:
        p.add_argument("-n", "--n-per-kind", type=int, default=d.n_per_kind)
    if "repeats" in have:
        p.add_argument("-r", "--repeats", type=int, default=d.repeats)
    if "max_lines" in have:
        p.add_argument("--max-lines", type=int, default=d.max_lines)
    if "max_tokens" in have:
        p.add_argument("--max-tokens", type=int, default=d.max_tokens)
    if "n_ctx" in have:
        p.add_argument("--ctx", dest="n_ctx", type=int, default=d.n_ctx)
    if "threads" in have:
        p.add_argument("--threads", type=int, default=d.threads)
    if "k" in have:
        p.add_argument("--k", type=int, default=d.k, help="fixed k (default: adaptive)")
    p.add_argument("--out", default="bench/results", help="folder for the JSON record")


def config_from_args(cls: type[C], args) -> C:
    values = {}
    for f in dataclasses.fields(cls):
        name = f.name
        if not hasattr(args, name):
            continue
        v = getattr(args, name)
        if isinstance(v, list):
            v = tuple(v)
        values[f.name] = v
    return cls(**values)


def save_record(record: dict, out_dir: str | Path, stem: str, path: Path | None = None) -> Path:
    """Write ``record``; with ``path`` (what an earlier call returned) rewrite that file, so
    a long run keeps a record of what it has done so far (a run cut short keeps its rows)."""
    if path is None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(path)
    return path


def save_and_log(record: dict, out_dir: str | Path, stem: str) -> int:
    """Write ``record`` (``save_record``), log its summary and where it went; a bench
    command's last step (its exit status)."""
    path = save_record(record, out_dir, stem)
    log.info("summary %s", json.dumps(record["summary"], indent=1))
    log.info("wrote %s", path)
    return 0


def pyplot():
    """matplotlib's ``pyplot`` on the file-only Agg backend, or None (with a warning) when
    matplotlib is not installed: a plot is optional, the record is not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib not installed; no plot")
        return None
    return plt


def cpu_name() -> str:
    """The CPU's model name as ``lscpu`` gives it, else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(extra: dict | None = None) -> dict:
    """Where and when a record was measured (the contract above)."""
    import numpy as np

    info = {
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    return {**info, **(extra or {})}

"""Saving a benchmark's JSON record: one place for every bench script.

Contract: ``save_record(record, out_dir, stem)`` creates ``out_dir`` and writes
``<out_dir>/<stem>-<YYYYmmdd-HHMMSS>.json``; it returns that path, whose
``with_suffix`` gives sibling files (the plot) the same stamp.
"""

from __future__ import annotations

import json
import time
from pathlib import Path


def save_record(record: dict, out_dir: str | Path, stem: str) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=1))
    return path

"""What every bench script shares: its config from the command line, its JSON record.

Contract: ``save_record(record, out_dir, stem)`` creates ``out_dir`` and writes
``<out_dir>/<stem>-<YYYYmmdd-HHMMSS>.json``; it returns that path, whose
``with_suffix`` gives sibling files (the plot) the same stamp.
``config_from_args(cls, args)`` builds a bench's config dataclass from parsed
arguments of the same names (``--ctx`` fills ``n_ctx``; lists become tuples where
the field's default is a tuple; fields without an argument keep their defaults).
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import TypeVar

C = TypeVar("C")


def config_from_args(cls: type[C], args) -> C:
    values = {}
    for f in dataclasses.fields(cls):
        name = "ctx" if f.name == "n_ctx" else f.name
        if not hasattr(args, name):
            continue
        v = getattr(args, name)
        if isinstance(v, list):
            v = tuple(v)
        values[f.name] = v
    return cls(**values)


def save_record(record: dict, out_dir: str | Path, stem: str) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=1))
    return path

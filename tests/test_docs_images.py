"""The README's editor images from real runs (issue 17): the same rewrite
(``tests/editor_sample.json``) by ``specedit serve`` over the scripted toy model
(``tests/toy_server.py``: no weights, seconds), reviewed in each editor.

* Neovim: the real Neovim (``nvim_helpers.run_lua_screen``: an embedded Neovim with a UI
  attached, ``nvim_screen.lua``) runs ``:SpeceditRewrite`` into the review; its screen grid,
  with its highlight colours, is rendered as ``nvim.svg`` (``screen_svg.grid_svg``).
* VS Code (not installed here): the node test ``plugins/vscode/test/image.test.ts`` runs the
  extension's client and review code against the server and writes the review state it
  computes; ``screen_svg.editor_svg`` renders it as ``vscode.svg``.

Each test writes its image under ``tmp_path`` and checks the texts on it; with
``SPECEDIT_DOCS_IMAGES=1`` (``make docs-images``) it writes ``docs/nvim.svg`` or
``docs/vscode.svg`` too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nvim_helpers import run_lua_screen
from screen_svg import editor_svg, grid_svg, grid_text
from toy_server import serve_process

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = json.loads((Path(__file__).parent / "editor_sample.json").read_text())
VSCODE = ROOT / "plugins" / "vscode"


def _publish(svg: str, tmp_path: Path, name: str) -> str:
    """Write the image under ``tmp_path`` (and to docs/ when asked); return its text."""
    (tmp_path / name).write_text(svg, encoding="utf-8")
    if os.environ.get("SPECEDIT_DOCS_IMAGES") == "1":
        (ROOT / "docs" / name).write_text(svg, encoding="utf-8")
    return svg


DRIVER = r"""
  -- notices go to the message area, as the default vim.notify puts them
  vim.notify = function(msg, level)
    table.insert(out.notes, msg)
    vim.api.nvim_echo({ { msg, level == vim.log.levels.WARN and 'WarningMsg' or 'Normal' } }, true, {})
  end
  vim.o.number = true
  vim.o.laststatus = 2
  vim.o.statusline = " %f %= %{v:lua.require'specedit'.statusline()} "
  local sp = require('specedit')
  sp.setup({ socket = os.getenv('SPECEDIT_SOCK'), auto_start = false, warm = false, edit = 'whole' })
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('SPECEDIT_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  vim.cmd('SpeceditRewrite ' .. os.getenv('SPECEDIT_INSTRUCTION'))
  vim.wait(60000, function() local st = sp.buffers[buf]; return st == nil or st.phase == 'review' end, 20)
  local st = sp.buffers[buf]
  out.phase, out.hunks = st and st.phase, st and #st.hunks
  out.statusline = sp.statusline()
  screen()
"""


def test_nvim_review_image(tmp_path):
    f = tmp_path / SAMPLE["file"]
    f.write_text(SAMPLE["text"])
    sp = serve_process(tmp_path, script=SAMPLE["new"] + "```\n")
    env = {
        "SPECEDIT_SOCK": str(sp.socket),
        "SPECEDIT_FILE": f.name,  # the driver runs in tmp_path
        "SPECEDIT_INSTRUCTION": SAMPLE["instruction"],
    }
    try:
        out, screen = run_lua_screen(tmp_path, DRIVER, (84, 18), env)
    finally:
        sp.stop()
    assert out["phase"] == "review" and out["hunks"] == 3, out
    text = grid_text(screen)
    body = "\n".join(text)
    # the review in the buffer: the new lines in place, the old ones as virtual lines above
    # (above the first line too: the window shows them as its 'topfill')
    assert "class Inventory:" in text[0] and "class Stock:" in text[1], body
    for line in ["def add(self, name: str, qty: int) -> None:", "    def add(self, name, qty):"]:
        assert line in body, body
    assert '"""The number of items in stock."""' in body
    assert "specedit 1/3" in body and "specedit 3/3" in body  # the hunk hints
    # the status line, and the notice with the decode figures and what ran the model
    status, message = text[-2], text[-1]
    assert status.rstrip().endswith("specedit: 3 hunk(s) to review"), status
    assert message.startswith("specedit: 3 hunk(s), ") and "tok/s, toy on CPU" in message, message
    # the added lines are drawn in SpeceditAdd's colour (DiffAdd), not the default one
    r = next(i for i, t in enumerate(text) if "class Stock:" in t)
    col = text[r].index("class Stock:")
    ids = {cell[1] for cell in screen["rows"][r][col : col + 12]}
    assert all(screen["hl"].get(str(i), {}).get("background") for i in ids), ids

    svg = _publish(grid_svg(screen, "Neovim: specedit review"), tmp_path, "nvim.svg")
    assert svg.startswith("<svg") and "Stock:" in svg and "hunk(s)&#160;to&#160;review" in svg


def test_vscode_review_image(tmp_path):
    node = shutil.which("node")
    if node is None or not (VSCODE / "node_modules").is_dir():
        pytest.skip("node and plugins/vscode/node_modules are needed (make setup-test)")
    tsc = VSCODE / "node_modules" / ".bin" / "tsc"
    subprocess.run([str(tsc), "-p", "."], cwd=VSCODE, check=True, timeout=120)
    state_file = tmp_path / "vscode-state.json"
    env = {
        **os.environ,
        "SPECEDIT_PYTHON": sys.executable,
        "SPECEDIT_VSCODE_STATE": str(state_file),
    }
    proc = subprocess.run(
        [node, "--test", "out/test/image.test.js"],
        cwd=VSCODE,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    state = json.loads(state_file.read_text())
    assert state["status"] == "$(diff) specedit: 3 hunk(s) to review"
    svg = _publish(editor_svg(state, "VS Code: specedit review"), tmp_path, "vscode.svg")
    for s in ["Inventory:", "+&#160;class&#160;Stock:", "Accept&#160;all", "±&#160;specedit:"]:
        assert s in svg, s

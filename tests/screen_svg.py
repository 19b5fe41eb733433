"""Editor screens as SVG (the README's images of the Neovim plugin and the VS Code extension),
drawn with Rich's ``Console(record=True).export_svg``, as ``docs/tui.svg`` is.

* :func:`grid_svg` renders a Neovim screen grid as an attached UI received it
  (``nvim_screen.lua``: rows of ``[text, hl_id]`` cells, the ``hl_attr_define`` attributes by
  id, the default colours), cell for cell with its colours.
* :func:`editor_svg` renders the review state the VS Code extension's code computes (the JSON
  that ``plugins/vscode/test/image.test.ts`` writes): the document's lines with the line
  numbers, the removed lines struck through, the added text after its anchor line, the
  CodeLenses above their lines, the notification and the status-bar item. Codicons
  (``$(diff)``) are drawn as the nearest character. The layout is an editor's; the texts are
  the extension's own.
"""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.style import Style
from rich.terminal_theme import DEFAULT_TERMINAL_THEME, TerminalTheme
from rich.text import Text


def _hex(rgb: int | None) -> str | None:
    return None if rgb is None else f"#{rgb:06x}"


def _theme(bg: str, fg: str) -> TerminalTheme:
    def triplet(h: str) -> tuple[int, int, int]:
        return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)

    ansi = [tuple(c) for c in DEFAULT_TERMINAL_THEME.ansi_colors._colors]
    return TerminalTheme(triplet(bg), triplet(fg), ansi[:8], ansi[8:])


def _export(lines: list[Text], width: int, title: str, bg: str, fg: str) -> str:
    console = Console(
        record=True, width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True
    )
    for line in lines:
        console.print(line, no_wrap=True, overflow="crop", end="\n")
    return console.export_svg(title=title, theme=_theme(bg, fg), unique_id="specedit")


# ------------------------------------------------------------------ Neovim


def _cell_style(attrs: dict, fg: str, bg: str) -> Style:
    f, b = _hex(attrs.get("foreground")) or fg, _hex(attrs.get("background")) or bg
    if attrs.get("reverse"):
        f, b = b, f
    return Style(
        color=f,
        bgcolor=b,
        bold=bool(attrs.get("bold")),
        italic=bool(attrs.get("italic")),
        underline=bool(attrs.get("underline") or attrs.get("undercurl")),
        strike=bool(attrs.get("strikethrough")),
    )


def grid_text(screen: dict) -> list[str]:
    """The grid's rows as plain text (what the tests read)."""
    return ["".join(cell[0] for cell in row) for row in screen["rows"]]


def grid_svg(screen: dict, title: str) -> str:
    """The Neovim screen (``nvim_screen.lua``'s JSON) as an SVG, cell for cell."""
    fg = _hex(screen["default"].get("fg")) or "#e0e2ea"
    bg = _hex(screen["default"].get("bg")) or "#14161b"
    lines = []
    for row in screen["rows"]:
        text, run, run_id = Text(), "", None
        for ch, hl_id in row:  # a run of cells with one highlight is one span
            if hl_id != run_id and run:
                text.append(run, _cell_style(screen["hl"].get(str(run_id), {}), fg, bg))
                run = ""
            run, run_id = run + ch, hl_id  # "": the right half of a double-width character
        text.append(run, _cell_style(screen["hl"].get(str(run_id), {}), fg, bg))
        lines.append(text)
    return _export(lines, len(screen["rows"][0]), title, bg, fg)


# ------------------------------------------------------------------ VS Code

# VS Code's Dark Modern colours for what the extension asks for (theme colour ids)
EDITOR_BG, EDITOR_FG, GUTTER_FG = "#1f1f1f", "#cccccc", "#6e7681"
REMOVED_BG = "#4b1818"  # diffEditor.removedLineBackground
ADDED_FG = "#81b88b"  # gitDecoration.addedResourceForeground
LENS_FG = "#999999"  # editorCodeLens.foreground
STATUS_BG, STATUS_FG = "#181818", "#cccccc"
NOTE_BG, WARN_FG = "#252526", "#cca700"
CODICONS = {"diff": "±", "check": "✓", "sync~spin": "↻", "warning": "⚠", "error": "✗"}


def codicons(s: str) -> str:
    """``$(name)`` codicons as characters (unknown ones dropped)."""
    return re.sub(r"\$\(([\w~-]+)\)", lambda m: CODICONS.get(m.group(1), ""), s)


def editor_svg(state: dict, title: str, width: int = 88) -> str:
    """The VS Code extension's review state (``image.test.ts``'s JSON) as an editor SVG."""
    base = Style(color=EDITOR_FG, bgcolor=EDITOR_BG)
    gutter = Style(color=GUTTER_FG, bgcolor=EDITOR_BG)
    lines: list[Text] = []
    tab = Text(f" {state['file']} ", Style(color="#ffffff", bgcolor=EDITOR_BG, bold=True))
    tab.append(" " * (width - len(tab)), Style(bgcolor="#181818"))
    lines.append(tab)
    doc = state["lines"]
    lenses: dict[int, list[str]] = {}
    for lens in state["lenses"]:
        lenses.setdefault(lens["line"], []).append(codicons(lens["title"]))
    removed: set[int] = set()
    after: dict[int, str] = {}
    before: dict[int, str] = {}
    for d in state["decorations"]:
        if d["removed"]:
            removed.update(range(d["removed"]["startLine"], d["removed"]["endLine"]))
        if d["text"]:
            (before if d["anchorBefore"] else after)[d["anchorLine"]] = d["text"]
    for i, line in enumerate(doc):
        if i in lenses:
            lens = Text("      ", gutter)
            lens.append(" | ".join(lenses[i]), Style(color=LENS_FG, bgcolor=EDITOR_BG))
            lines.append(lens)
        row = Text(f"{i + 1:>4}  ", gutter)
        if i in before:
            row.append(before[i], Style(color=ADDED_FG, bgcolor=EDITOR_BG, italic=True))
        line_bg = REMOVED_BG if i in removed else EDITOR_BG  # a whole-line decoration
        row.append(line, Style(color=EDITOR_FG, bgcolor=line_bg, strike=i in removed))
        if i in after:
            row.append(after[i], Style(color=ADDED_FG, bgcolor=line_bg, italic=True))
        row.append(" " * max(0, width - len(row)), Style(bgcolor=line_bg))
        lines.append(row)
    lines.append(Text(""))
    note = state["notice"]
    icon = "⚠ " if note["warning"] else "ℹ "
    box = Text(f" {icon}specedit: {note['text']} ", Style(color=EDITOR_FG, bgcolor=NOTE_BG))
    pad = max(0, width - len(box) - 1)
    lines.append(Text(" " * pad, base) + box)
    status = Text(f" {codicons(state['status'])} ", Style(color=STATUS_FG, bgcolor=STATUS_BG))
    status.append(" " * max(0, width - len(status)), Style(bgcolor=STATUS_BG))
    lines.append(status)
    return _export(lines, width, title, EDITOR_BG, EDITOR_FG)

"""Check: compare the edited Markdown with the original section by section; exit 0 when only the change asked was made."""

import difflib
import re
import sys
from pathlib import Path


def lines_of(path: Path) -> list[str]:
    return [line.rstrip() for line in path.read_text(encoding="utf-8").rstrip("\n").split("\n")]


def sections(lines: list[str]) -> dict[str, list[str]]:
    """The lines under each heading (outside code fences), keyed by the heading's text."""
    out: dict[str, list[str]] = {"": []}
    current, fenced = "", False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            current = line.lstrip("#").strip()
            out[current] = []
        else:
            out[current].append(line)
    return out


def words(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


KEPT = [
    "A release that is not ready by then waits for the next slot rather than going out late in the week.",
    "Hotfixes are the exception: see below.",
]


def main() -> int:
    path = Path(sys.argv[1])
    new = sections(lines_of(path))
    old = sections(lines_of(Path(__file__).resolve().parent / path.name))
    if "Schedule" not in new:
        print("the Schedule heading is gone")
        return 1
    text = words(new["Schedule"])
    if re.search(r"\btuesday\b|\bsecond\b|\bevery other\b", text, re.I):
        print("the Schedule section still says every second Tuesday")
        return 1
    if not re.search(r"\b(every|each) Monday\b|\bMondays\b", text, re.I):
        print("the Schedule section does not say we release every Monday")
        return 1
    if not re.search(r"planning meeting", text):
        print("the Schedule section no longer says the release follows the planning meeting")
        return 1
    for sentence in KEPT:
        if sentence not in text:
            print(f"a sentence of the Schedule section changed: {sentence}")
            return 1
    if list(new) != list(old):
        print("the headings changed")
        return 1
    for name, body in old.items():
        if name != "Schedule" and new[name] != body:
            print(f"the section '{name or 'title'}' changed")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

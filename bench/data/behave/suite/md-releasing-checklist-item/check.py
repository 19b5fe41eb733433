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


def main() -> int:
    path = Path(sys.argv[1])
    new = lines_of(path)
    old = lines_of(Path(__file__).resolve().parent / path.name)
    added = [line for line in new if "make smoke" in line]
    if not added:
        print("no line mentions make smoke")
        return 1
    secs = sections(new)
    where = [name for name, body in secs.items() if any("make smoke" in line for line in body)]
    if where != ["Before tagging"]:
        print(f"the smoke-test step is under {', '.join(where) or 'no heading'}, not under Before tagging")
        return 1
    ops = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "insert" or ops[0][4] - ops[0][3] != 1:
        print("the file changed in more places than one added line")
        return 1
    _, i1, _, j1, _ = ops[0]
    line = new[j1]
    if not re.match(r"- \[ \] \S", line) or "staging" not in line.lower():
        print(f"the added line is not a '- [ ]' item about staging: {line}")
        return 1
    items = [i for i, text in enumerate(old) if text.startswith("- [ ] ")]
    before = [i for i in items if i < old.index("## After publishing")]
    if not (before[0] <= i1 <= before[-1] + 1):
        print("the item is not inside the Before tagging checklist")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Check: parse the edited config, check the values asked and that every other value is the original's."""

import json
import sys
import tomllib
from pathlib import Path

try:
    import yaml
except ImportError:  # only the YAML tasks need it
    yaml = None


def load(path: Path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix == ".toml":
        return tomllib.loads(text)
    return yaml.safe_load(text)


def show(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def first_diff(want, got, where: str = "") -> str | None:
    """Where ``got`` first differs from ``want``, in words; None when they are equal."""
    name = where or "the document"
    if isinstance(want, dict) and isinstance(got, dict):
        for key in want:
            if key not in got:
                return f"{where}.{key} was removed".lstrip(".")
        for key in got:
            if key not in want:
                return f"{where}.{key} was added".lstrip(".")
        for key in want:
            found = first_diff(want[key], got[key], f"{where}.{key}".lstrip("."))
            if found:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{name} has {len(got)} items instead of {len(want)}: {show(got)}"
        for i, (a, b) in enumerate(zip(want, got)):
            found = first_diff(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    if type(want) is not type(got) or want != got:
        return f"{name} is {show(got)} instead of {show(want)}"
    return None


def get(doc, *path):
    for key in path:
        if isinstance(doc, dict) and key in doc:
            doc = doc[key]
        elif isinstance(doc, list) and isinstance(key, int) and -len(doc) <= key < len(doc):
            doc = doc[key]
        else:
            return KeyError
    return doc


def version_of(spec):
    if isinstance(spec, dict):
        spec = spec.get("version")
    return spec if isinstance(spec, str) else None


def asked(new):
    got = get(new, "dev-dependencies", "tempfile")
    if got is KeyError:
        if get(new, "dependencies", "tempfile") is not KeyError:
            return "tempfile was added to [dependencies], not [dev-dependencies]"
        return "[dev-dependencies] has no tempfile"
    version = version_of(got)
    if version is None or not version.lstrip("^=~ ").startswith("3"):
        return f"dev-dependencies.tempfile is {show(got)}, not version 3"
    if isinstance(got, dict) and set(got) - {"version"}:
        return f"dev-dependencies.tempfile has extra settings: {show(got)}"
    if get(new, "dependencies", "tempfile") is not KeyError:
        return "tempfile was also added to [dependencies]"
    return None


def expect(want):
    want["dev-dependencies"]["tempfile"] = get(load(Path(sys.argv[1])), "dev-dependencies", "tempfile")




def main() -> int:
    path = Path(sys.argv[1])
    try:
        new = load(path)
    except Exception as exc:  # noqa: BLE001 - any parse error fails the check
        print(f"the file does not parse: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        return 1
    why = asked(new)
    if why:
        print(why)
        return 1
    want = load(Path(__file__).resolve().parent / path.name)
    expect(want)
    why = first_diff(want, new)
    if why:
        print(why)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

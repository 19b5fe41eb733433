"""Check for py-envfile-comments: lines starting with # are skipped; the rest parses as before."""

import importlib.util
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("envfile_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


TEXT = """# database settings
DB_HOST=localhost
  # indented comment
DB_URL="postgres://${DB_HOST}/app"
#DISABLED=1
# KEY=not-a-setting

export MODE=dev
PAGE=http://example.test/docs#intro
"""


def main() -> None:
    mod = load(Path(sys.argv[1]))
    try:
        got = mod.parse_env(TEXT)
    except Exception as e:  # noqa: BLE001
        fail(f"parse_env on a file with comments raised {type(e).__name__}: {e}")
    want = {
        "DB_HOST": "localhost",
        "DB_URL": "postgres://localhost/app",
        "MODE": "dev",
        "PAGE": "http://example.test/docs#intro",
    }
    if got != want:
        fail(f"parse_env gave {got!r}")
    try:
        if mod.parse_line("   ") is not None:
            fail("parse_line on a blank line is not None")
        if mod.parse_line("A = 'x y'") != ("A", "x y"):
            fail("parse_line('A = \\'x y\\'') changed")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"parse_line raised {type(e).__name__}: {e}")
    try:
        mod.parse_env("NOEQUALS\n")
    except ValueError:
        pass
    except Exception as e:  # noqa: BLE001
        fail(f"a line without '=' raised {type(e).__name__}, not a ValueError")
    else:
        fail("a line without '=' no longer raises")
    print("ok")


main()

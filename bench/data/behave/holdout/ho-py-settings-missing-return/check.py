"""Check for ho-py-settings-missing-return: a missing file gives the defaults, not None."""

import importlib.util
import json
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("userconfig_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def main() -> None:
    mod = load(Path(sys.argv[1]))
    defaults = dict(mod.DEFAULTS)
    with tempfile.TemporaryDirectory() as tmp:
        missing = Path(tmp) / "nope" / "config.json"
        try:
            got = mod.load_settings(missing)
        except Exception as e:  # noqa: BLE001
            fail(f"load_settings on a missing file raised {type(e).__name__}: {e}")
        if got is None:
            fail("load_settings on a missing file still returns None")
        if dict(got) != defaults:
            fail(f"load_settings on a missing file gave {got!r}, not the defaults")
        cfg = Path(tmp) / "config.json"
        cfg.write_text(json.dumps({"editor": "nano", "max_title": 80}), encoding="utf-8")
        try:
            got = mod.load_settings(cfg)
        except Exception as e:  # noqa: BLE001
            fail(f"load_settings on a real file raised {type(e).__name__}: {e}")
        if got != {**defaults, "editor": "nano", "max_title": 80}:
            fail(f"load_settings on a file gave {got!r}")
        cfg.write_text("{not json", encoding="utf-8")
        try:
            mod.load_settings(cfg)
        except mod.ConfigError:
            pass
        except Exception as e:  # noqa: BLE001
            fail(f"bad JSON raised {type(e).__name__}, not ConfigError")
        else:
            fail("bad JSON no longer raises ConfigError")
        try:
            s = mod.set_value("pager", "off", Path(tmp) / "new" / "config.json")
        except Exception as e:  # noqa: BLE001
            fail(f"set_value raised {type(e).__name__}: {e}")
        if s["pager"] is not False or s["editor"] != defaults["editor"]:
            fail(f"set_value gave {s!r}")
    if dict(mod.DEFAULTS) != defaults:
        fail("DEFAULTS was modified")
    print("ok")


main()

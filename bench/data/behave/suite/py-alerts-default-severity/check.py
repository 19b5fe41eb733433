"""Check for py-alerts-default-severity: python check.py PATH (PATH: the edited file)."""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p) != HERE]


def fail(why):
    print(" ".join(str(why).split()))
    sys.exit(1)


def load(path, name="edited_module"):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


import json
import logging


class Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def check(mod, path):
    if mod.DEFAULT_SEVERITY != "warning":
        fail(f"DEFAULT_SEVERITY is {mod.DEFAULT_SEVERITY!r}, expected 'warning'")
    if tuple(mod.SEVERITIES) != ("info", "warning", "error", "critical"):
        fail(f"SEVERITIES changed: {mod.SEVERITIES!r}")
    a = mod.Alert("disk full")
    if a.severity != "warning":
        fail(f"Alert('disk full') has severity {a.severity!r}, expected 'warning'")
    if json.loads(a.payload())["attachments"][0]["color"] != "#d29922":
        fail("the default alert is not coloured as a warning")
    e = mod.Alert("db down", "error")
    if e.severity != "error" or json.loads(e.payload())["attachments"][0]["footer"] != "ERROR":
        fail("an explicit 'error' alert changed")
    sent = []
    if mod.check_disk({"/": 0.95, "/var": 0.99, "/tmp": 0.5}, sent.append) != 2:
        fail("check_disk changed")
    sev = [json.loads(b)["attachments"][0]["footer"] for b in sent]
    if sev != ["WARNING", "CRITICAL"]:
        fail(f"check_disk sent {sev!r}, expected WARNING for / and CRITICAL for /var")
    keep = Keep()
    mod.logger.addHandler(keep)
    mod.logger.setLevel(logging.DEBUG)

    def broken(body):
        raise OSError("network down")

    if mod.send(a, broken) is not False:
        fail("send no longer returns False on failure")
    levels = [r.levelno for r in keep.records if "disk full" in r.getMessage()]
    if levels != [logging.ERROR]:
        fail(f"a failed send is no longer logged at ERROR (levels {levels!r})")


if __name__ == "__main__":
    try:
        module = load(sys.argv[1])
    except BaseException as e:
        fail(f"the file does not import: {type(e).__name__}: {e}")
    try:
        check(module, sys.argv[1])
    except SystemExit:
        raise
    except BaseException as e:
        fail(f"{type(e).__name__}: {e}")

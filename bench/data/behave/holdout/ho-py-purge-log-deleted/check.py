"""Check for ho-py-purge-log-deleted: purge_old logs one INFO record naming each deleted file."""

import importlib.util
import logging
import os
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("purge_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


class Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def main() -> None:
    mod = load(Path(sys.argv[1]))
    keep = Keep()
    root_logger = logging.getLogger()
    root_logger.addHandler(keep)
    root_logger.setLevel(logging.DEBUG)
    now = 1_700_000_000.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "scratch"
        (root / "job1").mkdir(parents=True)
        (root / "job2").mkdir()
        old = [root / "job1" / "frame_0001.exr", root / "job2" / "frame_0099.exr"]
        new = [root / "job1" / "frame_0002.exr", root / "job2" / ".keep"]
        for p in old + new:
            p.write_bytes(b"x" * 100)
        for p in old + [root / "job2" / ".keep"]:
            os.utime(p, (now - 10 * 86400, now - 10 * 86400))
        os.utime(new[0], (now - 3600, now - 3600))
        try:
            stats = mod.purge_old(root, 3, now=now)
        except Exception as e:  # noqa: BLE001
            fail(f"purge_old raised {type(e).__name__}: {e}")
        if (stats.deleted, stats.kept, stats.freed_bytes) != (2, 2, 200):
            fail(f"purge_old stats changed: {stats!r}")
        if any(p.exists() for p in old) or not all(p.exists() for p in new):
            fail("purge_old deleted the wrong files")
        infos = []
        for r in keep.records:
            try:
                msg = r.getMessage()
            except Exception as e:  # noqa: BLE001
                fail(f"a log record does not format: {type(e).__name__}: {e}")
            if r.levelno == logging.INFO:
                infos.append(msg)
        for p in old:
            if not any(p.name in m for m in infos):
                fail(f"no INFO record names the deleted {p.name}; INFO records: {infos!r}")
        if mod.remove_empty_dirs(root) != 0:
            fail("remove_empty_dirs changed")
    print("ok")


main()

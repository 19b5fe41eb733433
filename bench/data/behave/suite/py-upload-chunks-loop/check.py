"""Check for py-upload-chunks-loop: iter_parts yields the whole stream in size-byte pieces."""

import hashlib
import importlib.util
import io
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("uploader_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def main() -> None:
    mod = load(Path(sys.argv[1]))
    data = bytes(range(256)) * 1000  # 256000 bytes
    try:
        parts = list(mod.iter_parts(io.BytesIO(data), 100_000))
    except Exception as e:  # noqa: BLE001
        fail(f"iter_parts raised {type(e).__name__}: {e}")
    if b"".join(parts) != data:
        fail(f"iter_parts gave {sum(map(len, parts))} of {len(data)} bytes")
    if [len(p) for p in parts] != [100_000, 100_000, 56_000]:
        fail(f"iter_parts piece sizes are {[len(p) for p in parts]}")
    try:
        if list(mod.iter_parts(io.BytesIO(b""), 10)) != []:
            fail("iter_parts on an empty stream yields something")
        if list(mod.iter_parts(io.BytesIO(b"abc"), 10)) != [b"abc"]:
            fail("iter_parts on a short stream changed")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"iter_parts on a short stream raised {type(e).__name__}: {e}")
    try:
        list(mod.iter_parts(io.BytesIO(b"abc"), 0))
    except ValueError:
        pass
    except Exception as e:  # noqa: BLE001
        fail(f"iter_parts(size=0) raised {type(e).__name__}, not ValueError")
    else:
        fail("iter_parts(size=0) no longer raises ValueError")
    try:
        if mod.sha256_of(io.BytesIO(data)) != hashlib.sha256(data).hexdigest():
            fail("sha256_of is not the hash of the whole stream")
        calls = []
        res = mod.upload(io.BytesIO(data), "k", "https://x.invalid/", mod.dry_run_transport(calls))
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"sha256_of/upload raised {type(e).__name__}: {e}")
    if res.size != len(data) or res.parts != 4:
        fail(f"upload of 256000 bytes gave {res.parts} parts, {res.size} bytes")
    if calls[-1][0] != "POST" or [c[2] for c in calls[:-1]] != [65536, 65536, 65536, 59392]:
        fail(f"upload calls were {calls!r}")
    print("ok")


main()

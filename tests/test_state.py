"""Private state (specedit.app.store.state): every folder specedit keeps is 0700, every file 0600."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from specedit.app.runtime import loaded_model as loaded_model
from specedit.app.server.serve import _setup_logging
from specedit.app.store.files import read_source, write_atomic
from specedit.app.store.state import (
    PrivateRotatingFileHandler,
    make_private,
    private_dir,
    state_subdir,
    write_private,
)


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "state"
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(root))
    monkeypatch.delenv("SPECEDIT_BACKUP_DIR", raising=False)
    return root


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """umask 0: without explicit modes everything would be world-readable."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def modes_under(root: Path) -> dict[str, int]:
    found = {".": mode(root)}
    for p in root.rglob("*"):
        found[str(p.relative_to(root))] = mode(p)
    return found


def assert_private(root: Path) -> None:
    for name, m in modes_under(root).items():
        is_dir = (root / name).is_dir()
        assert m == (0o700 if is_dir else 0o600), f"{name}: {m:o}"


def test_private_dir_creates_0700(tmp_path: Path, loose_umask: None) -> None:
    d = private_dir(tmp_path / "a" / "b" / "c")
    assert d.is_dir()
    assert [mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3


def test_private_dir_tightens_our_own_folder(tmp_path: Path) -> None:
    d = tmp_path / "old"
    d.mkdir()
    d.chmod(0o755)
    private_dir(d, tighten=False)  # a folder the user chose stays as it is
    assert mode(d) == 0o755
    private_dir(d)
    assert mode(d) == 0o700


def test_private_dir_refuses_another_users_folder(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    d = tmp_path / "theirs"
    d.mkdir()
    d.chmod(0o755)
    os.chown(d, 65534, 65534)
    with pytest.raises(PermissionError, match="belongs to another user"):
        private_dir(d)
    assert mode(d) == 0o755 and d.stat().st_uid == 65534  # not ours to change


def test_private_dir_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        private_dir(tmp_path / "f")


def test_write_private_is_0600_and_atomic(tmp_path: Path, loose_umask: None) -> None:
    p = tmp_path / "x.json"
    p.write_text("old")
    p.chmod(0o644)
    write_private(p, b"new")
    assert p.read_bytes() == b"new" and mode(p) == 0o600
    assert sorted(x.name for x in tmp_path.iterdir()) == ["x.json"]
    q = tmp_path / "y"
    q.write_text("from another library")
    make_private(q)
    assert mode(q) == 0o600


def test_log_files_are_0600_rotated_ones_too(tmp_path: Path, loose_umask: None) -> None:
    log_path = tmp_path / "logs" / "x.log"
    log_path.parent.mkdir()
    (tmp_path / "logs" / "x.log.2").write_text("left by an older version")
    (tmp_path / "logs" / "x.log.2").chmod(0o644)
    handler = PrivateRotatingFileHandler(log_path, maxBytes=200, backupCount=3, encoding="utf-8")
    logger = logging.getLogger("specedit.test_state")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for i in range(30):
            logger.warning("line %d of a log that names /home/user/secret.py", i)
    finally:
        logger.removeHandler(handler)
        handler.close()
        logger.propagate = True
    names = sorted(p.name for p in log_path.parent.iterdir())
    assert names == ["x.log", "x.log.1", "x.log.2", "x.log.3"]
    assert {p.name: mode(p) for p in log_path.parent.iterdir()} == dict.fromkeys(names, 0o600)


def test_backups_are_private(state: Path, tmp_path: Path, loose_umask: None) -> None:
    state.mkdir(mode=0o755)  # as an older version left it
    state.chmod(0o755)
    p = tmp_path / "a.py"
    p.write_bytes(b"v1\n")
    p.chmod(0o644)
    write_atomic(read_source(p), "v2\n")
    write_atomic(read_source(p), "v3\n")
    names = modes_under(state)
    assert any(n.endswith(".bak") for n in names) and any(n.endswith(".bak.json") for n in names)
    assert any(n.endswith("index.json") for n in names)
    assert_private(state)
    assert mode(p) == 0o644  # the user's own file keeps its mode


def test_model_checks_are_private(
    state: Path, loose_umask: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(loaded_model.CHECKS_ENV, raising=False)
    assert loaded_model.model_hash_record() == state / "model_hashes.json"
    loaded_model._save_cache({"k": 1})
    assert loaded_model._load_cache() == {"k": 1}
    assert (state / "model_checks.json").exists()
    assert_private(state)
    # a file shared by several state dirs ($SPECEDIT_MODEL_CHECKS): private too
    shared = tmp_path / "shared" / "checks.json"
    monkeypatch.setenv(loaded_model.CHECKS_ENV, str(shared))
    loaded_model._save_cache({"k": 2})
    assert loaded_model._load_cache() == {"k": 2} and loaded_model.model_checks_file() == shared
    assert mode(shared) == 0o600 and mode(shared.parent) == 0o700
    assert loaded_model.model_hash_record() == shared.parent / "model_hashes.json"


def test_server_log_is_private(state: Path, loose_umask: None) -> None:
    root = logging.getLogger("specedit")
    before, level = list(root.handlers), root.level
    try:
        path = _setup_logging("INFO", None)
        logging.getLogger("specedit.app.server").info("rewrite of /home/user/secret.py")
    finally:
        for h in set(root.handlers) - set(before):
            root.removeHandler(h)
            h.close()
        root.setLevel(level)
    assert path == state / "logs" / "server.log" and "secret.py" in path.read_text()
    assert_private(state)


def test_state_subdir_tightens_each_level(state: Path) -> None:
    (state / "prompt-cache").mkdir(parents=True)
    for d in (state, state / "prompt-cache"):
        d.chmod(0o755)
    assert state_subdir("prompt-cache") == state / "prompt-cache"
    assert mode(state) == mode(state / "prompt-cache") == 0o700

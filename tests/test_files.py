"""Tests for specedit.app.store.files: reading, rendering, atomic writes, backups and undo."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import platformdirs
import pytest

from specedit.app.store import backups, files
from specedit.app.store.files import (
    ConflictError,
    FileError,
    list_backups,
    read_source,
    render,
    source_from_text,
    write_atomic,
)
from specedit.app.store.state import state_dir
from specedit.app.store.undo import undo


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "state"
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(root))
    return root


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ----------------------------------------------------------------------------- reading


def test_read_plain(work: Path) -> None:
    p = write(work / "a.py", b"x = 1\ny = 2\n")
    src = read_source(p)
    assert src.path == p and src.path.is_absolute()
    assert src.text == "x = 1\ny = 2\n"
    assert (src.newline, src.bom, src.trailing_newline) == ("\n", False, True)
    assert src.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert src.size == 12
    assert src.mode == os.stat(p).st_mode & 0o7777


def test_read_relative_path_is_made_absolute(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(work / "a.txt", b"hi\n")
    monkeypatch.chdir(work)
    assert read_source("a.txt").path == work / "a.txt"


@pytest.mark.parametrize(
    ("raw", "newline", "text"),
    [
        (b"a\r\nb\r\n", "\r\n", "a\nb\n"),
        (b"a\rb\r", "\r", "a\nb\n"),
        (b"a\r\nb\r\nc\n", "\r\n", "a\nb\nc\n"),  # dominant style wins
        (b"abc", "\n", "abc"),
        (b"", "\n", ""),
    ],
)
def test_read_newline_styles(work: Path, raw: bytes, newline: str, text: str) -> None:
    src = read_source(write(work / "f.txt", raw))
    assert (src.newline, src.text) == (newline, text)


def test_read_bom(work: Path) -> None:
    src = read_source(write(work / "f.txt", b"\xef\xbb\xbfh\xc3\xa9\n"))
    assert src.bom and src.text == "h\u00e9\n"


def test_read_missing(work: Path) -> None:
    with pytest.raises(FileError, match="nope.py does not exist"):
        read_source(work / "nope.py")


def test_read_broken_symlink(work: Path) -> None:
    (work / "link").symlink_to(work / "gone")
    with pytest.raises(FileError, match="broken symlink"):
        read_source(work / "link")


def test_read_directory(work: Path) -> None:
    with pytest.raises(FileError, match="is a directory"):
        read_source(work)


def test_read_fifo(work: Path) -> None:
    os.mkfifo(work / "pipe")
    with pytest.raises(FileError, match="not a regular file"):
        read_source(work / "pipe")


def test_read_too_large(work: Path) -> None:
    p = write(work / "big.txt", b"a" * 101)
    with pytest.raises(FileError, match="too large"):
        read_source(p, max_bytes=100)
    assert read_source(p, max_bytes=101).size == 101


def test_read_binary(work: Path) -> None:
    p = write(work / "x.bin", b"hello world\x00\x01")
    with pytest.raises(FileError) as info:
        read_source(p)
    assert "x.bin looks binary (NUL byte at offset 11)" in str(info.value)
    assert "\n" not in str(info.value)


def test_read_not_utf8(work: Path) -> None:
    p = write(work / "x.txt", b"abc\xff def\n")
    with pytest.raises(FileError, match=r"x.txt is not valid UTF-8 \(byte 0xff at offset 3\)"):
        read_source(p)


def test_read_not_utf8_offset_counts_bom(work: Path) -> None:
    p = write(work / "x.txt", b"\xef\xbb\xbfab\xe9")
    with pytest.raises(FileError, match=r"byte 0xe9 at offset 5"):
        read_source(p)


def test_read_unreadable(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(work / "secret.txt", b"x\n")
    real_open = open

    def deny(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(file) == p:
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    with pytest.raises(FileError, match="cannot read .*secret.txt: Permission denied"):
        read_source(p)


def test_source_from_text() -> None:
    src = source_from_text("a\r\nb", path="buf.py")
    assert src.text == "a\nb" and src.newline == "\r\n" and not src.trailing_newline
    assert src.sha256 == hashlib.sha256(b"a\r\nb").hexdigest()
    assert src.path is not None and src.path.is_absolute()
    assert source_from_text("x").path is None
    assert source_from_text("\ufeffx\n").bom


# ----------------------------------------------------------------------------- render


@pytest.mark.parametrize(
    ("raw", "new", "expected"),
    [
        (b"a\r\nb\r\n", "x\ny\n", b"x\r\ny\r\n"),
        (b"a\rb\r", "x\ny", b"x\ry\r"),  # trailing newline added back
        (b"a\nb", "x\ny\n\n", b"x\ny"),  # trailing newlines stripped
        (b"\xef\xbb\xbfa\n", "\u00e9\n", b"\xef\xbb\xbf\xc3\xa9\n"),
        (b"a\n", "", b""),
    ],
)
def test_render(work: Path, raw: bytes, new: str, expected: bytes) -> None:
    assert render(read_source(write(work / "f", raw)), new) == expected


def test_round_trip_is_identity(work: Path) -> None:
    for raw in (b"a\r\nb\r\n", b"\xef\xbb\xbfa\rb", b"x\n\ny\n", b"single"):
        src = read_source(write(work / "f", raw))
        assert render(src, src.text) == raw


# ----------------------------------------------------------------------------- writing


def test_write_atomic_and_backup(work: Path, state: Path) -> None:
    p = write(work / "a.py", b"old\r\n")
    src = read_source(p)
    result = write_atomic(src, "new\n")
    assert p.read_bytes() == b"new\r\n"
    assert result.path == p
    assert result.sha256 == hashlib.sha256(b"new\r\n").hexdigest()
    assert result.backup_path is not None and result.backup_path.read_bytes() == b"old\r\n"
    assert result.backup_path.is_relative_to(state / "backups")
    assert list_backups(p) == [result.backup_path]
    index = json.loads((result.backup_path.parent / "index.json").read_text())
    assert index == {"path": str(p)}
    assert leftovers(work) == []


def test_write_without_backup(work: Path) -> None:
    p = write(work / "a.py", b"old\n")
    assert write_atomic(read_source(p), "new\n", backup=False).backup_path is None
    assert list_backups(p) == []


def test_write_preserves_mode(work: Path) -> None:
    p = write(work / "run.sh", b"#!/bin/sh\necho hi\n")
    p.chmod(0o755)
    write_atomic(read_source(p), "#!/bin/sh\necho bye\n")
    assert p.stat().st_mode & 0o7777 == 0o755


def test_write_conflict(work: Path) -> None:
    p = write(work / "a.py", b"v1\n")
    src = read_source(p)
    p.write_bytes(b"v2 by the user\n")
    with pytest.raises(ConflictError, match="changed on disk since it was read") as info:
        write_atomic(src, "llm\n")
    assert "Re-run against the new content." in str(info.value)
    assert p.read_bytes() == b"v2 by the user\n"
    assert list_backups(p) == []
    assert leftovers(work) == []


def test_write_conflict_just_before_replace(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(work / "a.py", b"v1\n")
    src = read_source(p)
    real_write_temp = files.write_temp

    def racing_write_temp(directory: Path, prefix: str, data: bytes, mode: int) -> Path:
        tmp = real_write_temp(directory, prefix, data, mode)
        if directory == work:
            p.write_bytes(b"edited meanwhile\n")
        return tmp

    monkeypatch.setattr(files, "write_temp", racing_write_temp)
    with pytest.raises(ConflictError):
        write_atomic(src, "llm\n")
    assert p.read_bytes() == b"edited meanwhile\n"
    assert leftovers(work) == []
    assert list_backups(p) == []


def test_write_deleted_file_is_conflict(work: Path) -> None:
    p = write(work / "a.py", b"v1\n")
    src = read_source(p)
    p.unlink()
    with pytest.raises(ConflictError, match="deleted"):
        write_atomic(src, "x\n")
    assert not p.exists()


@pytest.mark.parametrize("target", ["os.replace", "os.fsync"])
def test_write_failure_leaves_original(
    work: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    p = write(work / "a.py", b"precious\n")
    src = read_source(p)

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    # Back up first with the real functions, then break the write itself.
    real_save = files.save_step

    def save_then_break(*args: object, **kwargs: object) -> Path:
        dest = real_save(*args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(target, fail)
        return dest

    monkeypatch.setattr(files, "save_step", save_then_break)
    with pytest.raises(FileError, match="cannot write .*a.py: No space left on device"):
        write_atomic(src, "garbage\n")
    assert p.read_bytes() == b"precious\n"
    assert leftovers(work) == []
    assert list_backups(p) == []


def test_backup_failure_prevents_write(
    work: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = write(work / "a.py", b"precious\n")
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("a file where the state dir should be")
    with pytest.raises(FileError, match="cannot back up"):
        write_atomic(read_source(p), "new\n")
    assert p.read_bytes() == b"precious\n"


def test_write_through_symlink(work: Path) -> None:
    real = write(work / "real.py", b"old\n")
    real.chmod(0o640)
    link = work / "link.py"
    link.symlink_to(real)
    result = write_atomic(read_source(link), "new\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"
    assert result.path == real
    assert real.stat().st_mode & 0o7777 == 0o640
    assert list_backups(link) == list_backups(real)


def test_write_buffer_without_path() -> None:
    with pytest.raises(FileError, match="no file path"):
        write_atomic(source_from_text("x\n"), "y\n")


def test_write_buffer_matching_disk(work: Path) -> None:
    p = write(work / "a.py", b"x\n")
    write_atomic(source_from_text("x\n", p), "y\n")
    assert p.read_bytes() == b"y\n"


# ----------------------------------------------------------------------------- backups, undo


def test_undo_restores_and_pops(work: Path, state: Path) -> None:
    p = write(work / "a.py", b"v1\n")
    write_atomic(read_source(p), "v2\n")
    write_atomic(read_source(p), "v3\n")
    assert len(list_backups(p)) == 2
    assert undo(p).path == p
    assert p.read_bytes() == b"v2\n"
    assert undo(p).path == p
    assert p.read_bytes() == b"v1\n"
    assert list_backups(p) == []
    with pytest.raises(FileError, match="no backups of"):
        undo(p)
    redo = sorted(files.backup_dir(p).glob("*.redo"))
    assert [r.read_bytes() for r in redo] == [b"v3\n", b"v2\n"]
    assert leftovers(work) == []


def test_undo_keeps_mode(work: Path) -> None:
    p = write(work / "s.sh", b"a\n")
    p.chmod(0o750)
    write_atomic(read_source(p), "b\n")
    undo(p)
    assert p.read_bytes() == b"a\n"
    assert p.stat().st_mode & 0o7777 == 0o750


def test_undo_recreates_deleted_file(work: Path) -> None:
    p = write(work / "a.py", b"v1\n")
    write_atomic(read_source(p), "v2\n")
    p.unlink()
    undo(p)
    assert p.read_bytes() == b"v1\n"


def test_undo_without_backups(work: Path) -> None:
    with pytest.raises(FileError, match="no backups"):
        undo(write(work / "a.py", b"x\n"))


def test_backups_are_pruned(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backups, "MAX_BACKUPS", 3)
    p = write(work / "a.py", b"0\n")
    for i in range(1, 6):
        write_atomic(read_source(p), f"{i}\n")
    kept = list_backups(p)
    assert [b.read_bytes() for b in kept] == [b"2\n", b"3\n", b"4\n"]


def test_default_backup_limit_is_20() -> None:
    assert files.MAX_BACKUPS == backups.MAX_BACKUPS == 20


def test_backups_are_per_file(work: Path) -> None:
    a = write(work / "a.py", b"a\n")
    b = write(work / "b.py", b"b\n")
    write_atomic(read_source(a), "A\n")
    assert len(list_backups(a)) == 1 and list_backups(b) == []
    assert files.backup_dir(a) != files.backup_dir(b)


def test_state_dir_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECEDIT_STATE_DIR")
    assert state_dir() == platformdirs.user_state_path("specedit")


# ----------------------------------------------------------------------------- owners, links


def foreign_file(work: Path) -> Path:
    """A real file another user (nobody, 65534) owns, in a folder we may write."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    p = write(work / "theirs.py", b"their code\n")
    p.chmod(0o644)
    os.chown(p, 65534, 65534)
    return p


def test_another_users_file_is_refused(work: Path) -> None:
    p = foreign_file(work)
    with pytest.raises(FileError, match=r"belongs to another user \(uid 65534\).*--force"):
        write_atomic(read_source(p), "mine now\n")
    assert p.read_bytes() == b"their code\n" and list_backups(p) == []
    assert leftovers(work) == []


def test_forced_write_keeps_the_owner(work: Path) -> None:
    p = foreign_file(work)
    res = write_atomic(read_source(p), "mine now\n", force=True)
    st = p.stat()
    assert p.read_bytes() == b"mine now\n" and not res.in_place
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o644)


@pytest.mark.parametrize("new", ["a longer text than before\n" * 3, "short\n"])
def test_hard_link_is_written_in_place(work: Path, new: str) -> None:
    p = write(work / "a.py", b"old content, a few words long\n")
    twin = work / "twin.py"
    os.link(p, twin)
    inode = p.stat().st_ino
    res = write_atomic(read_source(p), new)
    assert res.in_place and p.stat().st_ino == inode and p.stat().st_nlink == 2
    assert twin.read_bytes() == p.read_bytes() == new.encode()
    assert res.backup_path is not None
    assert res.backup_path.read_bytes() == b"old content, a few words long\n"
    assert sorted(x.name for x in work.iterdir()) == ["a.py", "twin.py"]


def test_hard_link_conflict_is_checked_before_writing(work: Path) -> None:
    p = write(work / "a.py", b"v1\n")
    os.link(p, work / "twin.py")
    src = read_source(p)
    (work / "twin.py").write_bytes(b"edited through the other name\n")
    with pytest.raises(ConflictError):
        write_atomic(src, "llm\n")
    assert p.read_bytes() == b"edited through the other name\n" and list_backups(p) == []

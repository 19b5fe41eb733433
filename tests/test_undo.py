"""Undo and redo (specedit.app.store.undo): they never drop an edit made since specedit wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from specedit.app.cli.main import main
from specedit.app.store import backups
from specedit.app.store.files import FileError, list_backups, read_source, write_atomic
from specedit.app.store.undo import redo, undo


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "state"
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(root))
    return root


@pytest.fixture
def f(tmp_path: Path) -> Path:
    """A file specedit rewrote once: v1 (backed up) -> v2 (on disk)."""
    p = tmp_path / "work" / "a.py"
    p.parent.mkdir()
    p.write_bytes(b"v1\n")
    write_atomic(read_source(p), "v2\n")
    return p


def redo_steps(p: Path) -> list[Path]:
    return backups.list_steps(backups.backup_dir(p), ".redo")


def test_undo_names_the_backup_and_redo_puts_the_write_back(f: Path) -> None:
    [bak] = list_backups(f)
    r = undo(f)
    assert f.read_bytes() == b"v1\n"
    assert (r.path, r.step, r.forced) == (f, bak, False)
    assert r.saved is not None and r.saved.read_bytes() == b"v2\n" and r.saved.suffix == ".redo"
    assert list_backups(f) == [] and redo_steps(f) == [r.saved]
    rr = redo(f)
    assert f.read_bytes() == b"v2\n" and rr.step == r.saved and not rr.forced
    assert redo_steps(f) == [] and [b.read_bytes() for b in list_backups(f)] == [b"v1\n"]
    undo(f)  # and round again
    assert f.read_bytes() == b"v1\n"


def test_undo_refuses_when_the_file_changed_since_specedit_wrote_it(f: Path) -> None:
    f.write_bytes(b"v2\nthe user's later edit\n")
    [bak] = list_backups(f)
    with pytest.raises(FileError) as info:
        undo(f)
    msg = str(info.value)
    assert "changed since specedit wrote it" in msg and "nothing was restored" in msg
    assert "--force" in msg and str(bak) in msg and "\n" not in msg
    assert f.read_bytes() == b"v2\nthe user's later edit\n"
    assert list_backups(f) == [bak] and redo_steps(f) == []


def test_forced_undo_keeps_the_edit_for_redo(f: Path) -> None:
    f.write_bytes(b"v2\nthe user's later edit\n")
    r = undo(f, force=True)
    assert f.read_bytes() == b"v1\n" and r.forced
    assert r.saved is not None and r.saved.read_bytes() == b"v2\nthe user's later edit\n"
    redo(f)  # the file is what undo wrote: no force needed
    assert f.read_bytes() == b"v2\nthe user's later edit\n"


def test_redo_refuses_when_the_file_changed_since_undo(f: Path) -> None:
    undo(f)
    f.write_bytes(b"typed after the undo\n")
    with pytest.raises(FileError, match="changed since undo restored it.*redo --force"):
        redo(f)
    assert f.read_bytes() == b"typed after the undo\n"
    r = redo(f, force=True)
    assert f.read_bytes() == b"v2\n" and r.forced
    assert r.saved is not None and r.saved.read_bytes() == b"typed after the undo\n"
    undo(f)  # the text the forced redo displaced comes back
    assert f.read_bytes() == b"typed after the undo\n"


def test_undo_of_a_backup_without_record_needs_force(f: Path) -> None:
    [bak] = list_backups(f)
    bak.with_name(bak.name + ".json").unlink()  # as an older specedit left it
    with pytest.raises(FileError, match="cannot tell whether .* changed"):
        undo(f)
    assert f.read_bytes() == b"v2\n"
    undo(f, force=True)
    assert f.read_bytes() == b"v1\n"


def test_damaged_backup_is_refused(f: Path) -> None:
    [bak] = list_backups(f)
    bak.write_bytes(b"v1 with a flipped bit\n")
    with pytest.raises(FileError, match="is damaged"):
        undo(f, force=True)
    assert f.read_bytes() == b"v2\n"


def test_undo_when_the_write_never_happened(f: Path) -> None:
    """A write killed after its backup, before the rename: the file holds the backup's bytes.
    Undo pops that step without touching the file or saving a redo."""
    write_atomic(read_source(f), "v3\n")
    f.write_bytes(b"v2\n")  # as if the v3 write had died before its rename
    r = undo(f)
    assert f.read_bytes() == b"v2\n" and r.saved is None
    assert [b.read_bytes() for b in list_backups(f)] == [b"v1\n"]


def test_records_name_what_was_written(f: Path) -> None:
    [bak] = list_backups(f)
    rec = json.loads(bak.with_name(bak.name + ".json").read_text())
    src = read_source(f)
    assert rec["wrote"] == src.sha256 and rec["mode"] == src.mode


def test_undo_and_redo_on_the_command_line(f: Path, capsys: pytest.CaptureFixture) -> None:
    [bak] = list_backups(f)
    assert main(["undo", str(f)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"restored {f} from {bak}" in err and "specedit redo puts back" in err
    assert main(["redo", str(f)]) == 0
    assert f.read_bytes() == b"v2\n"
    f.write_bytes(b"mine\n")
    assert main(["undo", str(f)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "changed since specedit wrote it" in err and f.read_bytes() == b"mine\n"
    assert main(["undo", str(f), "--force"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    [saved] = redo_steps(f)
    assert f"your edits since were saved to {saved}" in err and "specedit redo puts them" in err
    assert f.read_bytes() == b"v1\n" and saved.read_bytes() == b"mine\n"
    assert main(["redo", str(f)]) == 0 and f.read_bytes() == b"mine\n"
    assert main(["redo", str(f)]) == 1
    assert "no undone writes" in capsys.readouterr().err


def test_undo_keeps_a_hard_link(f: Path) -> None:
    write_atomic(read_source(f), "v3\n")
    twin = f.with_name("twin.py")
    os.link(f, twin)
    undo(f)
    assert twin.read_bytes() == f.read_bytes() == b"v2\n"
    assert os.path.samefile(f, twin)

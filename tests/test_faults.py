"""Fault injection on the write path: a full disk at each step, SIGKILL at random points,
read-only files and folders, and a file changed while the model generates.

After every fault the user's file holds its old or its new content, never a mix; a failed
write leaves the old content, no temp file and one clear line. Helpers: ``tests/inject.py``.
"""

from __future__ import annotations

import errno
import os
import random
import sys
import threading
from pathlib import Path

import pytest
from inject import FaultyOS, check_whole, newest_step, run_and_kill, step_intact

from specedit.app.cli.main import main
from specedit.app.store.files import FileError, list_backups, read_source, write_atomic
from specedit.app.store.undo import undo

LONG = os.environ.get("SPECEDIT_LONG") == "1"

OLD = b"def add(a, b):\n    return a + b\n"
NEW = "def plus(a, b):\n    return a + b\n\n\nprint(plus(1, 2))\n"


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "state"
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(root))
    monkeypatch.delenv("SPECEDIT_BACKUP_DIR", raising=False)
    return root


@pytest.fixture
def target(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    p = d / "a.py"
    p.write_bytes(OLD)
    return p


def others(p: Path) -> list[str]:
    """Files beside ``p`` (temp files, rollback links): there must be none."""
    return sorted(x.name for x in p.parent.iterdir() if x.name not in (p.name, "twin.py"))


def temps(root: Path) -> list[Path]:
    return [x for x in root.rglob("*") if x.name.endswith(".tmp")] if root.exists() else []


def is_temp_of(p: Path):
    return lambda x: x.parent == p.parent and x.name.startswith(f".{p.name}.specedit-")


def in_backups(prefix: str):
    return lambda x: "backups" in x.parts and x.name.startswith(prefix)


# (step, os call, which path, half-written first)
DISK_FULL_STEPS = [
    ("temp file write", "write", lambda p: is_temp_of(p), False),
    ("temp file write, half done", "write", lambda p: is_temp_of(p), True),
    ("temp file fsync", "fsync", lambda p: is_temp_of(p), False),
    ("temp file mode", "fchmod", lambda p: is_temp_of(p), False),
    ("backup folder", "mkdir", lambda p: lambda x: x.parent.name == "backups", False),
    ("backup index", "write", lambda p: in_backups(".index.json."), False),
    ("backup record", "write", lambda p: in_backups(".record-"), False),
    ("backup write", "write", lambda p: in_backups(".backup-"), False),
    ("backup fsync", "fsync", lambda p: in_backups(".backup-"), False),
    ("backup rename", "replace", lambda p: lambda x: x.suffix == ".bak", False),
    ("backup folder fsync", "fsync", lambda p: lambda x: x.parent.name == "backups", False),
    ("rename", "replace", lambda p: lambda x: x == p, False),
    ("folder fsync", "fsync", lambda p: lambda x: x == p.parent, False),
]


@pytest.mark.parametrize(
    ("op", "on", "partial"),
    [s[1:] for s in DISK_FULL_STEPS],
    ids=[s[0] for s in DISK_FULL_STEPS],
)
def test_disk_full_at_each_step(target, state, op, on, partial) -> None:
    inode = target.stat().st_ino
    src = read_source(target)
    with FaultyOS(op, on(target), partial=partial) as faulty, pytest.raises(FileError) as info:
        write_atomic(src, NEW)
    assert faulty.fired, "the fault was never injected"
    msg = str(info.value)
    assert "No space left on device" in msg and "\n" not in msg
    assert msg.startswith(("cannot write", "cannot back up")), msg
    assert target.read_bytes() == OLD and target.stat().st_ino == inode
    assert others(target) == [] and temps(state) == []
    assert list_backups(target) == []  # no undo step for a write that did not happen
    # space again: the same write now succeeds
    write_atomic(read_source(target), NEW)
    assert target.read_bytes() == NEW.encode() and list_backups(target)


IN_PLACE_STEPS = [
    ("reserve space", "posix_fallocate", False),
    ("write", "pwrite", False),
    ("write, half done", "pwrite", True),
    ("truncate", "ftruncate", False),
    ("fsync", "fsync", False),
]


@pytest.mark.parametrize(
    ("op", "partial"), [s[1:] for s in IN_PLACE_STEPS], ids=[s[0] for s in IN_PLACE_STEPS]
)
def test_disk_full_while_writing_a_hard_link_in_place(target, state, op, partial) -> None:
    twin = target.with_name("twin.py")
    os.link(target, twin)
    src = read_source(target)
    faulty = FaultyOS(op, lambda x: x == target, partial=partial)
    with faulty, pytest.raises(FileError, match="No space left on device") as info:
        write_atomic(src, NEW * 50)  # longer: space is reserved first
    assert faulty.fired and "\n" not in str(info.value)
    assert target.read_bytes() == twin.read_bytes() == OLD and os.path.samefile(target, twin)
    assert others(target) == [] and temps(state) == [] and list_backups(target) == []


def test_in_place_write_that_cannot_be_undone_keeps_the_backup(target) -> None:
    """The write fails half-way and so does putting the old bytes back: the message names the
    backup, which is kept and intact, and undo --force repairs the file from it."""
    os.link(target, target.with_name("twin.py"))
    faulty = FaultyOS("pwrite", lambda x: x == target, partial=True, times=2)
    with faulty, pytest.raises(FileError, match="may be partly written: its previous content"):
        write_atomic(read_source(target), NEW * 50)
    assert target.read_bytes() not in (OLD, (NEW * 50).encode())  # the mix this case is about
    step = newest_step(target)
    assert step is not None and step_intact(step) and step.read_bytes() == OLD
    assert str(step) in str(list_backups(target))
    undo(target, force=True)
    assert target.read_bytes() == OLD


@pytest.mark.parametrize("op", ["write", "fsync", "replace"])
def test_disk_full_during_undo(target, state, op) -> None:
    write_atomic(read_source(target), NEW)
    [bak] = list_backups(target)
    on = (lambda x: x == target) if op == "replace" else is_temp_of(target)
    with FaultyOS(op, on) as faulty, pytest.raises(FileError, match="No space left on device"):
        undo(target)
    assert faulty.fired
    assert target.read_bytes() == NEW.encode() and list_backups(target) == [bak]
    assert others(target) == [] and temps(state) == [] and newest_step(target, ".redo") is None


# ----------------------------------------------------------------------------- permissions


def test_read_only_file_is_refused(target, capsys) -> None:
    target.chmod(0o444)
    with pytest.raises(FileError, match=r"a.py is read-only \(mode 444\); not writing it"):
        write_atomic(read_source(target), NEW)
    assert target.read_bytes() == OLD and list_backups(target) == [] and others(target) == []
    # the command line refuses before it loads a model (none is named: none would load)
    rc = main(["rewrite", str(target), "-i", "x", "--write", "--model", "/nonexistent.gguf"])
    err = " ".join(capsys.readouterr().err.split())
    assert rc == 1 and "read-only" in err and "--force" in err
    res = write_atomic(read_source(target), NEW, force=True)
    assert target.read_bytes() == NEW.encode() and not res.in_place
    assert target.stat().st_mode & 0o777 == 0o444  # forced, and still read-only


def test_read_only_folder_is_refused(target) -> None:
    folder = target.parent
    folder.chmod(0o555)
    try:
        with pytest.raises(FileError, match="its folder .* is read-only; not writing"):
            write_atomic(read_source(target), NEW)
        assert target.read_bytes() == OLD and list_backups(target) == [] and others(target) == []
        res = write_atomic(read_source(target), NEW, force=True)  # in place: no new name
        assert res.in_place and target.read_bytes() == NEW.encode()
    finally:
        folder.chmod(0o755)


# ----------------------------------------------------------------------------- SIGKILL

WRITER = """
import sys
from specedit.app.store.files import read_source, write_atomic
src = read_source(sys.argv[1])
new = open(sys.argv[2], encoding="utf-8").read()
print("ready", flush=True)
write_atomic(src, new)
"""


def big_text(version: int) -> str:
    """About 3.4 MB whose every line names its version, so any mix shows."""
    return "".join(f"line {i:06d} of version {version:03d}\n" for i in range(110_000))


def check_after_kill(p: Path, old: bytes, new: bytes) -> str:
    now = p.read_bytes()
    assert now in (old, new), f"{p} holds a mix of old and new ({len(now)} bytes)"
    step = newest_step(p)
    if now == new:
        assert step is not None and step.read_bytes() == old
    if step is not None:
        assert step_intact(step)
    return "new" if now == new else "old"


def test_sigkill_during_write_atomic(tmp_path, state) -> None:
    """A real process writes a 3.4 MB file with write_atomic and is SIGKILLed at 40 seeded
    random points of the write; the file is always whole, old or new, and the backup intact."""
    p = tmp_path / "big.txt"
    p.write_text(big_text(0))
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(state)}
    rng = random.Random(12)

    def run(version: int, delay: float):
        new = tmp_path / "new.txt"
        new.write_text(big_text(version))
        cmd = [sys.executable, "-c", WRITER, str(p), str(new)]
        return run_and_kill(cmd, delay_s=delay, trigger="ready", env=env), new.read_bytes()

    first, _ = run(1, 600.0)  # not killed: how long a whole write takes here
    assert not first.killed and first.returncode == 0, first.output
    window = first.ran_s * 1.1
    outcomes = []
    for version in range(2, 42):
        old = p.read_bytes()
        kill, new = run(version, rng.uniform(0, window))
        outcomes.append(check_after_kill(p, old, new) + ("" if kill.killed else " (done)"))
        for leftover in p.parent.glob(".big.txt.specedit-*"):
            leftover.unlink()  # a kill can leave a temp file beside it: never the file itself
    assert len(outcomes) == 40
    counts = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    print(f"\n40 kills at random points of a {first.ran_s:.3f} s write: {counts}")


# ----------------------------------------------------------------------------- the real CLI

SMALL = b"def add(a, b):\n    return a + b\n"
INSTRUCTION = "Rename the function add to plus."


@pytest.mark.model
def test_sigkill_during_cli_rewrite_write(tmp_path, state, qwen05_path) -> None:
    """``specedit rewrite --write`` on the real 0.5B, SIGKILLed at random points of the whole
    run and right after its backup (the write's own window): the file is always whole."""
    p = tmp_path / "m.py"
    state.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(state)}
    cmd = [
        sys.executable,
        "-m",
        "specedit.app.cli",
        "--log-level",
        "DEBUG",
        "rewrite",
        str(p),
    ]
    cmd += ["-i", INSTRUCTION, "--write", "--model", str(qwen05_path), "--max-tokens", "100"]
    cmd += ["--no-prompt-cache", "--ctx", "2048", "--exact"]  # the text is asserted
    p.write_bytes(SMALL)
    whole = run_and_kill(cmd, delay_s=900, env=env)  # not killed: the run's length
    assert not whole.killed and whole.returncode == 0, "".join(whole.output[-20:])
    assert check_whole(p, SMALL) == "new" and b"def plus(" in p.read_bytes()
    rng = random.Random(7)
    kills = 3 if LONG else 2  # of each kind: make test-long kills 6 runs, the default suite 4
    plans = [(rng.uniform(0, whole.ran_s), None) for _ in range(kills)]
    plans += [(rng.uniform(0, 0.02), "saved .bak of") for _ in range(kills)]
    outcomes = []
    for delay, trigger in plans:
        p.write_bytes(SMALL)
        kill = run_and_kill(cmd, delay_s=delay, trigger=trigger, env=env)
        outcomes.append(check_whole(p, SMALL) + ("" if kill.killed else " (done)"))
        assert kill.killed or kill.returncode == 0, "".join(kill.output[-20:])
    print(
        f"\n{len(plans)} kills of specedit rewrite --write ({whole.ran_s:.1f} s runs): {outcomes}"
    )


@pytest.mark.model
def test_file_changed_while_the_model_generates(target, qwen05, monkeypatch, capsys) -> None:
    """Another thread edits the file once the model has begun to stream its output:
    ``specedit rewrite --write`` refuses as a conflict and the user's edit stays."""
    from specedit.app.cli import main as cli
    from specedit.app.edit import rewrite as rewrite_mod

    target.write_bytes(SMALL)
    edit = b"def add(a, b):\n    # typed by the user while the model ran\n    return a + b\n"
    changed = threading.Event()
    real = rewrite_mod.rewrite

    def rewrite(loaded, text, opts, **kw):
        def on_text(piece: str) -> None:
            if not changed.is_set():
                t = threading.Thread(target=target.write_bytes, args=(edit,))
                t.start()
                t.join()
                changed.set()

        return real(loaded, text, opts, **{**kw, "on_text": on_text})

    monkeypatch.setattr(rewrite_mod, "rewrite", rewrite)
    monkeypatch.setattr(cli, "_load", lambda a: qwen05)  # the loaded 0.5B, not a second one
    rc = main(["rewrite", str(target), "-i", INSTRUCTION, "--write", "--no-prompt-cache"])
    err = " ".join(capsys.readouterr().err.split())
    assert changed.is_set(), "the model streamed nothing"
    assert rc == 1 and "changed on disk since it was read" in err, err
    assert target.read_bytes() == edit and list_backups(target) == [] and others(target) == []


def test_forced_write_when_the_owner_cannot_be_kept(target) -> None:
    """If the new file cannot be given the old owner (chown refused), a forced write goes in
    place, so the owner stays; it never becomes the writer's file."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    os.chown(target, 65534, 65534)
    faulty = FaultyOS("chown", is_temp_of(target), err=errno.EPERM)
    with faulty:
        res = write_atomic(read_source(target), NEW, force=True)
    assert faulty.fired and res.in_place
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (65534, 65534) and target.read_bytes() == NEW.encode()
    assert others(target) == []

"""app.server.paths: where the socket lives, the rule for its directory, the claim on it.

No model: the CLI cases fail (on purpose) before or at the model load.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import platformdirs
import pytest

from specedit.app.server import paths as sp
from specedit.app.server.paths import AlreadyRunning, ServerSetupError

OTHER_UID = 54321


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"XDG_RUNTIME_DIR": "/run/user/7"}, "/run/user/7/specedit/rpc.sock"),
        ({"XDG_CACHE_HOME": "/xc", "HOME": "/h"}, "/xc/specedit/run/rpc.sock"),
        ({"XDG_CACHE_HOME": "/xc/", "HOME": "/h"}, "/xc/specedit/run/rpc.sock"),
        ({"HOME": "/h"}, "/h/.cache/specedit/run/rpc.sock"),
        ({"HOME": "/h", "XDG_CACHE_HOME": "rel", "XDG_RUNTIME_DIR": "rel"}, None),
    ],
)
def test_default_socket_path(monkeypatch, env, expected):
    for k in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TMPDIR", "/shared-tmp")
    got = sp.default_socket_path()
    if expected is None:  # relative variables are ignored, as platformdirs ignores them
        expected = "/h/.cache/specedit/run/rpc.sock"
    assert str(got) == expected
    assert not str(got).startswith(("/shared-tmp", tempfile.gettempdir()))
    if "XDG_RUNTIME_DIR" not in env or not env["XDG_RUNTIME_DIR"].startswith("/"):
        # the fallback is the user cache dir, as the models' platformdirs has it
        assert got.parent == platformdirs.user_cache_path("specedit") / "run"


def test_private_dir_creates_0700_with_parents(tmp_path):
    d = tmp_path / "a" / "b" / "run"
    old = os.umask(0o277)  # a umask that takes even the owner's write bit away
    try:
        assert sp.private_dir(d) == d
    finally:
        os.umask(old)
    assert _mode(d) == 0o700 and _mode(d.parent) == 0o700 and _mode(d.parent.parent) == 0o700
    assert sp.private_dir(d) == d  # an existing private one is accepted as it is


def test_private_dir_never_changes_an_existing_dir(tmp_path):
    for mode in (0o755, 0o750, 0o777, 0o711):
        d = tmp_path / f"m{mode:o}"
        d.mkdir()
        d.chmod(mode)
        with pytest.raises(ServerSetupError, match=f"mode {mode:04o}, not 0700"):
            sp.private_dir(d)
        assert _mode(d) == mode  # refused, never chmodded
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(ServerSetupError, match="is a symlink"):
        sp.private_dir(link)
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(ServerSetupError, match="not a directory"):
        sp.private_dir(f)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown to another uid")
def test_private_dir_refuses_another_users_dir(tmp_path):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, OTHER_UID, OTHER_UID)
    with pytest.raises(ServerSetupError, match=f"belongs to uid {OTHER_UID}, not to you"):
        sp.private_dir(d)
    assert os.lstat(d).st_uid == OTHER_UID


def test_claim_release_leaves_no_lock(tmp_path):
    sock = tmp_path / "run" / "rpc.sock"
    fd = sp.claim(sock)
    lock = sock.with_suffix(".lock")
    assert lock.exists() and _mode(lock) == 0o600
    with pytest.raises(AlreadyRunning):
        sp.claim(sock)
    assert lock.exists()  # a refused claim leaves the owner's lock alone
    sp.release(sock, fd)
    assert not lock.exists()
    sp.release(sock, sp.claim(sock))
    assert not lock.exists()


def test_claim_refuses_a_live_socket_and_leaves_no_lock(tmp_path):
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    sock = d / "rpc.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.listen(1)
    try:
        with pytest.raises(AlreadyRunning, match="already answers"):
            sp.claim(sock)
    finally:
        s.close()
    assert not sock.with_suffix(".lock").exists()


def test_lock_retries_when_the_file_was_released_under_it(tmp_path, monkeypatch):
    """A claim that opened the lock file just before its owner released (unlinked) it must
    not lock the unlinked file: that would exclude no one."""
    sock = tmp_path / "run" / "rpc.sock"
    owner = sp.claim(sock)
    real_flock = sp.fcntl.flock
    calls = []

    def flock(fd, op):
        if not calls:
            sp.release(sock, owner)  # between the newcomer's open and its flock
        calls.append(fd)
        return real_flock(fd, op)

    monkeypatch.setattr(sp.fcntl, "flock", flock)
    fd = sp._lock(sock.with_suffix(".lock"))
    assert fd is not None and len(calls) == 2
    assert sp._same_file(fd, sock.with_suffix(".lock"))
    sp.release(sock, fd)


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "specedit.app.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_serve_refuses_an_existing_open_dir_without_touching_it(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o755)
    p = _serve("--socket", str(d / "rpc.sock"), "--model", str(tmp_path / "none.gguf"))
    assert p.returncode == 1
    assert "has mode 0755, not 0700" in " ".join(p.stderr.split())  # (rich may wrap it)
    assert "Traceback" not in p.stderr
    assert _mode(d) == 0o755  # before the fix: silently chmodded to 0700
    assert list(d.iterdir()) == []  # no rpc.lock


def test_serve_leaves_no_lock_when_the_model_fails(tmp_path):
    sock = tmp_path / "new" / "rpc.sock"
    p = _serve("--socket", str(sock), "--model", str(tmp_path / "none.gguf"))
    assert p.returncode == 1 and "not found" in " ".join(p.stderr.split())
    assert _mode(sock.parent) == 0o700  # created by the server, so private
    assert list(sock.parent.iterdir()) == []  # before the fix: rpc.lock stayed

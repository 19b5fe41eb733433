"""``specedit rename`` and the server's ``refactor/rename``: rope's rename of a Python name in
one file, with no model. What rope renames and leaves (``os.environ.get`` beside a method
``get``), what is refused (exit status 1, one line, the file byte-identical), what is
only flagged, and that only the file itself is ever read or written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rpc_client import RpcClient
from toy_server import toy_loaded

from specedit.app.cli.main import main
from specedit.app.code.refactor import Renamed, RenameError, rename_python
from specedit.app.server import ServerThread
from specedit.app.store.files import list_backups

STORE = '''import os


class Store:
    """A key-value store over the environment."""

    def __init__(self):
        self._data = {}

    def get(self, key):
        return self._data.get(key, os.environ.get(key))


def lookup(name):
    cache = {"a": 1}
    return Store().get(name) or cache.get(name)
'''


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))


def _file(tmp_path: Path, text: str, name: str = "store.py") -> Path:
    d = tmp_path / "src"
    d.mkdir(exist_ok=True)
    f = d / name
    f.write_text(text)
    return f


def _run(capsys, *argv: str) -> tuple[int, str, list[str]]:
    rc = main(["rename", *argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err.splitlines()


def _renamed(text: str, old: str, new: str, **kw) -> Renamed:
    res = rename_python(text, old, new, **kw)
    assert isinstance(res, Renamed), res
    return res


def _refused(text: str, old: str, new: str, **kw) -> RenameError:
    res = rename_python(text, old, new, **kw)
    assert isinstance(res, RenameError), res
    return res


def test_a_method_and_its_calls_are_renamed_and_other_gets_stay(tmp_path, capsys):
    f = _file(tmp_path, STORE)
    rc, out, err = _run(capsys, str(f), "get", "fetch")
    assert rc == 0
    assert "-    def get(self, key):\n+    def fetch(self, key):\n" in out
    assert "+    return Store().fetch(name) or cache.get(name)\n" in out
    # rope's analysis: the dict's .get and os.environ.get are other methods
    assert "self._data.get(key, os.environ.get(key))" not in "".join(
        ln for ln in out.splitlines(keepends=True) if ln.startswith(("-", "+"))
    )
    assert err == ["renamed get to fetch: 2 occurrences on 2 lines (rope, no model)"]
    assert f.read_text() == STORE  # no --write: the diff only
    # rope ran on a private copy: nothing (no .ropeproject) was written beside the file
    assert sorted(p.name for p in f.parent.iterdir()) == ["store.py"]


def test_a_local_in_an_f_string_is_renamed_inside_it():
    text = (
        'def report(count):\n    total = count * 2\n    return f"{count} items, {total} in all"\n'
    )
    res = _renamed(text, "count", "n")
    assert res.new_text == (
        'def report(n):\n    total = n * 2\n    return f"{n} items, {total} in all"\n'
    )
    assert res.changed_lines == (1, 2, 3) and res.occurrences == 3 and not res.notes


def test_an_f_string_debug_specifier_is_flagged():
    res = _renamed('def f(count):\n    return f"{count=}"\n', "count", "n")
    assert res.new_text == 'def f(n):\n    return f"{n=}"\n'
    assert [(n.line, n.kind) for n in res.notes] == [(2, "fstring")]  # it now prints "n="
    assert not res.doubtful


ALL = '__all__ = ["Parser"]\n\n\nclass Parser:\n    """The Parser of the format."""\n\n\ndef parse(text):\n    return Parser().feed(text)  # a Parser each time\n'


def test_all_keeps_the_string_unless_docs(tmp_path, capsys):
    """rope renames inside strings and comments only with its ``docs`` option: by default
    ``__all__`` still lists "Parser" (a note says so); ``--docs`` renames it there and in
    the docstring and the comment too."""
    res = _renamed(ALL, "Parser", "Reader")
    assert res.new_text == ALL.replace("class Parser", "class Reader").replace(
        "return Parser()", "return Reader()"
    )
    assert '__all__ = ["Parser"]' in res.new_text
    assert [(n.line, n.kind) for n in res.notes] == [(1, "all")]
    assert not res.doubtful
    docs = _renamed(ALL, "Parser", "Reader", docs=True)
    assert docs.new_text == ALL.replace("Parser", "Reader") and not docs.notes

    f = _file(tmp_path, ALL, "fmt.py")
    rc, _, err = _run(capsys, str(f), "Parser", "Reader")
    assert rc == 0 and err[0].startswith("warning: line 1: __all__ still lists 'Parser'")


TWO = """class Cache:
    def get(self, key):
        return key


class Registry:
    def get(self, key):
        return None


Cache().get(1)
Registry().get(2)
"""


def test_line_picks_between_two_definitions(tmp_path, capsys):
    f = _file(tmp_path, TWO)
    rc, out, err = _run(capsys, str(f), "get", "fetch")
    assert rc == 1 and out == ""
    assert err == [
        f"error: {f}: get names 2 different things here (defined on lines 2, 7): pick one by "
        "its line (--line N)"
    ]
    rc, out, err = _run(capsys, str(f), "get", "fetch", "--line", "7", "--json")
    assert rc == 0 and err == []
    obj = json.loads(out)
    assert obj["status"] == "ok" and obj["line"] == 6 and obj["changedLines"] == [6, 11]
    assert obj["newText"] == TWO.replace(
        "    def get(self, key):\n        return None",
        "    def fetch(self, key):\n        return None",
    ).replace("Registry().get", "Registry().fetch")
    assert "Cache().get(1)" in obj["newText"] and not obj["written"]
    assert f.read_text() == TWO


@pytest.mark.parametrize(
    ("name", "text", "argv", "message"),
    [
        ("store.py", STORE, ["missing", "x"], "missing does not occur in the file as a name"),
        ("store.py", STORE, ["get", "not valid"], "'not valid' is not a Python identifier"),
        ("store.py", STORE, ["get", "class"], "'class' is not a Python identifier"),
        ("store.py", STORE, ["lookup", "Store"], "Store is already bound in the module"),
        ("store.py", STORE, ["name", "cache"], "cache is already bound in function lookup"),
        ("store.py", STORE, ["get", "x", "--line", "3"], "get does not occur on line 3 as a name"),
        ("store.py", STORE, ["environ", "env"], "environ is not defined in this file"),
        ("broken.py", "def f(:\n    pass\n", ["f", "g"], "does not parse as Python (line 1"),
        ("notes.txt", "get = 1\n", ["get", "fetch"], "is not a Python file"),
        ("main.rs", "fn get() {}\n", ["get", "fetch"], "is not a Python file"),
    ],
)
def test_errors_exit_2_with_one_line_and_leave_the_file(
    tmp_path, capsys, name, text, argv, message
):
    f = _file(tmp_path, text, name)
    before = f.read_bytes()
    rc, out, err = _run(capsys, str(f), *argv, "--write")
    assert rc == 1 and out == ""
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert f.read_bytes() == before
    assert sorted(p.name for p in f.parent.iterdir()) == [name]
    assert not list_backups(f)


def test_write_writes_atomically_with_a_backup_and_undo_restores(tmp_path, capsys):
    f = _file(tmp_path, STORE)
    rc, out, err = _run(capsys, str(f), "get", "fetch", "--write")
    assert rc == 0 and out.startswith(f"--- a/{f}\n")
    assert f.read_text() == STORE.replace("def get(", "def fetch(").replace(
        "Store().get(", "Store().fetch("
    )
    (backup,) = list_backups(f)
    assert backup.read_text() == STORE
    assert err[-1].startswith(f"wrote {f.resolve()} (backup {backup}; undo: specedit undo ")
    assert main(["undo", str(f)]) == 0
    assert f.read_text() == STORE


def test_a_crlf_file_keeps_its_line_endings(tmp_path, capsys):
    f = _file(tmp_path, "")
    f.write_bytes(b"def f(a):\r\n    return a\r\n")
    rc, _, _ = _run(capsys, str(f), "a", "b", "--write")
    assert rc == 0 and f.read_bytes() == b"def f(b):\r\n    return b\r\n"


UNSURE = """class Store:
    def get(self, key):
        return key


def use(store: Store, other):
    return store.get(1), other.get(2)
"""


def test_what_rope_is_unsure_of_is_left_flagged_and_written_only_with_force(tmp_path, capsys):
    """rope does not read the parameter's annotation: ``store.get`` is one it cannot tell,
    like ``other.get``; both stay, a warning names the line, and --write needs --force."""
    res = _renamed(UNSURE, "get", "fetch")
    assert res.changed_lines == (2,) and res.doubtful
    assert [(n.line, n.kind) for n in res.notes] == [(7, "unsure")]
    f = _file(tmp_path, UNSURE)
    rc, out, err = _run(capsys, str(f), "get", "fetch", "--write")
    assert rc == 1 and "+    def fetch(self, key):" in out
    assert err[0].startswith("warning: line 7: rope could not tell")
    assert err[-1].startswith("error: ") and "--force writes it anyway" in err[-1]
    assert f.read_text() == UNSURE and not list_backups(f)
    rc, _, _ = _run(capsys, str(f), "get", "fetch", "--write", "--force")
    assert rc == 0 and f.read_text() == UNSURE.replace("def get(", "def fetch(")


def test_a_property_and_its_setter_are_renamed():
    """rope is unsure of ``@size.setter``; a plain name in the definition's own scope is
    certain by Python's scoping, so it is renamed, not left undefined."""
    text = "class Box:\n    @property\n    def size(self):\n        return 1\n\n    @size.setter\n    def size(self, v):\n        pass\n\n\nBox().size = 3\n"
    res = _renamed(text, "size", "extent", line=3)
    assert res.new_text == text.replace("size", "extent") and not res.notes


def test_a_rename_that_would_capture_or_shadow_is_refused():
    inner = "x = 1\n\n\ndef f():\n    y = 2\n    return x + y\n"
    assert _refused(inner, "x", "y").message.startswith("y is already bound in function f")
    builtin = "limit = 3\nprint(limit)\n"
    msg = _refused(builtin, "limit", "print").message
    assert msg.startswith("print is already used (a builtin) in the module")
    attr = "class P:\n    def __init__(self):\n        self.size = 1\n        self.count = 2\n"
    assert _refused(attr, "size", "count", line=3).kind == "taken"
    dup = "def f(a, b):\n    return a\n"
    assert _refused(dup, "a", "b").kind == "taken"


def test_an_imported_name_is_not_renamed_in_its_import():
    text = "from os.path import join\n\njoin('a', 'b')\n"
    err = _refused(text, "join", "path_join")
    assert err.kind == "external" and "import it as path_join" in err.message
    alias = "import os.path as osp\n\nosp.join('a')\n"
    assert _renamed(alias, "osp", "paths").new_text == alias.replace("osp", "paths")
    assert _refused("print(len([]))\n", "len", "size", line=1).kind == "external"


def test_a_subclass_of_a_builtin_is_flagged():
    """rope reads ``Store()`` of ``class Store(dict)`` as a dict: its ``.get`` stays, and the
    result is flagged as doubtful rather than passed as complete."""
    text = "class Store(dict):\n    def get(self, key):\n        return 1\n\n\nStore().get(2)\n"
    res = _renamed(text, "get", "fetch")
    assert res.changed_lines == (2,)
    assert [(n.line, n.kind) for n in res.notes] == [(6, "builtin_base")] and res.doubtful


def test_overrides_in_the_file_follow_the_method():
    text = "class Base:\n    def run(self):\n        return 1\n\n\nclass Sub(Base):\n    def run(self):\n        return 2\n\n\nclass Other:\n    def run(self):\n        return 3\n\n\nSub().run()\nOther().run()\n"
    res = _renamed(text, "run", "start", line=2)
    assert res.changed_lines == (2, 7, 16)  # Other.run is another method


# ----------------------------------------------------------------------------- the server


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    d = tmp_path_factory.mktemp("srv")
    mp = pytest.MonkeyPatch()
    mp.setenv("SPECEDIT_STATE_DIR", str(d / "state"))
    with ServerThread(toy_loaded(), d / "run" / "rpc.sock") as st:
        c = RpcClient.unix(st.socket_path)
        c.call("initialize", {"client": "pytest", "version": "1"})
        yield c
        c.close()
    mp.undo()


def test_server_renames_a_text_without_writing(client):
    res = client.call("refactor/rename", {"text": TWO, "old": "get", "new": "fetch", "line": 1})
    assert res["line"] == 1 and res["changedLines"] == [1, 10] and res["occurrences"] == 2
    assert [(h["startLine"], h["endLine"]) for h in res["hunks"]] == [(1, 2), (10, 11)]
    assert res["newText"].startswith("class Cache:\n    def fetch(self, key):\n")
    assert "baseSha256" not in res and res["notes"] == [] and res["doubtful"] is False


def test_server_reads_a_path_and_leaves_it(client, tmp_path):
    f = _file(tmp_path, STORE)
    res = client.call("refactor/rename", {"path": str(f), "old": "get", "new": "fetch"})
    assert res["changedLines"] == [9, 15] and len(res["baseSha256"]) == 64
    assert f.read_text() == STORE and sorted(os.listdir(f.parent)) == ["store.py"]


def test_server_errors(client, tmp_path):
    def error(params):
        return client.request("refactor/rename", params)["error"]

    assert error({"text": TWO, "old": "get"})["code"] == -32602
    assert error({"old": "get", "new": "x", "path": "rel.py"})["code"] == -32602
    assert error({"text": TWO, "old": "get", "new": "x", "line": -1})["code"] == -32602
    assert error({"text": TWO, "old": "get", "new": "no way"})["code"] == -32602
    e = error({"text": TWO, "old": "get", "new": "fetch"})
    assert e["code"] == -32803 and e["data"] == {"kind": "ambiguous"}
    e = error({"text": "def f(:\n", "old": "f", "new": "g"})
    assert e["code"] == -32803 and e["data"] == {"kind": "syntax"}
    e = error({"text": "x = 1\n", "old": "x", "new": "y", "path": "a.js"})
    assert e["data"] == {"kind": "not_python"}
    e = error({"path": str(tmp_path / "gone.py"), "old": "x", "new": "y"})
    assert e["code"] == -32803 and e["data"] == {"kind": "file"}

"""``app/check/asked.py``: the place an instruction opens with, and the names it writes as code,
read from the instruction (``app/check/intent.py``) and checked against the two texts."""

from __future__ import annotations

import pytest

from specedit.app.check.asked import name_missing, place_missed
from specedit.app.check.checks import vouch
from specedit.app.check.intent import read_intent, spelled_names
from specedit.app.check.verdict import Verdict
from specedit.app.code.source import Change, Source
from specedit.app.code.syntax import definitions

PY = (
    "import urllib.request\n"
    "\n"
    "MAX_ATTEMPTS = 3\n"
    "STALE_AFTER = 30\n"
    "\n"
    "\n"
    "def fetch_json(url):\n"
    "    with urllib.request.urlopen(url) as resp:\n"
    "        return resp.read()\n"
    "\n"
    "\n"
    "def deliver(url, timeout=None):\n"
    "    with urllib.request.urlopen(url, timeout=timeout) as resp:\n"
    "        return resp.status\n"
    "\n"
    "\n"
    "def connect(open_):\n"
    "    for _ in range(MAX_ATTEMPTS):\n"
    "        if open_():\n"
    "            return True\n"
    "    return False\n"
    "\n"
    "\n"
    "class Money:\n"
    "    def __init__(self, amount):\n"
    "        self.amount = amount\n"
    "\n"
    "    def __str__(self):\n"
    "        return str(self.amount)\n"
    "\n"
    "\n"
    "def total(xs):\n"
    "    return sum(xs)\n"
)


def intent(instruction: str, text: str = PY, path: str = "m.py"):
    return read_intent(instruction, Source(text, path))


def change(new: str, old: str = PY, path: str = "m.py") -> Change:
    return Change.of(old, new, path)


@pytest.mark.parametrize(
    "instruction, names",
    [
        ("Money.__repr__ -> Money('12.50', 'EUR')", ["__repr__", "Money"]),
        ("Add a `-k N` option to backup.sh, parsed with `getopts` in `main`.", ["getopts", "main"]),
        ("fetch_json: timeout=10, pass to urlopen", ["fetch_json", "timeout"]),
        (
            "In `Emitter.once`, call `this.off(event, wrapper)` first",
            ["Emitter", "once", "this", "off"],
        ),
        (
            "Let me pass format_bytes(n, precision=2) in tsconfig.json",
            ["format_bytes", "precision"],
        ),
        ("production autoscaling: minReplicas 4", ["minReplicas"]),
        ("Make the retry count five, please.", []),
        ("Keep src/**/*.test.ts out of pyproject.toml", []),
    ],
)
def test_names_written_as_code(instruction, names):
    assert spelled_names(instruction) == names


@pytest.mark.parametrize(
    "instruction, place",
    [
        ("fetch_json: timeout=10, pass to urlopen", ["fetch_json"]),
        ("In `connect`, try five times.", ["connect"]),
        ("In the function deliver, wait 10 seconds.", ["deliver"]),
        ("connect: 5 attempts instead of 3", ["connect"]),
        ("Money.__str__: show the currency", ["Money.__str__"]),
        ("Make connect try five times.", []),  # named, but not as where it opens
        ("Set MAX_ATTEMPTS to 5 so that `connect` tries five times.", []),
        ("Note: connect should try five times.", []),  # no definition is called Note
    ],
)
def test_the_place_an_instruction_opens_with(instruction, place):
    assert [d.name for d in intent(instruction).place] == place


def test_rust_impl_methods_are_named_by_their_type_and_read_with_colons():
    rs = (
        "struct Config<T> { a: T }\n"
        "impl<T> Config<T> {\n    fn port(&self) -> u16 { 1 }\n}\n"
        "impl std::fmt::Display for ParseError {\n    fn fmt(&self) {}\n}\n"
    )
    assert [d.name for d in definitions(rs, "rust")] == [
        "Config",
        "Config",
        "Config.port",
        "ParseError",
        "ParseError.fmt",
    ]
    i = read_intent("Config::port: no unwrap, fall back to 8080", Source(rs, "a.rs"))
    assert [d.name for d in i.place] == ["Config.port"]
    assert [d.name for d in read_intent("Change `Config::port`.", Source(rs, "a.rs")).named] == [
        "Config.port"
    ]


def test_a_change_made_elsewhere_than_the_place_is_flagged_with_where():
    new = PY.replace("urlopen(url, timeout=timeout)", "urlopen(url, timeout=10)")
    s = place_missed(change(new), intent("fetch_json: timeout=10, pass to urlopen"))
    assert s is not None and s.reason is Verdict.PLACE_MISSED
    assert s.message == (
        "the instruction opens with fetch_json, and the result changes nothing in it "
        "(it changes line 13)"
    )


def test_a_constant_the_place_reads_is_the_place_but_another_is_not():
    new = PY.replace("MAX_ATTEMPTS = 3", "MAX_ATTEMPTS = 5")
    assert place_missed(change(new), intent("connect: 5 attempts instead of 3")) is None
    new = PY.replace("STALE_AFTER = 30", "STALE_AFTER = 60")
    s = place_missed(change(new), intent("In `connect`, wait 60 between attempts."))
    assert s is not None and "line 4" in s.message


def test_a_change_in_the_place_passes():
    new = PY.replace("urlopen(url) as", "urlopen(url, timeout=10) as")
    assert place_missed(change(new), intent("fetch_json: timeout=10, pass to urlopen")) is None


def test_a_method_added_after_a_blank_line_at_a_class_end_is_inside_it():
    method = "    def __repr__(self):\n        return f'Money({self.amount!r})'\n\n"
    new = PY.replace("\n\ndef total", "\n" + method + "\ndef total")
    assert new.count("__repr__") == 1 and "str(self.amount)\n\n    def __repr__" in new
    verdicts = vouch(change(new), intent("Money: add a `__repr__`."))
    assert verdicts == []
    # a top-level function added at the same place is not inside the class
    top = "def extra():\n    return 1\n\n\n"
    other = PY.replace("def total", top + "def total")
    reasons = [v.reason for v in vouch(change(other), intent("Money: add a `__repr__`."))]
    assert Verdict.PLACE_MISSED in reasons


def test_a_name_written_as_code_that_neither_text_has_is_flagged():
    new = PY.replace("return str(self.amount)", "return f'Money({self.amount!r})'")
    s = name_missing(change(new), intent("Money.__repr__ -> Money('12.50')"))
    assert s is not None and s.reason is Verdict.NAME_MISSING
    assert (
        s.message == "the instruction writes __repr__, and neither the file nor the result has it"
    )
    # the same answer, asked without a name written as code, passes
    assert name_missing(change(new), intent("Show money as Money('12.50')")) is None


def test_a_name_the_result_brings_or_the_file_had_passes():
    new = PY.replace("def total(xs):", "def total(xs, precision=2):")
    assert name_missing(change(new), intent("Let me pass total(xs, precision=2).")) is None
    assert name_missing(change(new), intent("In `total`, use `sum`.")) is None
    assert name_missing(change(PY), intent("Use `getopts`.")) is None  # no change: no_change says


def test_the_checks_run_in_order_and_a_round_may_mend_them():
    from specedit.app.edit.rounds import _SCOPED, _TOUCHED, FLAGS

    assert {Verdict.PLACE_MISSED, Verdict.NAME_MISSING} <= FLAGS
    assert Verdict.PLACE_MISSED in _SCOPED and Verdict.NAME_MISSING in _TOUCHED
    new = PY.replace("urlopen(url, timeout=timeout)", "urlopen(url, timeout=10)")
    reasons = [
        v.reason for v in vouch(change(new), intent("fetch_json: pass timeout=10 to `urlopener`"))
    ]
    assert reasons[:2] == [Verdict.PLACE_MISSED, Verdict.NAME_MISSING]

"""``outside_named`` lets by a hunk of comments only and one in a function the named one
calls (``app.check.nearby``), and still flags a change elsewhere and a doc comment deleted."""

from specedit.app.check.checks import outside_named
from specedit.app.check.intent import read_intent
from specedit.app.check.nearby import called, comments_only
from specedit.app.code.diff import Hunk
from specedit.app.code.source import Change, Source

RUST = """//! Durations: "90s", "1h30m".
//!
//! Groups add up.

fn unit_seconds(unit: &str) -> Option<u64> {
    match unit {
        "s" => Some(1),
        "m" => Some(60),
        _ => None,
    }
}

fn describe(unit: &str) -> String {
    format!("unit {unit}")
}

/// Parse `text` ("45s", "1h30m") into seconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let (n, unit) = text.split_at(text.len() - 1);
    Some(n.parse::<u64>().ok()? * unit_seconds(unit)?)
}
"""


def _verdict(new: str, instruction: str):
    c = Change.of(RUST, new, "duration.rs")
    return outside_named(c, read_intent(instruction, Source(RUST, "duration.rs")))


def test_a_callee_and_a_doc_comment_go_with_the_named_function():
    new = RUST.replace('"m" => Some(60),', '"m" => Some(60),\n        "h" => Some(3_600),')
    new = new.replace('("45s", "1h30m")', '("45s", "1h30m", "2h")')
    assert _verdict(new, "parse_duration: accept the h unit") is None


def test_a_change_to_a_function_it_does_not_call_is_flagged():
    new = RUST.replace('format!("unit {unit}")', 'format!("the unit {unit}")')
    v = _verdict(new, "parse_duration: accept the h unit")
    assert v is not None and v.message == (
        "the result also changes line 14, outside parse_duration, which the instruction names"
    )


def test_a_deleted_doc_comment_is_still_flagged():
    new = RUST.replace('//! Durations: "90s", "1h30m".\n//!\n//! Groups add up.\n\n', "")
    new = new.replace('"m" => Some(60),', '"m" => Some(60),\n        "h" => Some(3_600),')
    v = _verdict(new, "parse_duration: accept the h unit")
    assert v is not None and "line 1," in v.message


def test_comments_only():
    assert comments_only(Hunk(0, 3, 4, "# usage: a FILE\n", "# usage: a [-k N] FILE\n"))
    assert comments_only(Hunk(0, 3, 4, " * @param a\n", " * @param a\n * @param b\n"), "javascript")
    assert not comments_only(Hunk(0, 3, 4, "    *count += 1;\n", "    *count += 2;\n"), "rust")
    assert not comments_only(Hunk(0, 3, 4, "    *args,\n", "    *argv,\n"), "python")
    assert not comments_only(Hunk(0, 3, 4, "KEEP=5  # copies\n", "KEEP=7  # copies\n"))
    assert not comments_only(Hunk(0, 0, 2, "# one\n# two\n", "# one\n"))
    assert not comments_only(Hunk(0, 3, 4, 'echo "usage: a"\n', 'echo "usage: a [-k N]"\n'))
    assert not comments_only(Hunk(0, 3, 4, "#[derive(Debug)]\n", "#[derive(Clone)]\n"))


def test_called_reads_code_not_strings_and_skips_what_holds_the_named():
    src = Source(RUST, "duration.rs")
    named = [d for d in src.definitions if d.name == "parse_duration"]
    assert [d.name for d in called(src, named)] == ["unit_seconds"]
    py = Source(
        "class Headers:\n    def get(self, name):\n        return name\n\n"
        "    def content_length(self):\n        # get\n        return Headers.get(self, 'x')\n",
        "h.py",
    )
    named = [d for d in py.definitions if d.name == "Headers.content_length"]
    assert [d.name for d in called(py, named)] == ["Headers.get"]

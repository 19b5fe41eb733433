"""Two checks of where a change went: a config value set under a section the instruction
does not say (asked.section_other) and a top-level call of the file's own function that
is gone (entry.entry_gone). Each is tested on the change it flags, on the right change
beside it, and on the cases it lets through."""

from specedit.app.check.asked import section_other
from specedit.app.check.entry import entry_gone
from specedit.app.check.intent import read_intent
from specedit.app.code.source import Change, Source

DEPLOY = """{
  "environments": {
    "staging": {
      "replicas": 1,
      "autoscaling": {
        "minReplicas": 2,
        "maxReplicas": 4
      }
    },
    "production": {
      "replicas": 3,
      "autoscaling": {
        "minReplicas": 2,
        "maxReplicas": 8
      }
    }
  }
}
"""
STAGING = DEPLOY.replace('"minReplicas": 2', '"minReplicas": 4', 1)
PRODUCTION = DEPLOY.replace(
    '"minReplicas": 2,\n        "maxReplicas": 8', '"minReplicas": 4,\n        "maxReplicas": 8'
)


def _section(new: str, instruction: str, old: str = DEPLOY, path: str = "deploy.json"):
    return section_other(Change.of(old, new, path), read_intent(instruction, Source(old, path)))


def test_a_value_set_in_the_section_the_instruction_does_not_say():
    v = _section(STAGING, "production autoscaling: minReplicas 4")
    assert v.reason == "other_section"
    assert v.message == (
        "the result sets environments.staging.autoscaling.minReplicas (line 6); the "
        "instruction says production, and environments.production.autoscaling.minReplicas "
        "is left as it was"
    )


def test_the_right_section_and_an_instruction_saying_both_pass():
    assert _section(PRODUCTION, "production autoscaling: minReplicas 4") is None
    both = "Raise production's minReplicas to 4; everything under staging stays as it is."
    assert _section(PRODUCTION, both) is None
    # the wrong section, but one the instruction says: not this check's to tell
    assert _section(STAGING, both) is None
    # no section said at all: nothing to compare
    assert _section(STAGING, "minReplicas 4") is None


def test_toml_and_a_removal_and_other_files():
    toml = "[tool.a]\ntimeout = 5\n[tool.b]\ntimeout = 5\n"
    wrong = toml.replace("timeout = 5", "timeout = 9", 1)
    v = _section(wrong, "set the timeout of b to 9", toml, "pyproject.toml")
    assert (
        v.reason == "other_section" and "sets tool.a.timeout; the instruction says b," in v.message
    )
    assert (
        _section(toml.replace("timeout = 5\n", "", 1), "remove b's timeout", toml, "x.toml") is None
    )
    assert _section("x = 2\n", "in b, x = 2", "x = 1\n", "x.py") is None


SCRIPT = """#!/usr/bin/env bash
set -euo pipefail

main() {
  echo "checking"
  return 0
}

main "$@"
"""
PY = """def main():
    return 1


if __name__ == "__main__":
    main()
"""


def _entry(old: str, new: str, path: str, instruction: str = "exit 1 when a check fails"):
    return entry_gone(Change.of(old, new, path), read_intent(instruction, Source(old, path)))


def test_a_scripts_main_call_gone_is_flagged():
    new = SCRIPT.replace('  return 0\n}\n\nmain "$@"\n', "  exit 1\n}\n")
    v = _entry(SCRIPT, new, "check.sh")
    assert v.reason == "entry_gone"
    assert v.message == (
        'line 9, `main "$@"`, names main from outside every definition; the result still '
        "defines main and names it nowhere outside it"
    )
    guard = _entry(PY, PY.replace('\n\nif __name__ == "__main__":\n    main()\n', "\n"), "m.py")
    assert guard.reason == "entry_gone" and guard.message.startswith("line 5, `if __name__")


def test_a_call_kept_changed_renamed_or_asked_away_passes():
    changed = SCRIPT.replace('main "$@"', 'main "$@" || exit 1')
    assert _entry(SCRIPT, changed, "check.sh") is None
    renamed = SCRIPT.replace("main", "run")
    assert _entry(SCRIPT, renamed, "check.sh", "rename main to run") is None
    gone = SCRIPT.replace('\nmain "$@"\n', "")
    assert _entry(SCRIPT, gone, "check.sh", 'remove the call main "$@" at the end') is None
    # the body changed, the call stays
    assert _entry(SCRIPT, SCRIPT.replace("return 0", "return 1"), "check.sh") is None

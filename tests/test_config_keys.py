"""The keys a change removes from a config file (app.check.config_keys) and the check that says
so when nothing asked for a removal (checks.keys_removed)."""

from specedit.app.check.checks import keys_removed
from specedit.app.check.config_keys import removed_keys
from specedit.app.check.intent import read_intent
from specedit.app.code.source import Change, Source

YAML = """name: ci
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: test
        run: make test
volumes:
  data: {}
"""


def test_removed_keys_in_the_originals_order():
    new = YAML.replace("volumes:\n  data: {}\n", "").replace("name: ci\n", "")
    got = removed_keys(YAML, new, "ci.yml")
    assert [(k.dotted(), k.line) for k in got] == [("name", 0), ("volumes", 11)]
    # a list item added or reordered removes no key; ``on`` stays a string
    step = "      - uses: actions/checkout@v4\n"
    steps = YAML.replace(step, "").replace("make test\n", "make test\n" + step)
    assert removed_keys(YAML, steps, "ci.yml") == []
    assert removed_keys(YAML, YAML.replace("on:", "'on':"), "ci.yml") == []
    # a removed table is one entry
    toml = "[a]\nx = 1\n\n[b]\ny = 2\nz = 3\n"
    assert [k.path for k in removed_keys(toml, "[a]\nx = 1\n", "c.toml")] == [("b",)]
    assert removed_keys('{"a": 1}', '{"a": 1, "b": 2}', "p.json") == []
    assert removed_keys('{"a": 1}', '{"a": ', "p.json") is None  # no parse, no reading
    assert removed_keys("a = 1\n", "", "m.py") is None


def test_the_check_reads_whether_a_removal_was_asked():
    new = YAML.replace("volumes:\n  data: {}\n", "")
    add = read_intent("Add a lint job.", Source(YAML, "ci.yml"))
    v = keys_removed(Change.of(YAML, new, "ci.yml"), add)
    assert v.reason == "removed" and v.message == "the result no longer has volumes (line 12)"
    drop = read_intent("Remove the volumes.", Source(YAML, "ci.yml"))
    assert keys_removed(Change.of(YAML, new, "ci.yml"), drop) is None
    renamed = YAML.replace("volumes:", "stores:")
    ren = read_intent("Rename the key volumes to stores.", Source(YAML, "ci.yml"))
    assert keys_removed(Change.of(YAML, renamed, "ci.yml"), ren) is None

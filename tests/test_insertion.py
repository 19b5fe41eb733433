"""Additions the instruction states in full, made by the program (``app.insertion``), and
``auto`` making them with no model call (``app.stages.run_insert``).

The cases are the edit suite's additions and other shapes written for this test (a
package.json's last member, a numbered list, a .env line, an option inside a command), and
the instructions the program must leave to the model: a place said twice or not at all.
"""

from __future__ import annotations

import pytest
from scripted import scripted_loaded

from specedit.app.insertion import Addition, insert, read_addition
from specedit.app.options import RewriteOptions
from specedit.app.rewrite import rewrite
from specedit.bench.edit_tasks import TASK_SETS

PACKAGE = """{
  "name": "shop-api",
  "scripts": {
    "build": "tsc -p .",
    "test": "vitest run"
  },
  "dependencies": {
    "express": "^4.18.2",
    "pg": "^8.11.0"
  }
}
"""
DEPLOY = """# Deploying

## Deploy

1. Build the image.
2. Roll the service.

## Rollback

- Find the last good tag.
- Roll the service back to it,
  then check its health.

Done.
"""
TOML = '[project]\nname = "tally"\nversion = "0.4.2"\n\n[tool.ruff]\nversion = "x"\n'
SHELL = "pg_dump --no-owner --file=db.sql shop\n"


@pytest.mark.parametrize(
    "instruction, want",
    [
        (
            "Add the option --no-privileges to the pg_dump command, right after --no-owner.",
            Addition("--no-privileges", "--no-owner", None),
        ),
        (
            'In "scripts", add "lint": "eslint ." after "build".',
            Addition('"lint": "eslint ."', '"build"', "scripts"),
        ),
        (
            'In the features section, add "audit_log": true after "webhooks": true.',
            Addition('"audit_log": true', '"webhooks": true', "features"),
        ),
        (
            'Add the item "Tell the on-call channel." at the end of the list in "Rollback".',
            Addition("Tell the on-call channel.", None, "Rollback"),
        ),
        (
            'Add the item "docs updated" at the end of the pull request checklist.',
            Addition("docs updated", None, None, "pull request"),
        ),
        # more than the addition, or no place that reads as one: not an addition
        ("Add a parameter strict=False after file, and open the file with it.", None),
        ("Add a docstring to total_value.", None),
    ],
)
def test_an_addition_is_read_only_when_the_instruction_states_it_whole(instruction, want):
    assert read_addition(instruction) == want


@pytest.mark.parametrize(
    "text, path, instruction, old, new",
    [
        # a JSON member after another: its comma follows, or the anchor gets one
        (
            PACKAGE,
            "p.json",
            'In "dependencies", add "zod": "^3" after "express".',
            '"express": "^4.18.2",\n',
            '"express": "^4.18.2",\n    "zod": "^3",\n',
        ),
        (
            PACKAGE,
            "p.json",
            'In "scripts", add "lint": "eslint ." after "test".',
            '"test": "vitest run"\n',
            '"test": "vitest run",\n    "lint": "eslint ."\n',
        ),
        # a TOML key in the table named, not the other table's key of that name
        (
            TOML,
            "p.toml",
            'In [project], add license = "MIT" after version.',
            'version = "0.4.2"\n',
            'version = "0.4.2"\nlicense = "MIT"\n',
        ),
        # at the end of a list: the next number; after a continued item, its marker
        (
            DEPLOY,
            "D.md",
            'Add the step "Watch the error rate." at the end of the list in "Deploy".',
            "2. Roll the service.\n",
            "2. Roll the service.\n3. Watch the error rate.\n",
        ),
        (
            DEPLOY,
            "D.md",
            'Add the item "Tell on-call." at the end of the list in "Rollback".',
            "  then check its health.\n",
            "  then check its health.\n- Tell on-call.\n",
        ),
        # no key line: the one place the anchor stands as a word, inside its line
        (
            SHELL,
            "b.sh",
            "Add the option --no-privileges to the pg_dump command, right after --no-owner.",
            "--no-owner",
            "--no-owner --no-privileges",
        ),
        (
            "HOST=0.0.0.0\nPORT=8080\n",
            ".env",
            "Add LOG_LEVEL=debug after PORT=8080.",
            "PORT=8080\n",
            "PORT=8080\nLOG_LEVEL=debug\n",
        ),
    ],
)
def test_an_addition_goes_to_the_one_place_the_file_says(text, path, instruction, old, new):
    assert text.count(old) == 1
    assert insert(text, read_addition(instruction), path) == text.replace(old, new)


@pytest.mark.parametrize(
    "text, path, instruction",
    [
        (TOML, "p.toml", "Add license = 1 after version."),  # two tables have version
        (DEPLOY, "D.md", 'Add the item "x" at the end of the list in "Nowhere".'),
        (
            "# Notes\n\nNo list here.\n",
            "n.md",
            'Add the item "x" at the end of the list in "Notes".',
        ),
        ("a --x b --x\n", "b.sh", "Add --y after --x."),  # the anchor twice
        ('{"a": 1}\n', "p.json", 'Add "b": [ after "a".'),  # would not parse
    ],
)
def test_an_addition_with_no_one_place_is_left_to_the_model(text, path, instruction):
    add = read_addition(instruction)
    assert add is not None and insert(text, add, path) is None


def test_auto_makes_the_suites_additions_with_no_model_call():
    """Every addition of the edit suite and the held-out set is made by the program, right,
    with no prompt, under auto; --edit blocks still asks the model."""
    made = []
    for t in [t for ts in TASK_SETS.values() for t in ts]:
        if read_addition(t.instruction) is None:
            continue
        loaded = scripted_loaded([])
        opts = RewriteOptions(instruction=t.instruction, verbatim=False)
        res = rewrite(loaded, t.source(), opts, path=t.file)
        assert res.edit_mode == "insert" and loaded.target.prompts == [], t.name
        assert t.judge(res.new_text) and res.verdicts == [], t.name
        assert "made by the program" in res.stats.snapshot()["edit_reason"]
        made.append(t.name)
    assert sorted(made) == [
        "json-audit-flag",
        "json-format-script",
        "md-checklist-item",
        "md-release-item",
        "sh-no-privileges",
        "toml-cache-ttl",
    ]
    t = next(t for t in TASK_SETS["suite"] if t.name == "toml-cache-ttl")
    loaded = scripted_loaded([("Instruction:", "```\nno blocks\n```\n")])
    opts = RewriteOptions(instruction=t.instruction, verbatim=False, edit="blocks")
    res = rewrite(loaded, t.source(), opts, path=t.file)
    assert res.edit_mode == "blocks" and loaded.target.prompts

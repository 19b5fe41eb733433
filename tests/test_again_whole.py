"""A flagged blocks answer that no definition's round can mend is asked again whole
(app.edit.rounds.whole_again), with a scripted model: a config value set in the section
the instruction does not say, a script's call of its main gone; a Python answer flagged
with no definition to redo is not (its rounds are the definitions')."""

from __future__ import annotations

from scripted import scripted_loaded
from test_edit_modes import BLOCKS, WHOLE, block, blocks_answer, whole_answer

from specedit.app.code.syntax import language_name
from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions

AGAIN = "The checks found:"

DEPLOY = """{
  "environments": {
    "staging": {
      "autoscaling": {
        "minReplicas": 2
      }
    },
    "production": {
      "autoscaling": {
        "minReplicas": 2
      }
    }
  }
}
"""
RIGHT = DEPLOY[: DEPLOY.rindex('"minReplicas": 2')] + DEPLOY[
    DEPLOY.rindex('"minReplicas": 2') :
].replace("2", "4", 1)


STAGING = block(
    '    "staging": {\n      "autoscaling": {\n        "minReplicas": 2\n',
    '    "staging": {\n      "autoscaling": {\n        "minReplicas": 4\n',
)


def run(rules, instruction, text, path):
    """The scripted answers (written for Python) fenced as ``path``'s language."""
    lang = language_name(path)
    rules = [(k, a.replace("```python\n", f"```{lang}\n", 1)) for k, a in rules]
    loaded = scripted_loaded(rules)
    opts = RewriteOptions(instruction=instruction, verbatim=False)
    return rewrite(loaded, text, opts, path=path), loaded.target.prompts


def test_a_value_set_in_the_other_section_is_asked_again_whole():
    wrong = STAGING
    res, prompts = run(
        [(AGAIN, whole_answer(RIGHT)), (BLOCKS, blocks_answer(wrong))],
        "production autoscaling: minReplicas 4",
        DEPLOY,
        "deploy.json",
    )
    assert res.first_answer.index('"minReplicas": 4') < res.first_answer.index("production")
    assert len(prompts) == 2 and "the instruction says production" in prompts[1]
    assert res.new_text == RIGHT and res.suspect is None
    assert res.stats.snapshot()["edit_repairs"] == ["again"]


SCRIPT = 'main() {\n  echo "checking"\n  return 0\n}\n\nmain "$@"\n'


def test_a_scripts_main_call_dropped_is_asked_again_whole():
    drop = block('  return 0\n}\n\nmain "$@"\n', "  exit 1\n}\n")
    want = SCRIPT.replace("return 0", "exit 1")
    res, prompts = run(
        [(AGAIN, whole_answer(want)), (BLOCKS, blocks_answer(drop))],
        "exit 1 instead of returning 0 from main",
        SCRIPT,
        "check.sh",
    )
    assert 'main "$@"' not in res.first_answer
    assert len(prompts) == 2 and "names main from outside every definition" in prompts[1]
    assert res.new_text == want and res.suspect is None


def test_an_answer_no_better_the_second_time_stays_flagged():
    wrong = STAGING
    first_wrong = DEPLOY.replace('"minReplicas": 2', '"minReplicas": 4', 1)
    res, prompts = run(
        [(AGAIN, whole_answer(first_wrong)), (BLOCKS, blocks_answer(wrong))],
        "production autoscaling: minReplicas 4",
        DEPLOY,
        "deploy.json",
    )
    assert len(prompts) == 2 and res.new_text == first_wrong
    assert res.suspect.reason == "other_section"


def test_python_with_no_definition_to_redo_is_not_asked_again_whole():
    text = "LIMIT = 3\n\n\ndef f(x):\n    return x\n"
    wrong = block("LIMIT = 3\n", "LIMIT = 3\n")  # changes nothing: flagged unchanged
    res, prompts = run(
        [(AGAIN, whole_answer(text)), (BLOCKS, blocks_answer(wrong)), (WHOLE, whole_answer(text))],
        "Raise the limit to 5.",
        text,
        "m.py",
    )
    assert not any(AGAIN in p for p in prompts)

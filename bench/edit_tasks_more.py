"""More edit tasks, and the held-out set: data only, turned into ``EditTask``\\ s by
``bench/edit_tasks.py`` (which adds ``MORE`` to ``EDIT_TASKS`` and makes
``HOLDOUT_TASKS`` of ``HOLDOUT``).

Contract: each entry is the keyword arguments of one ``EditTask`` (``name``, ``kind``,
``file``, ``instruction`` and its exact answer: ``changes``, ``rename`` + ``scope`` or
``bug``). ``MORE`` widens the suite to other shapes and files: a condition, a return
value, an argument added to a call, a class attribute, a message, a default of a
dataclass-like class with a twin nearby, a method renamed with its calls in one class,
and few-line edits of non-Python files (``config``: JSON, TOML, shell; ``doc``:
Markdown). ``HOLDOUT`` has the same kinds on other files, none of them in ``MORE`` or
the first 24 tasks, plus a one-line change to a 2,056-line file (``big``). Nothing is
tuned on ``HOLDOUT``: it only checks that a gain measured on the suite holds elsewhere
(``specedit bench edits --set holdout``). This module imports nothing from
``edit_tasks``, so either may be imported first.
"""

from __future__ import annotations


def _t(name: str, kind: str, file: str, instruction: str, **kw) -> dict:
    return {"name": name, "kind": kind, "file": file, "instruction": instruction, **kw}


MORE: tuple[dict, ...] = (
    # one line: a condition, an argument, a class attribute, a message, a return value
    _t(
        "filecmp-cache-limit",
        "line",
        "filecmp.py",
        "In cmp(), clear the cache once it has reached 100 entries: change the test "
        "len(_cache) > 100 to len(_cache) >= 100.",
        changes=(("        if len(_cache) > 100:", "        if len(_cache) >= 100:"),),
    ),
    _t(
        "filecmp-demo-longopts",
        "line",
        "filecmp.py",
        "In demo(), pass ['recursive'] as a third argument to getopt.getopt.",
        changes=(
            (
                "getopt.getopt(sys.argv[1:], 'r')",
                "getopt.getopt(sys.argv[1:], 'r', ['recursive'])",
            ),
        ),
    ),
    _t(
        "csv-excel-skipspace",
        "line",
        "csv.py",
        "In the dialect class excel, change skipinitialspace from False to True.",
        # unix_dialect has the same line: only excel's changes
        changes=(
            (
                "    skipinitialspace = False\n    lineterminator = '\\r\\n'\n",
                "    skipinitialspace = True\n    lineterminator = '\\r\\n'\n",
            ),
        ),
    ),
    _t(
        "csv-fields-message",
        "line",
        "csv.py",
        'In DictWriter._dict_to_list, change the error message "dict contains fields not '
        'in fieldnames: " to "row has fields not in fieldnames: ".',
        changes=(
            (
                'raise ValueError("dict contains fields not in fieldnames: "',
                'raise ValueError("row has fields not in fieldnames: "',
            ),
        ),
    ),
    _t(
        "rlcompleter-tab",
        "line",
        "rlcompleter.py",
        "In Completer.complete, when readline is not available, return four spaces "
        "instead of a tab for a blank text.",
        changes=(("                    return '\\t'\n", "                    return '    '\n"),),
    ),
    _t(
        "hmac-blocksize",
        "line",
        "hmac.py",
        "Change the class attribute blocksize of HMAC from 64 to 128, and its comment to "
        "say 1024-bit HMAC.",
        changes=(
            (
                "    blocksize = 64  # 512-bit HMAC; can be changed in subclasses.\n",
                "    blocksize = 128  # 1024-bit HMAC; can be changed in subclasses.\n",
            ),
        ),
    ),
    # a local variable in one function
    _t(
        "rlcompleter-seen",
        "local",
        "rlcompleter.py",
        "In Completer.global_matches, rename the local variable seen to known.",
        rename=("seen", "known"),
        scope=("    def global_matches", "    def attr_matches"),
    ),
    _t(
        "fileinput-savestdout",
        "local",
        "fileinput.py",
        "In FileInput.nextfile, rename the local variable savestdout to saved_stdout.",
        rename=("savestdout", "saved_stdout"),
        scope=("    def nextfile", "    def readline"),
    ),
    # several places: a method and its calls in one class, one test in two functions
    _t(
        "code-resetbuffer",
        "two",
        "code.py",
        "In the class InteractiveConsole, rename the method resetbuffer to reset_buffer, in "
        "its definition and where the class calls it.",
        rename=("resetbuffer", "reset_buffer"),
        scope=("class InteractiveConsole", "def interact("),
    ),
    _t(
        "hmac-key-length",
        "two",
        "hmac.py",
        "Hash keys that are as long as the block size too: in HMAC._init_old and in the "
        "function digest, change len(key) > blocksize to len(key) >= blocksize.",
        changes=(
            ("        if len(key) > blocksize:", "        if len(key) >= blocksize:"),
            ("\n    if len(key) > blocksize:", "\n    if len(key) >= blocksize:"),
        ),
    ),
    # a new parameter, passed on
    _t(
        "code-interact-filename",
        "param",
        "code.py",
        'Add a parameter filename="<console>" at the end of the parameters of the module '
        "function interact, and pass it to InteractiveConsole as its second argument.",
        changes=(
            (
                "def interact(banner=None, readfunc=None, local=None, exitmsg=None):",
                'def interact(banner=None, readfunc=None, local=None, exitmsg=None, filename="<console>"):',
            ),
            (
                "    console = InteractiveConsole(local)\n",
                "    console = InteractiveConsole(local, filename)\n",
            ),
        ),
    ),
    # an obvious bug, planted
    _t(
        "fileinput-firstline-bug",
        "bug",
        "fileinput.py",
        "Fix the bug in FileInput.isfirstline: it must be true when the line just read is "
        "the first line of its file.",
        bug=("        return self._filelineno == 1\n", "        return self._filelineno == 0\n"),
    ),
    # non-Python files: a value, a key added, a flag, a sentence, a list item
    _t(
        "json-cache-pool",
        "config",
        "server-config.json",
        "In the cache section, raise the pool's max_size from 10 to 25.",
        changes=(('      "max_size": 10,\n', '      "max_size": 25,\n'),),
    ),
    _t(
        "json-audit-flag",
        "config",
        "server-config.json",
        'In the features section, add "audit_log": true after "webhooks": true.',
        changes=(
            (
                '    "webhooks": true,\n    "legacy_xml_export": false\n',
                '    "webhooks": true,\n    "audit_log": true,\n    "legacy_xml_export": false\n',
            ),
        ),
    ),
    _t(
        "toml-erp-timeout",
        "config",
        "settings.toml",
        "In [source.erp], change timeout_s from 30 to 45.",
        changes=(("timeout_s = 30\n", "timeout_s = 45\n"),),
    ),
    _t(
        "toml-cache-ttl",
        "config",
        "settings.toml",
        "In [target.cache], add ttl_s = 900 after key_prefix.",
        changes=(('key_prefix = "inv:"\n', 'key_prefix = "inv:"\nttl_s = 900\n'),),
    ),
    _t(
        "sh-coverage",
        "config",
        "build.sh",
        "Raise COVERAGE_MIN from 85 to 90.",
        changes=(("COVERAGE_MIN=85\n", "COVERAGE_MIN=90\n"),),
    ),
    _t(
        "sh-pipefail",
        "config",
        "build.sh",
        "Make the script fail when any command of a pipeline fails: change set -eu to "
        "set -euo pipefail.",
        changes=(("\nset -eu\n", "\nset -euo pipefail\n"),),
    ),
    _t(
        "md-first-review",
        "doc",
        "CONTRIBUTING.md",
        'In "Review process", change the sentence "We aim to give a first review within two '
        'working days." to "We aim to give a first review within one working day."',
        # the sentence spans two lines; only the second one changes
        changes=(
            (
                "review within two working days. Reviewers",
                "review within one working day. Reviewers",
            ),
        ),
    ),
    _t(
        "md-checklist-item",
        "doc",
        "CONTRIBUTING.md",
        'Add the item "the API documentation is updated for API changes" at the end of the '
        "pull request checklist.",
        changes=(
            (
                "- migrations are reversible and have been run against a copy of production data\n",
                "- migrations are reversible and have been run against a copy of production data\n"
                "- the API documentation is updated for API changes\n",
            ),
        ),
    ),
)


HOLDOUT: tuple[dict, ...] = (
    _t(
        "shelve-open-flag",
        "line",
        "shelve.py",
        "Change the default flag of the module function open from 'c' to 'r'.",
        # DbfilenameShelf.__init__ has the same default: only open's changes
        changes=(
            (
                "def open(filename, flag='c', protocol=None, writeback=False):",
                "def open(filename, flag='r', protocol=None, writeback=False):",
            ),
        ),
    ),
    _t(
        "tabnanny-verbose-level",
        "line",
        "tabnanny.py",
        'In check(), print "checking ..." from verbose level 1 on: change verbose > 1 to '
        "verbose >= 1.",
        changes=(("    if verbose > 1:\n", "    if verbose >= 1:\n"),),
    ),
    _t(
        "zipapp-entry-message",
        "line",
        "zipapp.py",
        'Change the error message "Archive has no entry point" to "Archive has no entry '
        'point: pass main or add a __main__.py".',
        changes=(
            (
                'raise ZipAppError("Archive has no entry point")',
                'raise ZipAppError("Archive has no entry point: pass main or add a __main__.py")',
            ),
        ),
    ),
    _t(
        "tabnanny-badline",
        "local",
        "tabnanny.py",
        "In check(), rename the local variable badline to bad_lineno.",
        rename=("badline", "bad_lineno"),
        scope=("def check", "class Whitespace"),
    ),
    _t(
        "tabnanny-longest-run",
        "two",
        "tabnanny.py",
        "In the class Whitespace, rename the method longest_run_of_spaces to "
        "longest_space_run, in its definition and its calls.",
        rename=("longest_run_of_spaces", "longest_space_run"),
        scope=("class Whitespace", "def format_witnesses"),
    ),
    _t(
        "zipapp-compresslevel",
        "param",
        "zipapp.py",
        "Add a parameter compresslevel=None at the end of the parameters of create_archive, "
        "and pass compresslevel=compresslevel to zipfile.ZipFile.",
        changes=(
            (
                "                   filter=None, compressed=False):",
                "                   filter=None, compressed=False, compresslevel=None):",
            ),
            (
                "zipfile.ZipFile(fd, 'w', compression=compression) as z:",
                "zipfile.ZipFile(fd, 'w', compression=compression, compresslevel=compresslevel) as z:",
            ),
        ),
    ),
    _t(
        "shelve-get-bug",
        "bug",
        "shelve.py",
        "Fix the bug in Shelf.get: it looks the key up when the key is missing, and returns "
        "the default when it is there.",
        bug=(
            "        if key.encode(self.keyencoding) in self.dict:\n",
            "        if key.encode(self.keyencoding) not in self.dict:\n",
        ),
    ),
    _t(
        "shelve-rename",
        "broad",
        "shelve.py",
        "Rename the class Shelf to ShelfBase everywhere, comments and docstrings included.",
        rename=("Shelf", "ShelfBase"),
    ),
    _t(
        "difflib-autojunk",
        "big",
        "difflib.py",
        "In SequenceMatcher.__init__, change the default of autojunk from True to False.",
        changes=(
            (
                "    def __init__(self, isjunk=None, a='', b='', autojunk=True):",
                "    def __init__(self, isjunk=None, a='', b='', autojunk=False):",
            ),
        ),
    ),
    _t(
        "ini-max-retries",
        "config",
        "worker.ini",
        "In [queue], change max_retries from 3 to 5.",
        changes=(("max_retries = 3\n", "max_retries = 5\n"),),
    ),
    _t(
        "json-low-stock",
        "config",
        "package.json",
        "Change the default of inventory.lowStockThreshold from 20 to 25.",
        changes=(('          "default": 20,\n', '          "default": 25,\n'),),
    ),
    _t(
        "json-format-script",
        "config",
        "package.json",
        'In "scripts", add "format": "prettier --write src" after "lint".',
        changes=(
            (
                '    "lint": "eslint src --ext ts",\n',
                '    "lint": "eslint src --ext ts",\n    "format": "prettier --write src",\n',
            ),
        ),
    ),
    _t(
        "sh-no-privileges",
        "config",
        "backup.sh",
        "Add the option --no-privileges to the pg_dump command, right after --no-owner.",
        changes=(("--no-owner --file=", "--no-owner --no-privileges --file="),),
    ),
    _t(
        "md-error-rate",
        "doc",
        "deploy-guide.md",
        'In "After a release", change the error rate threshold from 0.5% to 1%.',
        changes=(("rate should stay below 0.5% and", "rate should stay below 1% and"),),
    ),
    _t(
        "md-release-item",
        "doc",
        "deploy-guide.md",
        'Add the item "the on-call operator knows about the deployment" at the end of the '
        'list in "Before a release".',
        changes=(
            (
                "- nobody else is deploying (see the `#deployments` channel)\n",
                "- nobody else is deploying (see the `#deployments` channel)\n"
                "- the on-call operator knows about the deployment\n",
            ),
        ),
    ),
)

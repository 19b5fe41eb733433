"""What code binds and reads in JavaScript and shell (app.check.bindings.unbound): the names a
change reads that nothing in the file defines, and the check that says so
(checks.names_unbound). Python's half is in test_repair."""

from specedit.app.check.bindings import unbound
from specedit.app.check.checks import names_unbound, vouch
from specedit.app.check.intent import read_intent
from specedit.app.code.source import Change, Source

JS = """import { readFile } from 'node:fs/promises';
import * as path from 'node:path';

const DEFAULTS = { retries: 3 };

export async function load(file, { retries = DEFAULTS.retries, onError } = {}) {
  for (let attempt = 0; attempt < retries; attempt += 1) {
    try {
      const [head, ...rest] = (await readFile(path.resolve(file), 'utf8')).split('\\n');
      return { head, rest, attempt };
    } catch (err) {
      if (onError) onError(err);
    }
  }
  return helper(file);
}

function helper(name) {
  var found = name in cache ? cache[name] : undefined;
  return found ?? console.log(`no ${name}`);
}

var cache = {};
class Store {
  get(key) { return this.items.get(key) ?? missing(key); }
}
const missing = (key) => { throw new Error(key); };
"""


def test_javascript_scopes_declarations_and_globals():
    # parameters with defaults and destructuring, let in a for, catch, var hoisted to its
    # function, imports, a class, an arrow function bound after its use: all bound; globals
    # (console, Error, undefined) from the vendored list are not reported
    assert unbound(JS, "store.js") == set()
    # a let is bound in its loop only; a parameter of one function is not bound in another
    moved = JS.replace("return helper(file);", "return helper(file, attempt, onError);")
    assert unbound(moved, "store.js") == {"attempt"}
    moved = JS.replace("return found ??", "return onError(found) ??")
    assert unbound(moved, "store.js") == {"onError"}
    # a shorthand property reads its variable; a property name reads nothing
    assert unbound("const o = { a, b: c.d };\n", "o.js") == {"a", "c"}
    assert unbound("function f( {\n", "o.js") is None  # does not parse: nothing said


SH = """#!/usr/bin/env bash
set -euo pipefail
# DEST is where archives go
DEST="${DEST:-/var/backups}"
KEEP=7
usage() { echo "usage: $0 [-k N] DIR..." >&2; }
while getopts "k:" opt; do
  case "$opt" in
    k) KEEP="$OPTARG" ;;
    *) usage; exit 2 ;;
  esac
done
for dir in "$@"; do
  read -r size _ < <(du -s "$dir")
  local_count=$(( size / KEEP ))
  echo "$dir ${size} ${#dir} $HOME ${EXTRA:-none} $local_count"
done
"""


def test_shell_reads_and_assignments():
    # assignments, getopts, read, for; defaults (${X:-y}) and the shell's own variables
    # are safe reads
    assert unbound(SH, "backup.sh") == set()
    renamed = SH.replace('DEST="${DEST:-/var/backups}"', 'ROOT="${ROOT:-/var/backups}"')
    assert unbound(renamed + 'echo "$DEST"\n', "backup.sh") == {"DEST"}


def test_the_check_names_the_first_use_outside_comments():
    new = SH.replace('DEST="${DEST:-/var/backups}"', 'ROOT="${ROOT:-/var/backups}"')
    new += 'tar -C "$DEST" -czf out.tgz .\n'
    intent = read_intent("Rename DEST to ROOT in backup.sh.", Source(SH, "backup.sh"))
    v = names_unbound(Change.of(SH, new, "backup.sh"), intent)
    # the rename's old name is rename_left's to say; any other unbound name is this one's
    assert v is None
    intent = read_intent("Archive with tar at the end.", Source(SH, "backup.sh"))
    v = names_unbound(Change.of(SH, new, "backup.sh"), intent)
    assert v.reason == "unbound"
    assert v.message == "DEST (line 18) is used, but nothing in the file defines it"
    moved = JS.replace("return helper(file);", "return helper(file, attempt);").replace(
        "return found ??", "return onError(found) ??"
    )
    intent = read_intent("Pass more to helper.", Source(JS, "store.js"))
    (v,) = [x for x in vouch(Change.of(JS, moved, "store.js"), intent) if x.reason == "unbound"]
    assert v.message == (
        "attempt (line 15), onError (line 20) are used, but nothing in the file defines them"
    )

"""Check: run the edited module under node with a small driver; exit 0 when it behaves as asked."""

import subprocess
import sys
from pathlib import Path

PRELUDE = r"""
'use strict';
let m;
try {
  m = require(process.argv[2]);
} catch (e) {
  console.log('the module does not load: ' + String(e && e.message).split('\n')[0]);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) {
    console.log(msg);
    process.exit(1);
  }
}
function attempt(fn, what) {
  try {
    return fn();
  } catch (e) {
    console.log(what + ' threw: ' + String(e && e.message).split('\n')[0]);
    process.exit(1);
  }
}
function throws(fn) {
  try {
    fn();
  } catch (e) {
    return e || true;
  }
  return null;
}
"""

DRIVER = r"""
const { truncate, formatBytes } = m;
check(attempt(() => truncate(undefined, 10), 'truncate(undefined, 10)') === '', 'truncate(undefined, 10) does not give ""');
check(attempt(() => truncate(null, 10), 'truncate(null, 10)') === '', 'truncate(null, 10) does not give ""');
check(attempt(() => truncate('hello world', 5), 'truncate("hello world", 5)') === 'hell…', 'truncate("hello world", 5) no longer gives "hell…"');
check(attempt(() => truncate('hi', 5), 'truncate("hi", 5)') === 'hi', 'truncate("hi", 5) no longer gives "hi"');
check(attempt(() => truncate('', 3), 'truncate("", 3)') === '', 'truncate("", 3) no longer gives ""');
check(attempt(() => truncate('abc', 1), 'truncate("abc", 1)') === 'a', 'truncate("abc", 1) no longer gives "a"');
check(attempt(() => formatBytes(1536), 'formatBytes') === '1.5 KB', 'formatBytes changed');

console.log("OK");
"""


def main() -> int:
    path = Path(sys.argv[1]).resolve()
    driver = path.parent / "_check_driver.js"
    driver.write_text(PRELUDE + DRIVER, encoding="utf-8")
    try:
        done = subprocess.run(
            ["node", str(driver), str(path)],
            capture_output=True,
            text=True,
            timeout=20,
            cwd=path.parent,
        )
    except subprocess.TimeoutExpired:
        print("node ran over 20 s")
        return 1
    out = done.stdout.strip().splitlines()
    if done.returncode == 0 and out and out[-1] == "OK":
        return 0
    if out:
        print(out[0])
    else:
        err = [line for line in done.stderr.strip().splitlines() if line.strip()]
        print(next((line for line in err if "Error" in line), err[0] if err else "node failed"))
    return 1


if __name__ == "__main__":
    sys.exit(main())

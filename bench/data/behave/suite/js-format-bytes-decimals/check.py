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
const { formatBytes, truncate, formatDuration } = m;
check(attempt(() => formatBytes(1536), 'formatBytes(1536)') === '1.5 KB', 'formatBytes(1536) no longer gives "1.5 KB"');
check(attempt(() => formatBytes(500), 'formatBytes(500)') === '500 B', 'formatBytes(500) no longer gives "500 B"');
check(attempt(() => formatBytes(1536, 2), 'formatBytes(1536, 2)') === '1.50 KB', 'formatBytes(1536, 2) does not give "1.50 KB"');
check(attempt(() => formatBytes(1310720, 3), 'formatBytes(1310720, 3)') === '1.250 MB', 'formatBytes(1310720, 3) does not give "1.250 MB"');
check(attempt(() => formatBytes(1536, 0), 'formatBytes(1536, 0)') === '2 KB', 'formatBytes(1536, 0) does not give "2 KB"');
check(attempt(() => formatBytes(3 * 1024 ** 3, undefined), 'formatBytes(x, undefined)') === '3.0 GB', 'formatBytes(3 GiB, undefined) does not use the default of 1 decimal');
check(throws(() => formatBytes(-5)) !== null, 'formatBytes(-5) no longer throws');
check(attempt(() => truncate('hello world', 5), 'truncate') === 'hell…', 'truncate changed');
check(attempt(() => formatDuration(90061000), 'formatDuration') === '1d 1h 1m 1s', 'formatDuration changed');

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

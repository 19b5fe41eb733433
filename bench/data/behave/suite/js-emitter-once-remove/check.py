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
const { Emitter, waitFor } = m;
(async () => {
  const e = new Emitter();
  const seen = [];
  e.once('tick', (n) => seen.push(n));
  check(e.listenerCount('tick') === 1, 'once does not register the listener');
  check(e.emit('tick', 1) === true, 'emit with a once listener does not return true');
  e.emit('tick', 2);
  check(seen.length === 1 && seen[0] === 1, `a once listener ran ${seen.length} times for two events`);
  check(e.listenerCount('tick') === 0, 'a once listener is still registered after it ran');
  check(e.emit('tick', 3) === false, 'emit still finds listeners after the once listener ran');

  const f = new Emitter();
  const order = [];
  f.on('x', () => order.push('a'));
  f.once('x', () => order.push('b'));
  f.on('x', () => order.push('c'));
  f.emit('x');
  f.emit('x');
  check(order.join('') === 'abcac', `listeners ran as ${order.join('')}, not abcac`);

  const g = new Emitter();
  let calls = 0;
  const h = () => { calls += 1; };
  g.once('y', h);
  g.off('y', h);
  g.emit('y');
  check(calls === 0 && g.listenerCount('y') === 0, 'off with the original listener no longer removes a once registration');

  const w = new Emitter();
  const p = waitFor(w, 'ready');
  w.emit('ready', 7, 8);
  const args = await p;
  check(args.join(',') === '7,8', 'waitFor no longer resolves with the event arguments');
  check(w.listenerCount('ready') === 0 && w.listenerCount('error') === 0, 'waitFor leaves listeners behind');
  check(throws(() => w.emit('error', new Error('boom'))) !== null, 'an unhandled error event no longer throws');
})().then(
  () => console.log('OK'),
  (e) => {
    console.log('the check crashed: ' + String(e && e.message).split('\n')[0]);
    process.exit(1);
  },
);
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

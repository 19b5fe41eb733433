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
function stub() {
  const calls = [];
  return {
    calls,
    send(method, url, body, opts) {
      calls.push({ method, url, body, opts });
      return Promise.resolve({ status: 200, body: 'b' + calls.length });
    },
  };
}
(async () => {
  const t = stub();
  const c = m.createClient({ transport: t });
  check(c.timeoutMs === 10000, `the default timeoutMs is ${c.timeoutMs}, not 10000`);
  check(c.cacheTtlMs === 5000, `the default cacheTtlMs changed to ${c.cacheTtlMs}`);
  const want = { baseUrl: 'http://localhost:9400', retries: 3, retryDelayMs: 200, maxBatch: 500 };
  for (const [k, v] of Object.entries(want)) check(c[k] === v, `the default ${k} changed`);
  check(m.createClient({ transport: t, timeoutMs: 250 }).timeoutMs === 250, 'an explicit timeoutMs is ignored');
  const a = await m.get(c, '/v1/config', 1000);
  check(t.calls[0].opts && t.calls[0].opts.timeoutMs === 10000, 'get does not send with a 10000 ms timeout');
  const b = await m.get(c, '/v1/config', 5999);
  check(a === 'b1' && b === 'b1' && t.calls.length === 1, 'a cached response is no longer served for 5 seconds');
  const d = await m.get(c, '/v1/config', 6001);
  check(d === 'b2' && t.calls.length === 2, 'the cache no longer expires after 5 seconds');
  await m.sendBatch(c, [1, 2]);
  check(t.calls[2].opts.timeoutMs === 10000, 'sendBatch does not use the 10000 ms timeout');
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

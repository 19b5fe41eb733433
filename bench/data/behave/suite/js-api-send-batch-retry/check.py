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
function stub(plan) {
  const calls = [];
  return {
    calls,
    send(method, url, body, opts) {
      calls.push({ method, url, body, opts });
      const step = plan.length ? plan.shift() : 'ok';
      if (step === 'ok') return Promise.resolve({ status: 200, body: '{}' });
      const err = new Error('stub ' + step);
      if (typeof step === 'number') err.status = step;
      else err.code = step;
      return Promise.reject(err);
    },
  };
}
async function run(what, promise) {
  try {
    return { value: await promise };
  } catch (e) {
    return { error: e };
  }
}
(async () => {
  let t = stub(['ECONNRESET', 'ECONNRESET']);
  let c = m.createClient({ transport: t, retryDelayMs: 1 });
  let r = await run('sendBatch', m.sendBatch(c, [{ v: 1 }, { v: 2 }, { v: 3 }]));
  check(!r.error, 'sendBatch fails after two ECONNRESET errors: ' + (r.error && r.error.message));
  check(r.value === 3, 'sendBatch does not resolve to the number of points sent');
  check(t.calls.length === 3, `the transport was called ${t.calls.length} times for one batch that failed twice (expected 3)`);
  check(t.calls.every((x) => x.method === 'POST' && x.url === 'http://localhost:9400/v1/points'), 'sendBatch no longer POSTs to /v1/points');
  check(t.calls.every((x) => x.body === JSON.stringify([{ v: 1 }, { v: 2 }, { v: 3 }])), 'the retried batch body changed');

  t = stub(['ok', 503]);
  c = m.createClient({ transport: t, retryDelayMs: 1, maxBatch: 2 });
  r = await run('sendBatch', m.sendBatch(c, [1, 2, 3, 4, 5]));
  check(!r.error && r.value === 5, 'sendBatch does not recover from a 503 in its second batch');
  check(t.calls.length === 4, `expected 4 transport calls for 3 batches with one 503, got ${t.calls.length}`);
  check(t.calls[1].body === '[3,4]' && t.calls[2].body === '[3,4]' && t.calls[3].body === '[5]', 'batches are sent out of order after a retry');

  t = stub([400]);
  c = m.createClient({ transport: t, retryDelayMs: 1 });
  r = await run('sendBatch', m.sendBatch(c, [1]));
  check(r.error && r.error.status === 400, 'a 400 from the transport no longer rejects sendBatch');
  check(t.calls.length === 1, 'a non-retryable 400 is retried');

  t = stub(Array(50).fill('ETIMEDOUT'));
  c = m.createClient({ transport: t, retryDelayMs: 1, retries: 2 });
  r = await run('sendBatch', m.sendBatch(c, [1]));
  check(r.error && r.error.code === 'ETIMEDOUT', 'sendBatch does not give up when the transport keeps timing out');
  check(t.calls.length >= 2 && t.calls.length <= 6, `a batch that keeps timing out was tried ${t.calls.length} times`);

  t = stub([]);
  c = m.createClient({ transport: t });
  check((await m.get(c, '/v1/health', 0)) === '{}' && t.calls[0].method === 'GET', 'get changed');
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

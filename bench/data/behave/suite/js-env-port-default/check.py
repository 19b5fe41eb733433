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
const load = (env) => attempt(() => m.loadConfig(env), `loadConfig(${JSON.stringify(env)})`);
check(load({}).port === 3000, `loadConfig({}) gives port ${load({}).port}, not 3000`);
check(load({ PORT: '' }).port === 3000, 'an empty PORT does not give 3000');
check(load({ PORT: '8081' }).port === 8081, 'PORT=8081 no longer gives 8081');
check(load({ PORT: ' 9000 ' }).port === 9000, 'PORT=" 9000 " no longer gives 9000');
const e = throws(() => m.loadConfig({ PORT: '70000' }));
check(e && e.name === 'ConfigError', 'PORT=70000 is no longer rejected with a ConfigError');
check(throws(() => m.loadConfig({ PORT: '0' })) !== null, 'PORT=0 is no longer rejected');
check(attempt(() => m.parsePort('PORT', '8080'), 'parsePort("PORT", "8080")') === 8080, 'parsePort("PORT", "8080") no longer gives 8080');
const c = load({ WORKERS: '4', DEBUG: 'yes', ALLOWED_ORIGINS: 'a.example, b.example' });
const want = { host: '0.0.0.0', port: 3000, debug: true, logLevel: 'info', workers: 4, requestTimeoutMs: 15000, allowedOrigins: ['a.example', 'b.example'], databaseUrl: null };
for (const [k, v] of Object.entries(want)) check(JSON.stringify(c[k]) === JSON.stringify(v), `the ${k} setting changed: ${JSON.stringify(c[k])}`);
check(Object.keys(c).length === Object.keys(want).length, 'loadConfig returns different settings');

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

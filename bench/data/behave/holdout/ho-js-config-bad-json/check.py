"""Check for ho-js-config-bad-json: invalid JSON gives a ConfigError naming the file."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
const fs = require('fs');
const path = require('path');
const c = require(process.argv[2]);
const dir = process.argv[3];
const out = {};
const bad = path.join(dir, 'resizer-bad.json');
fs.writeFileSync(bad, '{"port": 9000,}');
try {
  c.loadConfig(bad, {});
  out.bad = { threw: false };
} catch (e) {
  out.bad = { threw: true, isConfigError: e instanceof c.ConfigError, name: e.name, message: String(e.message) };
}
const good = path.join(dir, 'resizer.json');
fs.writeFileSync(good, JSON.stringify({ port: 9000, cacheDir: 'cache' }));
const cfg = c.loadConfig(good, { RESIZER_CONCURRENCY: '8' });
out.good = { port: cfg.port, concurrency: cfg.concurrency, cacheDir: cfg.cacheDir, formats: cfg.formats };
out.dir = dir;
const arr = path.join(dir, 'arr.json');
fs.writeFileSync(arr, '[1, 2]');
try { c.loadConfig(arr, {}); out.arr = 'no error'; } catch (e) { out.arr = e instanceof c.ConfigError ? 'ConfigError' : e.name; }
try { c.loadConfig(path.join(dir, 'missing.json'), {}); out.missing = 'no error'; } catch (e) { out.missing = e instanceof c.ConfigError ? 'ConfigError' : (e.code || e.name); }
process.stdout.write(JSON.stringify(out));
"""


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def main() -> None:
    target = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.js"
        driver.write_text(DRIVER, encoding="utf-8")
        try:
            done = subprocess.run(
                ["node", str(driver), str(target), tmp], capture_output=True, text=True, timeout=20
            )
        except subprocess.TimeoutExpired:
            fail("node timed out")
    if done.returncode != 0:
        err = done.stderr.strip().splitlines() or ["?"]
        fail(f"node failed: {next((l for l in err if 'Error' in l), err[-1])}")
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        fail(f"driver printed {done.stdout[:200]!r}")
    bad = out["bad"]
    if not bad["threw"]:
        fail("loadConfig on invalid JSON did not throw")
    if not bad["isConfigError"]:
        fail(f"invalid JSON threw {bad['name']}, not ConfigError: {bad['message']}")
    if "resizer-bad.json" not in bad["message"]:
        fail(f"the ConfigError message does not name the file: {bad['message']!r}")
    good = out["good"]
    want_cache = str(Path(out["dir"]) / "cache")
    if (good["port"], good["concurrency"], good["formats"]) != (9000, 8, ["jpeg", "png", "webp"]):
        fail(f"loading a good file changed: {good!r}")
    if good["cacheDir"] != want_cache:
        fail(f"relative cacheDir resolved to {good['cacheDir']!r}")
    if out["arr"] != "ConfigError":
        fail(f"a JSON array no longer gives a ConfigError: {out['arr']!r}")
    if out["missing"] not in ("ENOENT", "ConfigError"):
        fail(f"a missing file gave {out['missing']!r}, expected an error as before")
    print("ok")


main()

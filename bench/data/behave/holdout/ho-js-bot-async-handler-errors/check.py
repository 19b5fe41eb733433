"""Check for ho-js-bot-async-handler-errors: dispatch handles async handlers like sync ones."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
const { CommandTable, builtins, COOLDOWN_MS } = require(process.argv[2]);
const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(String((e && e.message) || e)));
const log = { error() {}, warn() {}, info() {}, log() {} };
let t = 1000;
const table = builtins(new CommandTable({ log, now: () => t }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
table.register('deploy', async (ctx) => {
  await sleep(5);
  if (ctx.args[0] === 'prod') throw new Error('deploy API down');
  return `deployed to ${ctx.args[0]}`;
}, { admin: true, help: 'deploy a branch' });
table.register('oncall', async (ctx) => { await sleep(1); await ctx.reply('alice is on call'); });
table.register('fail', async () => { throw new Error('quota exceeded'); });

const admin = { id: 'u1', admin: true };
const guest = { id: 'u2', admin: false };
async function run(text, user = admin, wait = true) {
  const replies = [];
  if (wait) t += COOLDOWN_MS + 1;
  let handled;
  try {
    handled = await table.dispatch({ text, user, channel: '#ops' }, async (s) => { replies.push(s); });
  } catch (e) {
    handled = `dispatch rejected: ${(e && e.message) || e}`;
  }
  await sleep(30);
  return { handled, replies };
}

(async () => {
  const out = {};
  out.deploy = await run('!deploy staging');
  out.prod = await run('!deploy prod');
  out.fail = await run('!FAIL');
  out.oncall = await run('!oncall');
  out.ping = await run('!ping');
  out.again = await run('!ping', admin, false);
  out.roll = await run('!roll 1');
  out.echo = await run('!echo hi  there');
  out.unknown = await run('!nope');
  out.guest = await run('!deploy staging', guest);
  out.plain = await run('deploy staging');
  out.help = await run('!commands');
  await sleep(20);
  out.unhandled = unhandled;
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error('Error: driver: ' + e.message); process.exit(3); });
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
            done = subprocess.run(["node", str(driver), str(target)], capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            fail("node timed out")
    if done.returncode != 0:
        err = done.stderr.strip().splitlines() or ["?"]
        fail(f"node failed: {next((l for l in err if 'Error' in l), err[-1])}")
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        fail(f"driver printed {done.stdout[:200]!r}")
    for key, r in out.items():
        if isinstance(r, dict) and isinstance(r.get("handled"), str):
            fail(f"{r['handled']} (message {key!r})")
    if out["unhandled"]:
        fail(f"an async handler's error became an unhandled rejection: {out['unhandled'][0]}")
    if out["deploy"] != {"handled": True, "replies": ["deployed to staging"]}:
        fail(f"an async handler's returned text is not sent: {out['deploy']!r}")
    for key, msg in (("prod", "deploy API down"), ("fail", "quota exceeded")):
        r = out[key]
        if not r["handled"] or len(r["replies"]) != 1 or msg not in r["replies"][0]:
            fail(f"a failing async handler is not answered with its error: {r!r}")
    if out["oncall"]["replies"] != ["alice is on call"]:
        fail(f"an async handler that replies itself gave {out['oncall']['replies']!r}")
    if out["ping"]["replies"] != ["pong"] or out["again"] != {"handled": True, "replies": []}:
        fail(f"sync handlers or the cooldown changed: {out['ping']!r}, {out['again']!r}")
    roll = out["roll"]["replies"]
    if len(roll) != 1 or "sides" not in roll[0] or "roll" not in roll[0]:
        fail(f"a sync handler's error is answered with {roll!r}")
    if out["echo"]["replies"] != ["hi there"]:
        fail(f"!echo gave {out['echo']['replies']!r}")
    if len(out["unknown"]["replies"]) != 1 or "Unknown command" not in out["unknown"]["replies"][0]:
        fail(f"an unknown command gave {out['unknown']!r}")
    if len(out["guest"]["replies"]) != 1 or "admins only" not in out["guest"]["replies"][0]:
        fail(f"an admin command run by a guest gave {out['guest']!r}")
    if out["plain"] != {"handled": False, "replies": []}:
        fail(f"a plain message gave {out['plain']!r}")
    help_lines = out["help"]["replies"][0].split("\n") if out["help"]["replies"] else []
    if "!deploy - deploy a branch" not in help_lines or len(help_lines) != 7:
        fail(f"!help gave {out['help']['replies']!r}")
    print("ok")


main()

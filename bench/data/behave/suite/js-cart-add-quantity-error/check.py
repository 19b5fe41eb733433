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
const mug = { sku: 'MUG-1', name: 'Mug', price: 1250 };
const cart = attempt(() => m.createCart(), 'createCart');
attempt(() => m.addItem(cart, mug), 'addItem(cart, mug)');
attempt(() => m.addItem(cart, mug, 2), 'addItem(cart, mug, 2)');
check(cart.lines.length === 1 && cart.lines[0].quantity === 3, 'addItem no longer merges quantities of the same SKU');
const before = JSON.stringify(cart);
for (const bad of [-3, 0, 1.5, NaN, Infinity]) {
  check(throws(() => m.addItem(cart, mug, bad)) !== null, `addItem(cart, mug, ${bad}) does not throw`);
  check(JSON.stringify(cart) === before, `addItem(cart, mug, ${bad}) changed the cart before refusing`);
}
const other = { sku: 'TEA-2', name: 'Tea', price: 450 };
check(throws(() => m.addItem(cart, other, -1)) !== null, 'addItem with a new SKU and quantity -1 does not throw');
check(JSON.stringify(cart) === before, 'a refused new SKU was still added to the cart');
attempt(() => m.addItem(cart, other, 4), 'addItem(cart, tea, 4)');
check(m.subtotal(cart) === 3 * 1250 + 4 * 450, 'subtotal changed');

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

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
const pct = (value) => ({ type: 'percent', value });
const fixed = (value) => ({ type: 'fixed', value });
const ac = (amount, coupons) => attempt(() => m.applyCoupons(amount, coupons), `applyCoupons(${amount}, ${JSON.stringify(coupons)})`);
check(ac(10000, []) === 10000, 'applyCoupons with no coupons changed the amount');
check(ac(10000, [pct(10)]) === 9000, 'one 10% coupon no longer gives 9000 on 10000');
check(ac(10000, [pct(10), fixed(500)]) === 8500, '10% then 500 off 10000 does not give 8500');
check(ac(10000, [fixed(500), pct(10)]) === 8550, '500 off then 10% on 10000 does not give 8550 (coupons not applied in order on what is left)');
check(ac(10000, [fixed(4000), fixed(4000), fixed(4000)]) === 0, 'three 4000 vouchers on 10000 do not give 0');
check(ac(999, [pct(50), pct(50), pct(50)]) === 124, "three 50% coupons on 999 do not give 124");
check(throws(() => m.applyCoupons(100, [pct(5), { type: 'bogus', value: 1 }])) !== null, 'an unknown coupon type after the first is not rejected');
const cart = m.createCart();
m.addItem(cart, { sku: 'A', name: 'A', price: 2000 }, 5);
const t = attempt(() => m.totals(cart, { coupons: [pct(10), fixed(1000)] }), 'totals');
check(t.subtotal === 10000 && t.discount === 2000 && t.tax === 1600 && t.total === 9600, 'totals with two coupons is wrong: ' + JSON.stringify(t));

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

"""Check: compile a driver that includes the edited file as a module, run it; exit 0 when it behaves as asked."""

import subprocess
import sys
from pathlib import Path

PRELUDE = r"""
#[allow(dead_code, unused_imports, unused_variables)]
mod MODNAME;
#[allow(unused_imports)]
use MODNAME::*;

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            println!($($msg)+);
            std::process::exit(1);
        }
    };
}

fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            String::from("(no message)")
        };
        println!("the code panicked: {}", msg.lines().next().unwrap_or(""));
        std::process::exit(1);
    }));
}
"""

DRIVER = r"""
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
}

fn main() {
    install_hook();
    let v = [1.0, 2.0, 3.0, 4.0];
    let got = moving_average(&v, 2);
    check!(same(&got, &[1.5, 2.5, 3.5]), "moving_average([1,2,3,4], 2) gives {:?}, not [1.5, 2.5, 3.5]", got);
    let got = moving_average(&v, 4);
    check!(same(&got, &[2.5]), "moving_average([1,2,3,4], 4) gives {:?}, not [2.5]", got);
    let got = moving_average(&v, 1);
    check!(same(&got, &v), "moving_average(v, 1) gives {:?}, not v", got);
    check!(moving_average(&v, 5).is_empty(), "a window longer than the data gives averages");
    check!(moving_average(&v, 0).is_empty(), "a window of 0 gives averages");
    check!(moving_average(&[], 1).is_empty(), "no samples give averages");
    let got = moving_average(&[2.0, 4.0, 9.0, 1.0, 0.0], 3);
    check!(same(&got, &[5.0, 14.0 / 3.0, 10.0 / 3.0]), "moving_average(.., 3) gives {:?}", got);
    check!((percentile(&v, 50.0) - 2.5).abs() < 1e-9, "percentile changed");
    check!(histogram(&[1.0, 12.0, 15.0], 10.0) == vec![(0.0, 1), (10.0, 2)], "histogram changed");
    println!("OK");
}
"""


def main() -> int:
    path = Path(sys.argv[1]).resolve()
    tmp = path.parent
    driver = tmp / "check_driver.rs"
    driver.write_text(PRELUDE.replace("MODNAME", path.stem) + DRIVER, encoding="utf-8")
    binary = tmp / "check_driver_bin"
    try:
        built = subprocess.run(
            ["rustc", "--edition", "2021", "-A", "warnings", "-C", "debuginfo=0",
             "-o", str(binary), str(driver)],
            capture_output=True, text=True, timeout=120, cwd=tmp,
        )
    except subprocess.TimeoutExpired:
        print("rustc ran over 120 s")
        return 1
    if built.returncode != 0:
        errors = [line for line in built.stderr.splitlines() if line.startswith("error")]
        print("does not compile: " + (errors[0] if errors else built.stderr.strip()[:200]))
        return 1
    try:
        done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=20, cwd=tmp)
    except subprocess.TimeoutExpired:
        print("the driver ran over 20 s")
        return 1
    out = done.stdout.strip().splitlines()
    if done.returncode == 0 and out and out[-1] == "OK":
        return 0
    print(out[0] if out else f"the driver exited with {done.returncode}: {done.stderr.strip()[:200]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
